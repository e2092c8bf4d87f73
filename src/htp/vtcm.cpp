#include "htp/vtcm.h"

#include "htp/platform/platform.h"

namespace hexllm::htp {

// Real VTCM is a single page aligned to its size; 64 KiB keeps every HVX/DMA alignment here.
constexpr uint32_t kVtcmAlign = 64u << 10;

htp_status vtcm_open(vtcm_arena* a, uint32_t size) {
  a->base = nullptr;
  a->size = 0;
  if (size == 0 || size > VTCM_MAX_SIZE) return HTP_ERR_INVALID_PARAMS;
  a->base = (uint8_t*)platform_mem_map(size, kVtcmAlign);
  if (a->base == nullptr) return HTP_ERR_INTERNAL;
  a->size = size;
  return HTP_OK;
}

void vtcm_close(vtcm_arena* a) {
  platform_mem_unmap(a->base, a->size);
  a->base = nullptr;
  a->size = 0;
}

}  // namespace hexllm::htp
