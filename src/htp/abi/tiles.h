// Repacked weight tiles: the layout MUL_MAT weights take in the pool after the host repacks them
// once at load time. Shared by host and device (freestanding: only <stdint.h>/<stddef.h>).
//
// A weight matrix of `nrows` rows of K elements becomes ceil(nrows / 8) ROW TILES of 8 rows.
// A row tile is a sequence of BLOCK TILES, one per K-block (32 elements, 256 for K-quants);
// block tile b covers elements [b*KB, (b+1)*KB) of all 8 rows and is htp_tile_info(type).block_bytes
// bytes long. Row tiles are contiguous: row tile t starts at t * htp_tile_row_bytes(type, K).
//
// Inside a block tile, values are interleaved for 8-row SIMD dot products: "group g" is the 4
// consecutive elements [4g, 4g+4) of the block, and a 32-byte GROUP VECTOR holds group g of the
// 8 rows: byte 4*r + j = element 4g+j of row r. One maddubs/vrmpy of a group vector with 4
// activation bytes broadcast to every lane gives 8 row partial sums at once.
//
// Integer codes are unsigned (0..15, 0..31, 0..63) except Q8_0; the zero-point (-8, -16, -32)
// is applied by the kernels through the activation block sums, so no sign trick is needed.
// Scales stay in their GGUF encoding (f16 bits, e8m0 bytes), one per row, 8 in a row:
// keeping them small keeps decode (memory-bound) fast. Only the 6-bit Q4_K/Q5_K scales and mins
// are widened to bytes (+2.8% size) so the kernels need no bit unpacking for them.
//
// Byte layouts of one block tile (offsets in bytes, r = row 0..7):
//
//   F32   [32 k][8 r] f32                                                          1024
//   F16   [32 k][8 r] f16 bits                                                      512
//   BF16  [32 k][8 r] bf16 bits                                                     512
//   Codes come in CHUNKS, one per sub-block, so a tile is read front to back:
//     NIB vector v (32 B): byte 4r+j = code of (group 2v, elem j) low | (group 2v+1, elem j) high
//     H5 vector  (32 B): byte 4r+j bit i = bit 4 of (group i of the 32-element chunk, elem j)
//     H6 vector  (32 B): byte 4r+j bits 2i,2i+1 = bits 4,5 of (group i of the 16-element chunk, elem j)
//     chunk4 = 4 NIB (32 elements, 128 B); chunk5 = 4 NIB + H5 (160 B); chunk6 = 2 NIB + H6 (16, 96 B)
//   Q4_0   0 chunk4 (x = d*(q-8)) | 128 d[8] f16                                     144
//   Q4_1   0 chunk4 | 128 d[8] f16 | 144 m[8] f16 (x = d*q + m)                        160
//   Q5_0   0 chunk5 | 160 d[8] f16 (x = d*(q-16))                                     176
//   Q5_1   0 chunk5 | 160 d[8] f16 | 176 m[8] f16                                      192
//   Q8_0   0 group vectors g=0..7, int8 at 32*g + 4r + j | 256 d[8] f16                272
//   IQ4_NL 0 chunk4 (codes index kIq4nlValues) | 128 d[8] f16                          144
//   MXFP4  0 chunk4 (codes index kMxfp4Values) | 128 e[8] e8m0 bytes                   136
//   Q4_K   0 chunk4 x 8 | 1024 SC | 1088 MN | 1152 d[8] f16 | 1168 dmin[8] f16           1184
//   Q5_K   0 chunk5 x 8 | 1280 SC | 1344 MN | 1408 d[8] f16 | 1424 dmin[8] f16           1440
//          SC/MN: per sub-block pair p (0..3), 16 bytes at 16*p: byte 2r = value of sub-block 2p,
//          byte 2r+1 = sub-block 2p+1 (uint8 6-bit scale / min of row r). x = d*sc*q - dmin*m
//   Q6_K   0 chunk6 x 16 | 1536 SC6 (as SC, 8 pairs, int8) | 1664 d[8] f16              1680
//          x = d*sc*(q-32)
//
// Padding: rows past nrows in the last row tile, and (float types only) elements past K up to
// the next multiple of 32, are all-zero bytes. Every field zero makes every value exactly 0
// in every format, so padded rows compute 0 and kernels simply do not store them.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/htp_type_ids.h"

namespace hexllm::htp {

// Tile type ids continue the GGUF numbering from 200 up (DESIGN.md §4). The "_x8" ids are the
// 8-row layouts above; other layouts (e.g. 32-row HVX tiles) get new ids.
enum htp_tile_type : uint32_t {
  HTP_TILE_Q4_0_X8 = 200,
  HTP_TILE_Q4_1_X8 = 201,
  HTP_TILE_Q8_0_X8 = 202,
  HTP_TILE_MXFP4_X8 = 203,
  HTP_TILE_IQ4_NL_X8 = 204,
  HTP_TILE_F32_X8 = 205,
  HTP_TILE_F16_X8 = 206,
  HTP_TILE_BF16_X8 = 207,
  HTP_TILE_Q5_0_X8 = 208,
  HTP_TILE_Q5_1_X8 = 209,
  HTP_TILE_Q4_K_X8 = 210,
  HTP_TILE_Q5_K_X8 = 211,
  HTP_TILE_Q6_K_X8 = 212,
  HTP_TILE_FIRST = HTP_TILE_Q4_0_X8,
  HTP_TILE_END = 213,
  HTP_TILE_INVALID = 0xffffffffu,
};

inline constexpr uint32_t kHtpTileTypes = HTP_TILE_END - HTP_TILE_FIRST;
inline constexpr uint32_t kHtpTileRows = 8;

// Activation formats the kernels consume (built in VTCM by the activation quantizer).
enum htp_act_type : uint32_t {
  HTP_ACT_F32 = 0,     // f32, zero-padded to a multiple of 32
  HTP_ACT_Q8_32 = 1,   // htp_act_q8_32 blocks (Q8_0-like plus the integer block sum)
  HTP_ACT_Q8_256 = 2,  // htp_act_q8_256 blocks (Q8_K-like: sums per 16 and per 32)
  // bf16 (round to nearest even), K elements: a GEMM that multiplies in bf16 (AMX) loads its
  // tiles of activation rows straight from these, where a Q8 block would need converting again
  // for every weight unit. Only for quantized weights, on a device that asks for it (htp_hwinfo).
  HTP_ACT_BF16 = 3,
  HTP_ACT_TYPES = 4,
};

// Activation block for 32-element weight blocks: x[i] ~ d * q[i], sum = sum(q).
struct htp_act_q8_32 {
  int8_t q[32];
  float d;
  int32_t sum;
};
static_assert(sizeof(htp_act_q8_32) == 40, "htp_act_q8_32 layout");

// Activation super-block for K-quants: x[i] ~ d * q[i]; sum16[i] = sum(q[16i..16i+15]),
// sum32[i] = sum(q[32i..32i+31]).
struct htp_act_q8_256 {
  int8_t q[256];
  int16_t sum16[16];
  int16_t sum32[8];
  float d;
  uint32_t pad[3];
};
static_assert(sizeof(htp_act_q8_256) == 320, "htp_act_q8_256 layout");

struct htp_tile_desc {
  uint32_t src;              // htp_type (GGUF id) repacked into this tile type
  uint32_t kblock;           // elements per block tile (K granularity)
  uint32_t block_bytes;      // bytes of one block tile (8 rows)
  uint32_t src_block_bytes;  // bytes of one GGUF block (element size for float types)
  htp_act_type act;
};

// Indexed by tile type - HTP_TILE_FIRST.
inline constexpr htp_tile_desc kHtpTileDescs[kHtpTileTypes] = {
    {HTP_TYPE_Q4_0, 32, 144, 18, HTP_ACT_Q8_32},     {HTP_TYPE_Q4_1, 32, 160, 20, HTP_ACT_Q8_32},
    {HTP_TYPE_Q8_0, 32, 272, 34, HTP_ACT_Q8_32},     {HTP_TYPE_MXFP4, 32, 136, 17, HTP_ACT_Q8_32},
    {HTP_TYPE_IQ4_NL, 32, 144, 18, HTP_ACT_Q8_32},   {HTP_TYPE_F32, 32, 1024, 4, HTP_ACT_F32},
    {HTP_TYPE_F16, 32, 512, 2, HTP_ACT_F32},         {HTP_TYPE_BF16, 32, 512, 2, HTP_ACT_F32},
    {HTP_TYPE_Q5_0, 32, 176, 22, HTP_ACT_Q8_32},     {HTP_TYPE_Q5_1, 32, 192, 24, HTP_ACT_Q8_32},
    {HTP_TYPE_Q4_K, 256, 1184, 144, HTP_ACT_Q8_256}, {HTP_TYPE_Q5_K, 256, 1440, 176, HTP_ACT_Q8_256},
    {HTP_TYPE_Q6_K, 256, 1680, 210, HTP_ACT_Q8_256},
};

inline constexpr bool htp_tile_valid(uint32_t t) { return t >= HTP_TILE_FIRST && t < HTP_TILE_END; }

// Caller checks htp_tile_valid first.
inline constexpr const htp_tile_desc& htp_tile_info(uint32_t t) { return kHtpTileDescs[t - HTP_TILE_FIRST]; }

// The tile type a MUL_MAT weight of GGUF type `src` is repacked into, or HTP_TILE_INVALID.
inline constexpr uint32_t htp_tile_for(uint32_t src) {
  for (uint32_t i = 0; i < kHtpTileTypes; i++)
    if (kHtpTileDescs[i].src == src) return HTP_TILE_FIRST + i;
  return HTP_TILE_INVALID;
}

inline constexpr bool htp_tile_is_float(uint32_t t) { return htp_tile_info(t).act == HTP_ACT_F32; }

// K as the tiles store it: float types pad K to 32; quantized types need K % kblock == 0.
inline constexpr uint32_t htp_tile_padded_k(uint32_t t, uint32_t k) {
  const uint32_t kb = htp_tile_info(t).kblock;
  return (k + kb - 1) / kb * kb;
}

inline constexpr bool htp_tile_k_ok(uint32_t t, uint32_t k) {
  return k > 0 && (htp_tile_is_float(t) || k % htp_tile_info(t).kblock == 0);
}

inline constexpr size_t htp_tile_row_bytes(uint32_t t, uint32_t k) {
  const htp_tile_desc& d = htp_tile_info(t);
  return (size_t)(htp_tile_padded_k(t, k) / d.kblock) * d.block_bytes;
}

inline constexpr uint32_t htp_tile_count(uint32_t nrows) { return (nrows + kHtpTileRows - 1) / kHtpTileRows; }

// Bytes of the repacked matrix.
inline constexpr size_t htp_tiled_size(uint32_t t, uint32_t nrows, uint32_t k) {
  return (size_t)htp_tile_count(nrows) * htp_tile_row_bytes(t, k);
}

// Bytes of one activation row of K elements in format `act` for tile type t.
inline constexpr size_t htp_act_row_bytes(uint32_t t, uint32_t k, uint32_t act) {
  switch (act) {
    case HTP_ACT_Q8_32:
      return (size_t)(k / 32) * sizeof(htp_act_q8_32);
    case HTP_ACT_Q8_256:
      return (size_t)(k / 256) * sizeof(htp_act_q8_256);
    case HTP_ACT_BF16:
      return (size_t)htp_tile_padded_k(t, k) * 2;
    default:
      return (size_t)htp_tile_padded_k(t, k) * 4;
  }
}

// The same in the tile type's own format (the one every kernel table takes).
inline constexpr size_t htp_act_row_bytes(uint32_t t, uint32_t k) { return htp_act_row_bytes(t, k, htp_tile_info(t).act); }

}  // namespace hexllm::htp
