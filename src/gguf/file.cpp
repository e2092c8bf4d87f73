// Lookups and typed getters of a parsed GGUF file.
#include <cstring>
#include <limits>

#include "base/mapped_file.h"
#include "gguf/detail.h"
#include "gguf/gguf.h"

namespace hexllm::gguf {

using detail::quoted;

namespace {

std::string type_desc(const Value& v) {
  if (v.type == ValueType::ARRAY) return strprintf("ARRAY of %s", value_type_name(v.array_type));
  return value_type_name(v.type);
}

[[noreturn]] void wrong_type(const File& f, const KeyValue& kv, const char* expected) {
  detail::raise(f.name(), kv.offset, "key " + quoted(kv.key),
                strprintf("type %s, expected %s", type_desc(kv.value).c_str(), expected));
}

template <class T>
T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Element j of a numeric array as int64; false when it does not fit.
bool array_int(const Value& v, uint64_t j, int64_t* out) {
  const uint8_t* p = v.raw.data() + j * detail::scalar_size(v.array_type);
  switch (v.array_type) {
    case ValueType::UINT8: *out = load<uint8_t>(p); return true;
    case ValueType::INT8: *out = load<int8_t>(p); return true;
    case ValueType::UINT16: *out = load<uint16_t>(p); return true;
    case ValueType::INT16: *out = load<int16_t>(p); return true;
    case ValueType::UINT32: *out = load<uint32_t>(p); return true;
    case ValueType::INT32: *out = load<int32_t>(p); return true;
    case ValueType::INT64: *out = load<int64_t>(p); return true;
    case ValueType::UINT64: {
      const uint64_t u = load<uint64_t>(p);
      *out = static_cast<int64_t>(u);
      return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }
    default: return false;
  }
}

}  // namespace

const KeyValue* File::find(std::string_view key) const {
  for (const KeyValue& kv : kv_)
    if (kv.key == key) return &kv;
  return nullptr;
}

void File::drop_resident_pages(const void* data, size_t bytes) const {
  if (map_) map_->drop_resident_pages(data, bytes);
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<std::string> File::get_string(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->value.type != ValueType::STRING) wrong_type(*this, *kv, "STRING");
  return kv->value.str;
}

std::optional<int64_t> File::get_int(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (!kv->value.is_integer()) wrong_type(*this, *kv, "an integer");
  if (kv->value.type == ValueType::UINT64 &&
      kv->value.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    detail::raise(
        name_, kv->offset, "key " + quoted(kv->key),
        strprintf("value %llu does not fit in int64", static_cast<unsigned long long>(kv->value.u)));
  return kv->value.i;
}

std::optional<uint64_t> File::get_uint(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (!kv->value.is_integer()) wrong_type(*this, *kv, "a non-negative integer");
  if (detail::is_signed_type(kv->value.type) && kv->value.i < 0)
    detail::raise(name_, kv->offset, "key " + quoted(kv->key),
                  strprintf("value %lld is negative, expected a non-negative integer",
                            static_cast<long long>(kv->value.i)));
  return kv->value.u;
}

std::optional<double> File::get_float(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  const Value& v = kv->value;
  if (v.is_float()) return v.f;
  if (v.is_integer())
    return detail::is_signed_type(v.type) ? static_cast<double>(v.i) : static_cast<double>(v.u);
  wrong_type(*this, *kv, "a number");
}

std::optional<bool> File::get_bool(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->value.type != ValueType::BOOL) wrong_type(*this, *kv, "BOOL");
  return kv->value.u != 0;
}

const std::vector<std::string>* File::get_string_array(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return nullptr;
  if (kv->value.type != ValueType::ARRAY || kv->value.array_type != ValueType::STRING)
    wrong_type(*this, *kv, "ARRAY of STRING");
  return &kv->value.strings;
}

std::optional<std::vector<float>> File::get_float_array(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  const Value& v = kv->value;
  if (v.type != ValueType::ARRAY || !detail::is_float_type(v.array_type))
    wrong_type(*this, *kv, "ARRAY of FLOAT32 or FLOAT64");
  std::vector<float> out(v.array_len);
  if (v.array_type == ValueType::FLOAT32) {
    if (v.array_len > 0) std::memcpy(out.data(), v.raw.data(), v.array_len * sizeof(float));
  } else {
    for (uint64_t j = 0; j < v.array_len; ++j) out[j] = detail::to_float(load<double>(v.raw.data() + j * 8));
  }
  return out;
}

std::optional<std::vector<int64_t>> File::get_int_array(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  const Value& v = kv->value;
  if (v.type != ValueType::ARRAY || !detail::is_integer_type(v.array_type))
    wrong_type(*this, *kv, "ARRAY of an integer type");
  std::vector<int64_t> out(v.array_len);
  for (uint64_t j = 0; j < v.array_len; ++j)
    if (!array_int(v, j, &out[j]))
      detail::raise(name_, kv->offset, "key " + quoted(kv->key),
                    strprintf("element %llu does not fit in int64", static_cast<unsigned long long>(j)));
  return out;
}

}  // namespace hexllm::gguf
