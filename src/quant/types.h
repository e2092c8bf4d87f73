// Tensor data types with GGUF's numbering, and their block geometry.
// Freestanding (no libc/STL): the device runtime and the host share it.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm {

enum class Type : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  MXFP4 = 39,
};

// Number of GGUF type ids (one past the largest id we may see in a file).
inline constexpr uint32_t kTypeIdLimit = 40;

struct TypeTraits {
  const char* name;      // GGUF/ggml spelling, e.g. "Q4_0"
  uint32_t block_size;   // elements per block (1 for plain types)
  uint32_t type_size;    // bytes per block
  bool quantized;
};

// Traits for a GGUF type id; nullptr for ids we do not support (named in errors by the caller).
const TypeTraits* type_traits_or_null(uint32_t id);

inline const TypeTraits& type_traits(Type t) { return *type_traits_or_null(static_cast<uint32_t>(t)); }
inline const char* type_name(Type t) { return type_traits(t).name; }
inline uint32_t block_size(Type t) { return type_traits(t).block_size; }
inline uint32_t type_size(Type t) { return type_traits(t).type_size; }
inline bool is_quantized(Type t) { return type_traits(t).quantized; }

// Bytes of a row of n elements; n must be a multiple of the block size.
inline size_t row_size(Type t, int64_t n) {
  const TypeTraits& tr = type_traits(t);
  return (size_t)(n / tr.block_size) * tr.type_size;
}

}  // namespace hexllm
