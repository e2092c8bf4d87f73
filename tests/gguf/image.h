// Hand-assembled GGUF byte images for tests, built field by field from the spec and
// independent of gguf::Writer. pos() before an append gives the offset a reader must report.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace hexllm::gguf::test {

// Value type ids from the GGUF spec.
enum : uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kStr, kArr, kU64, kI64, kF64 };

class Image {
 public:
  size_t pos() const { return b_.size(); }
  std::vector<uint8_t>& bytes() { return b_; }
  const std::vector<uint8_t>& bytes() const { return b_; }

  template <class T>
  Image& put(T v) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof v);
    b_.insert(b_.end(), tmp, tmp + sizeof v);
    return *this;
  }
  Image& u8(uint8_t v) { return put(v); }
  Image& u32(uint32_t v) { return put(v); }
  Image& u64(uint64_t v) { return put(v); }
  Image& str(std::string_view s) {
    u64(s.size());
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Image& raw(std::initializer_list<uint8_t> v) {
    b_.insert(b_.end(), v.begin(), v.end());
    return *this;
  }
  Image& raw(const void* p, size_t n) {
    const uint8_t* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
  }
  Image& zeros(size_t n) {
    b_.insert(b_.end(), n, 0);
    return *this;
  }
  Image& pad_to(size_t align) { return zeros((align - b_.size() % align) % align); }

  // "GGUF", version, tensor_count, kv_count
  Image& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    raw({'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Image& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(kU32).u32(v); }
  Image& kv_str(std::string_view key, std::string_view v) { return str(key).u32(kStr).str(v); }
  // name, n_dims, ne..., type, offset
  Image& tensor(std::string_view name, std::initializer_list<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }

 private:
  std::vector<uint8_t> b_;
};

}  // namespace hexllm::gguf::test
