// What a session reports about itself, so the host sizes batches and layouts for it.
#pragma once

#include <stdint.h>

// How a session's DMA queues move data (docs/DESIGN.md §7, DMA queue); kernels run the same code in all modes.
enum htp_dma_mode : uint32_t {
  HTP_DMA_ASYNC = 0,      // copy engine works in the background, pop waits for completion
  HTP_DMA_INLINE = 1,     // copy at push time
  HTP_DMA_ZERO_COPY = 2,  // no copy: kernels read and write DDR through the popped pointers
  HTP_DMA_MODE_COUNT
};

// How the device's GEMM and GEMV want their matmuls planned (its kernel table's choice).
struct htp_gemm_prefs {
  uint32_t min_pass_rows;    // activation rows a GEMM pass over the weights should carry (0: any)
  uint32_t bf16_min_rows;    // act rows from which quantized matmuls take HTP_ACT_BF16 (0: never)
  uint32_t gemv_unit_bytes;  // weight bytes per GEMV (decode) unit (0: HTP_MM_GEMV_UNIT_BYTES)
  uint32_t reserved;         // 0
};

struct htp_hwinfo {
  uint32_t abi_version;
  uint32_t n_threads;
  uint32_t vtcm_size;    // bytes in the session's VTCM arena
  uint32_t dma_mode;     // htp_dma_mode
  uint64_t window_size;  // bytes of banks that may be mapped at once
  uint32_t max_tensors;  // tensors per batch
  uint32_t n_banks;
  htp_gemm_prefs gemm;
};
static_assert(sizeof(htp_hwinfo) == 48 && sizeof(htp_hwinfo) % 8 == 0, "htp_hwinfo layout");
