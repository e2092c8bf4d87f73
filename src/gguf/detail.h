// Helpers shared by the GGUF reader, the typed getters and the writer (not public API).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf.h"

namespace hexllm::gguf::detail {

static_assert(std::endian::native == std::endian::little, "GGUF is read by memcpy: little-endian hosts only");

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kMaxValueType = 12;   // FLOAT64
inline constexpr uint32_t kMaxDims = 4;
inline constexpr uint64_t kMaxKeyLength = 65535;  // spec: keys are at most 2^16-1 bytes
inline constexpr uint64_t kMaxTensorName = 64;    // spec: tensor names are at most 64 bytes
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr const char* kAlignmentKey = "general.alignment";

// Bytes of one element of a fixed-size value type; 0 for STRING, ARRAY and unknown ids.
inline size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL: return 1;
    case ValueType::UINT16:
    case ValueType::INT16: return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32: return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64: return 8;
    case ValueType::STRING:
    case ValueType::ARRAY: return 0;
  }
  return 0;
}

inline bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::UINT16:
    case ValueType::INT16:
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::UINT64:
    case ValueType::INT64: return true;
    default: return false;
  }
}

inline bool is_signed_type(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 || t == ValueType::INT64;
}

inline bool is_float_type(ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

// double -> float without undefined behaviour: out-of-range finite values become +-inf.
inline float to_float(double d) {
  constexpr double kMax = 3.4028234663852886e38;  // FLT_MAX
  if (d > kMax) return __builtin_inff();
  if (d < -kMax) return -__builtin_inff();
  return static_cast<float>(d);
}

// A name from an untrusted file, quoted for an error message: non-printable bytes escaped and
// long names cut, so a hostile key cannot flood or garble the message.
std::string quoted(std::string_view s);

// "NAME: offset N: FIELD: PROBLEM"
[[noreturn]] void raise(const std::string& file, uint64_t offset, const std::string& field,
                        const std::string& problem);

}  // namespace hexllm::gguf::detail
