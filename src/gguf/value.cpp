// Value type names, Value predicates and the error helpers shared by reader and getters.
#include <cstdio>

#include "gguf/detail.h"
#include "gguf/gguf.h"

namespace hexllm::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "UINT8";
    case ValueType::INT8: return "INT8";
    case ValueType::UINT16: return "UINT16";
    case ValueType::INT16: return "INT16";
    case ValueType::UINT32: return "UINT32";
    case ValueType::INT32: return "INT32";
    case ValueType::FLOAT32: return "FLOAT32";
    case ValueType::BOOL: return "BOOL";
    case ValueType::STRING: return "STRING";
    case ValueType::ARRAY: return "ARRAY";
    case ValueType::UINT64: return "UINT64";
    case ValueType::INT64: return "INT64";
    case ValueType::FLOAT64: return "FLOAT64";
  }
  return "UNKNOWN";
}

bool Value::is_integer() const { return detail::is_integer_type(type); }
bool Value::is_float() const { return detail::is_float_type(type); }

namespace detail {

std::string quoted(std::string_view s) {
  constexpr size_t kMaxShown = 96;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > kMaxShown)
    out += strprintf("...' (%zu bytes)", s.size());
  else
    out += "'";
  return out;
}

void raise(const std::string& file, uint64_t offset, const std::string& field, const std::string& problem) {
  throw FormatError(strprintf("%s: offset %llu: %s: %s", file.c_str(),
                              static_cast<unsigned long long>(offset), field.c_str(), problem.c_str()));
}

}  // namespace detail
}  // namespace hexllm::gguf
