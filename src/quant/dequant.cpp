// Reference dequantization of whole rows: float types converted here, block types through the
// one per-block implementation (quant/dequant_blocks.h) that the device shares.
#include "quant/dequant.h"

#include <cstring>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/dequant_blocks.h"

namespace hexllm::quant {

void dequantize_row(Type type, const void* src, float* dst, int64_t n) {
  const TypeTraits* tr = type_traits_or_null(static_cast<uint32_t>(type));
  if (!tr) fail("dequantize_row: unknown type id %u", static_cast<unsigned>(type));
  if (n < 0 || n % tr->block_size != 0)
    fail("dequantize_row: %s: n = %lld is not a multiple of the block size %u", tr->name, (long long)n,
         tr->block_size);
  const int64_t nb = n / tr->block_size;
  switch (type) {
    case Type::F32:
      if (n) std::memcpy(dst, src, (size_t)n * sizeof(float));
      return;
    case Type::F16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; i++) dst[i] = fp16_to_fp32(h[i]);
      return;
    }
    case Type::BF16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; i++) dst[i] = bf16_to_fp32(h[i]);
      return;
    }
    default: break;
  }
  const dequant_blocks_fn blocks = dequant_blocks_for(static_cast<uint32_t>(type));
  if (blocks == nullptr) fail("dequantize_row: type %s is not supported", tr->name);
  blocks(static_cast<const uint8_t*>(src), dst, static_cast<uint64_t>(nb));
}

}  // namespace hexllm::quant
