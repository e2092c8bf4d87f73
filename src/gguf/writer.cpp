// GGUF v3 writer: header, metadata and tensor infos in insertion order, then tensor data
// aligned to general.alignment. Files are written to a temp file and renamed into place.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gguf/detail.h"
#include "gguf/gguf.h"

namespace hexllm::gguf {

using ull = unsigned long long;

struct Writer::PendingKV {
  std::string key;
  Value value;
};

struct Writer::PendingTensor {
  std::string name;
  Type type = Type::F32;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t nbytes = 0;
  std::vector<uint8_t> data;  // empty for lazy tensors
  FillFn fill;
};

namespace {

// Byte-counting front end over the output callback.
class Sink {
 public:
  explicit Sink(const std::function<void(const void*, size_t)>& out) : out_(out) {}
  void write(const void* p, size_t n) {
    if (n == 0) return;
    out_(p, n);
    pos_ += n;
  }
  void u32(uint32_t v) { write(&v, sizeof v); }
  void u64(uint64_t v) { write(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    write(s.data(), s.size());
  }
  void zeros(uint64_t n) {
    static const uint8_t kZeros[256] = {};
    while (n > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, sizeof kZeros));
      write(kZeros, k);
      n -= k;
    }
  }
  uint64_t pos() const { return pos_; }

 private:
  const std::function<void(const void*, size_t)>& out_;
  uint64_t pos_ = 0;
};

// Buffered writes to a file descriptor; I/O errors name the final path, not the temp file.
class FdWriter {
 public:
  FdWriter(int fd, const std::string& path) : fd_(fd), path_(path) { buf_.reserve(kBufSize); }
  void write(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    if (buf_.size() + n > kBufSize) flush();
    if (n >= kBufSize) {
      raw_write(b, n);
      return;
    }
    buf_.insert(buf_.end(), b, b + n);
  }
  void flush() {
    raw_write(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  static constexpr size_t kBufSize = 1 << 20;
  void raw_write(const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0) {
        if (errno == EINTR) continue;
        fail("%s: write failed: %s", path_.c_str(), std::strerror(errno));
      }
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  int fd_;
  const std::string& path_;
  std::vector<uint8_t> buf_;
};

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

void write_value(Sink& s, const Value& v) {
  s.u32(static_cast<uint32_t>(v.type));
  switch (v.type) {
    case ValueType::STRING: s.str(v.str); return;
    case ValueType::ARRAY:
      s.u32(static_cast<uint32_t>(v.array_type));
      s.u64(v.array_len);
      if (v.array_type == ValueType::STRING) {
        for (const std::string& e : v.strings) s.str(e);
      } else {
        s.write(v.raw.data(), v.raw.size());
      }
      return;
    case ValueType::UINT8:
    case ValueType::UINT16:
    case ValueType::UINT32:
    case ValueType::UINT64:
    case ValueType::BOOL:
      s.write(&v.u, detail::scalar_size(v.type));  // little-endian: the low bytes come first
      return;
    case ValueType::INT8:
    case ValueType::INT16:
    case ValueType::INT32:
    case ValueType::INT64: s.write(&v.i, detail::scalar_size(v.type)); return;
    case ValueType::FLOAT32: {
      const float f = detail::to_float(v.f);
      s.write(&f, sizeof f);
      return;
    }
    case ValueType::FLOAT64: s.write(&v.f, sizeof v.f); return;
  }
}

// Rejects a Value the writer could not serialize faithfully (hand-built or copied values).
void check_value(const std::string& key, const Value& v) {
  const uint32_t t = static_cast<uint32_t>(v.type);
  if (t > detail::kMaxValueType) fail("gguf writer: key '%s': unknown value type %u", key.c_str(), t);
  if (v.type != ValueType::ARRAY) {
    // Integers are written from the low bytes of u or i: the value must fit the declared type.
    const size_t bits = detail::scalar_size(v.type) * 8;
    bool fits = true;
    if (v.type == ValueType::BOOL) {
      fits = v.u <= 1;
    } else if (detail::is_integer_type(v.type) && bits < 64) {
      fits = detail::is_signed_type(v.type)
                 ? (v.i >= -(int64_t{1} << (bits - 1)) && v.i < (int64_t{1} << (bits - 1)))
                 : v.u < (uint64_t{1} << bits);
    }
    if (!fits) fail("gguf writer: key '%s': value does not fit %s", key.c_str(), value_type_name(v.type));
    return;
  }
  const uint32_t e = static_cast<uint32_t>(v.array_type);
  if (e > detail::kMaxValueType || v.array_type == ValueType::ARRAY)
    fail("gguf writer: key '%s': unsupported array element type %u", key.c_str(), e);
  if (v.array_type == ValueType::STRING) {
    if (v.strings.size() != v.array_len)
      fail("gguf writer: key '%s': array_len %llu but %zu strings", key.c_str(), (ull)v.array_len,
           v.strings.size());
  } else if (v.raw.size() / detail::scalar_size(v.array_type) != v.array_len ||
             v.raw.size() % detail::scalar_size(v.array_type) != 0) {
    fail("gguf writer: key '%s': array_len %llu of %s needs %llu bytes, raw holds %zu", key.c_str(),
         (ull)v.array_len, value_type_name(v.array_type),
         (ull)(v.array_len * detail::scalar_size(v.array_type)), v.raw.size());
  } else if (v.array_type == ValueType::BOOL) {
    for (uint8_t b : v.raw)
      if (b > 1) fail("gguf writer: key '%s': bool array element %u is neither 0 nor 1", key.c_str(), b);
  }
}

template <class T>
Value make_array(ValueType elem, const std::vector<T>& v) {
  Value out;
  out.type = ValueType::ARRAY;
  out.array_type = elem;
  out.array_len = v.size();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
  out.raw.assign(p, p + v.size() * sizeof(T));
  return out;
}

std::atomic<unsigned> g_temp_counter{0};

}  // namespace

// --- metadata --------------------------------------------------------------------------------

// Setting an existing key replaces its value in place (its position is kept).
void Writer::put(const std::string& key, Value v) {
  if (key.size() > detail::kMaxKeyLength)
    fail("gguf writer: key of %zu bytes exceeds the limit of %llu", key.size(), (ull)detail::kMaxKeyLength);
  check_value(key, v);
  for (auto& kv : kvs_)
    if (kv->key == key) {
      kv->value = std::move(v);
      return;
    }
  kvs_.push_back(std::make_shared<PendingKV>(PendingKV{key, std::move(v)}));
}

namespace {
// Widened like the reader does: i for unsigned values that fit int64, u for non-negative ones.
Value unsigned_value(ValueType t, uint64_t x) {
  Value v;
  v.type = t;
  v.u = x;
  if (x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v.i = static_cast<int64_t>(x);
  return v;
}
Value signed_value(ValueType t, int64_t x) {
  Value v;
  v.type = t;
  v.i = x;
  if (x >= 0) v.u = static_cast<uint64_t>(x);
  return v;
}
Value float_value(ValueType t, double x) {
  Value v;
  v.type = t;
  v.f = x;
  return v;
}
}  // namespace

void Writer::set_u8(const std::string& key, uint8_t v) { put(key, unsigned_value(ValueType::UINT8, v)); }
void Writer::set_i8(const std::string& key, int8_t v) { put(key, signed_value(ValueType::INT8, v)); }
void Writer::set_u16(const std::string& key, uint16_t v) { put(key, unsigned_value(ValueType::UINT16, v)); }
void Writer::set_i16(const std::string& key, int16_t v) { put(key, signed_value(ValueType::INT16, v)); }
void Writer::set_u32(const std::string& key, uint32_t v) { put(key, unsigned_value(ValueType::UINT32, v)); }
void Writer::set_i32(const std::string& key, int32_t v) { put(key, signed_value(ValueType::INT32, v)); }
void Writer::set_u64(const std::string& key, uint64_t v) { put(key, unsigned_value(ValueType::UINT64, v)); }
void Writer::set_i64(const std::string& key, int64_t v) { put(key, signed_value(ValueType::INT64, v)); }
void Writer::set_f32(const std::string& key, float v) { put(key, float_value(ValueType::FLOAT32, v)); }
void Writer::set_f64(const std::string& key, double v) { put(key, float_value(ValueType::FLOAT64, v)); }
void Writer::set_bool(const std::string& key, bool v) {
  put(key, unsigned_value(ValueType::BOOL, v ? 1 : 0));
}

void Writer::set_string(const std::string& key, const std::string& v) {
  Value val;
  val.type = ValueType::STRING;
  val.str = v;
  put(key, std::move(val));
}

void Writer::set_string_array(const std::string& key, const std::vector<std::string>& v) {
  Value val;
  val.type = ValueType::ARRAY;
  val.array_type = ValueType::STRING;
  val.array_len = v.size();
  val.strings = v;
  put(key, std::move(val));
}

void Writer::set_f32_array(const std::string& key, const std::vector<float>& v) {
  put(key, make_array(ValueType::FLOAT32, v));
}

void Writer::set_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  put(key, make_array(ValueType::INT32, v));
}

void Writer::copy_kv(const KeyValue& kv) { put(kv.key, kv.value); }

// --- tensors ---------------------------------------------------------------------------------

namespace {

// Validates name and shape like the reader does and returns the byte size.
uint64_t tensor_bytes(const std::string& name, Type type, std::span<const int64_t> ne) {
  if (name.size() > detail::kMaxTensorName)
    fail("gguf writer: tensor '%s': name is %zu bytes, the limit is %llu", name.c_str(), name.size(),
         (ull)detail::kMaxTensorName);
  const TypeTraits* tr = type_traits_or_null(static_cast<uint32_t>(type));
  if (tr == nullptr)
    fail("gguf writer: tensor '%s': unknown type %u", name.c_str(), static_cast<uint32_t>(type));
  if (ne.empty() || ne.size() > detail::kMaxDims)
    fail("gguf writer: tensor '%s': %zu dimensions (must be 1..4)", name.c_str(), ne.size());
  for (size_t d = 0; d < ne.size(); ++d)
    if (ne[d] <= 0) fail("gguf writer: tensor '%s': ne[%zu] = %lld", name.c_str(), d, (long long)ne[d]);
  if (ne[0] % tr->block_size != 0)
    fail("gguf writer: tensor '%s': ne[0] = %lld is not a multiple of the block size %u of %s", name.c_str(),
         (long long)ne[0], tr->block_size, tr->name);
  uint64_t nbytes = static_cast<uint64_t>(ne[0]) / tr->block_size * tr->type_size;
  uint64_t n = static_cast<uint64_t>(ne[0]);
  for (size_t d = 1; d < ne.size(); ++d)
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(ne[d]), &nbytes) ||
        __builtin_mul_overflow(n, static_cast<uint64_t>(ne[d]), &n) ||
        n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("gguf writer: tensor '%s': size overflows", name.c_str());
  return nbytes;
}

}  // namespace

void Writer::add_tensor(const std::string& name, Type type, std::span<const int64_t> ne, const void* data) {
  if (data == nullptr) fail("gguf writer: tensor '%s': no data", name.c_str());
  add_tensor_lazy(name, type, ne, [](uint8_t*, size_t) {});  // validates and registers
  PendingTensor& t = *tensors_.back();
  t.fill = nullptr;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  t.data.assign(p, p + t.nbytes);
}

void Writer::add_tensor_lazy(const std::string& name, Type type, std::span<const int64_t> ne, FillFn fill) {
  const uint64_t nbytes = tensor_bytes(name, type, ne);
  if (!fill) fail("gguf writer: tensor '%s': empty fill function", name.c_str());
  for (const auto& t : tensors_)
    if (t->name == name) fail("gguf writer: duplicate tensor name '%s'", name.c_str());
  auto t = std::make_shared<PendingTensor>();
  t->name = name;
  t->type = type;
  t->n_dims = static_cast<uint32_t>(ne.size());
  std::copy(ne.begin(), ne.end(), t->ne);
  t->nbytes = nbytes;
  t->fill = std::move(fill);
  tensors_.push_back(std::move(t));
}

// --- output ----------------------------------------------------------------------------------

void Writer::emit(const std::function<void(const void*, size_t)>& out) const {
  uint64_t alignment = detail::kDefaultAlignment;
  for (const auto& kv : kvs_) {
    if (kv->key != detail::kAlignmentKey) continue;
    if (kv->value.type != ValueType::UINT32)
      fail("gguf writer: key '%s' has type %s, expected UINT32", detail::kAlignmentKey,
           value_type_name(kv->value.type));
    alignment = kv->value.u;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      fail("gguf writer: key '%s' = %llu is not a nonzero power of two", detail::kAlignmentKey,
           (ull)alignment);
  }

  Sink s(out);
  s.u32(detail::kMagic);
  s.u32(3);
  s.u64(tensors_.size());
  s.u64(kvs_.size());
  for (const auto& kv : kvs_) {
    s.str(kv->key);
    write_value(s, kv->value);
  }
  std::vector<uint64_t> offsets;
  offsets.reserve(tensors_.size());
  uint64_t end = 0;
  for (const auto& t : tensors_) {
    offsets.push_back(align_up(end, alignment));
    end = offsets.back() + t->nbytes;
    s.str(t->name);
    s.u32(t->n_dims);
    for (uint32_t d = 0; d < t->n_dims; ++d) s.u64(static_cast<uint64_t>(t->ne[d]));
    s.u32(static_cast<uint32_t>(t->type));
    s.u64(offsets.back());
  }
  if (tensors_.empty()) return;  // no data section: the file ends after the metadata

  // Padding between tensors only: the last tensor ends the file.
  const uint64_t data_start = align_up(s.pos(), alignment);
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = *tensors_[i];
    s.zeros(data_start + offsets[i] - s.pos());
    if (t.fill) {
      buf.assign(t.nbytes, 0);
      t.fill(buf.data(), buf.size());
      s.write(buf.data(), buf.size());
    } else {
      s.write(t.data.data(), t.data.size());
    }
  }
}

std::vector<uint8_t> Writer::to_bytes() const {
  std::vector<uint8_t> out;
  emit([&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void Writer::write(const std::string& path) const {
  const std::string tmp =
      strprintf("%s.tmp.%d.%u", path.c_str(), static_cast<int>(::getpid()), g_temp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail("%s: cannot create temp file %s: %s", path.c_str(), tmp.c_str(), std::strerror(errno));
  bool open_fd = true;
  try {
    FdWriter w(fd, path);
    emit([&](const void* p, size_t n) { w.write(p, n); });
    w.flush();
    if (::fsync(fd) != 0) fail("%s: fsync failed: %s", path.c_str(), std::strerror(errno));
    open_fd = false;
    if (::close(fd) != 0) fail("%s: close failed: %s", path.c_str(), std::strerror(errno));
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      fail("%s: cannot rename %s into place: %s", path.c_str(), tmp.c_str(), std::strerror(errno));
  } catch (...) {
    if (open_fd) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace hexllm::gguf
