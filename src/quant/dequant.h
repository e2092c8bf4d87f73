// Reference dequantization: scalar and written to be read against the format definitions.
#pragma once

#include <stdint.h>

#include "quant/types.h"

namespace hexllm::quant {

// Converts n elements (a multiple of the block size) of `type` to float.
// Supports F32, F16, BF16 and every quantized type of blocks.h; throws hexllm::Error otherwise.
void dequantize_row(Type type, const void* src, float* dst, int64_t n);

}  // namespace hexllm::quant
