// Weight repacking GGUF rows <-> 8-row tiles (layouts in htp/abi/tiles.h).
// Freestanding: the host repacks at load time, the device may unpack for checks, and the
// generic kernels decode tiles through vec_tile_decode.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/tiles.h"

namespace hexllm::htp {

// Repacks row tiles [tile_begin, tile_end) of a matrix with nrows rows of k elements of the
// tile type's GGUF type; row i starts at src + i * src_row_stride (bytes). dst is the base of
// the whole tiled matrix (htp_tiled_size bytes). Ranges let the host split the work on threads.
// Returns false (writing nothing) for an invalid tile type, K or range.
bool vec_repack_tiles(uint32_t tile_type, const void* src, size_t src_row_stride, uint32_t nrows, uint32_t k,
                      uint32_t tile_begin, uint32_t tile_end, void* dst);

inline bool vec_repack(uint32_t tile_type, const void* src, size_t src_row_stride, uint32_t nrows, uint32_t k,
                       void* dst) {
  return vec_repack_tiles(tile_type, src, src_row_stride, nrows, k, 0, htp_tile_count(nrows), dst);
}

// Inverse of vec_repack: writes nrows GGUF rows (row i at dst + i * dst_row_stride).
bool vec_unpack(uint32_t tile_type, const void* tiles, uint32_t nrows, uint32_t k, void* dst,
                size_t dst_row_stride);

// The content of one quantized block of one row, decoded from GGUF or from a tile.
struct vec_qblock {
  uint8_t q[256];  // integer codes in element order (Q8_0: int8 bit patterns)
  uint16_t d;      // f16 bits (MXFP4: unused)
  uint16_t m;      // f16 bits: Q4_1/Q5_1 min, K-quant dmin
  uint8_t sc[16];  // sub-block scales (Q6_K: int8 bit patterns)
  uint8_t mn[16];  // sub-block mins (Q4_K/Q5_K)
  uint8_t e;       // MXFP4 e8m0 exponent
};

// Decodes block tile `blk` of quantized tile type t into its 8 rows.
void vec_tile_decode(uint32_t tile_type, const uint8_t* blk, vec_qblock rows[kHtpTileRows]);

}  // namespace hexllm::htp
