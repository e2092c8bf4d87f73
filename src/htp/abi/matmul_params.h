// Kernel params and VTCM layout of the matmul family: MUL_MAT and MUL_MAT_ID with a weight
// repacked into 8-row tiles (htp/abi/tiles.h), F32 activations, F32 output. Header-only: the host
// searches a configuration with htp_mm_params_build; the kernel verifies it with
// htp_mm_params_check, which rebuilds every derived field (fastdivs, layout) with the same
// htp_mm_params_make, so the two sides cannot disagree about offsets.
//
// How the kernel runs (src/htp/ops/matmul.cpp):
//   activation rows ("act rows": src1 rows for MUL_MAT, (slot, token) pairs sorted by expert for
//   MUL_MAT_ID) are processed in CHUNKS of act_rows. Per chunk:
//     run 1: quant_threads workers quantize the chunk's rows, in pieces of quant_blocks K blocks,
//            DDR -> DMA -> VTCM staging -> quantizer -> the shared ACT AREA;
//     run 2: n_threads workers each own a balanced range of row tiles (for one segment of
//            whole-K units, a worker done with its range then takes units from the back of
//            another's) and stream WEIGHT UNITS
//            (group_tiles row tiles x k_blocks K blocks) through a ring of n_prefetch slots; per
//            unit one GEMV (1 act row) or GEMM (several) against the act rows of a SEGMENT (rows
//            that share one weight slice and a uniform dst stride); outputs go through 2 out slots
//            and a DMA write-back (in place in DDR in zero-copy mode for MUL_MAT).
//   K is split over several units only when one row tile does not fit the ring (tiny VTCM,
//   float weights with large K); partial sums then accumulate through a scratch slot.
//
// VTCM: [act area: act_rows x act_stride][aux (MUL_MAT_ID): expert offsets, sorted pairs, ids]
//       [worker areas: max(n_threads, quant_threads) x thread_bytes]. Within a worker area the
//       quant staging (run 1) overlaps the weight ring and out slots (run 2).
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_hwinfo.h"
#include "htp/abi/htp_limits.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/htp_types.h"
#include "htp/abi/layout.h"
#include "htp/abi/tiles.h"

inline constexpr uint32_t HTP_MM_MAX_PREFETCH = 4;  // weight units in flight per worker
inline constexpr uint32_t HTP_MM_OUT_SLOTS = 2;     // outputs: compute one while the other drains
inline constexpr uint32_t HTP_MM_QUANT_SLOTS = 2;   // quant staging: double-buffered
// Weight bytes per unit. GEMV (decode) only amortizes the per-unit overhead, unless the device's
// GEMV splits a unit into weight streams (htp_gemm_prefs::gemv_unit_bytes). GEMM re-reads a
// unit once per group of act rows, so it must stay in the L2 (host) / fit VTCM (NPU), and it
// streams all act rows of the chunk once per unit, so a unit of few rows (long K) makes the act
// stream, not the dot units, the limit.
inline constexpr uint32_t HTP_MM_GEMV_UNIT_BYTES = 128u << 10;
inline constexpr uint32_t HTP_MM_GEMM_UNIT_BYTES = 512u << 10;
inline constexpr uint32_t HTP_MM_GEMV_UNITS_PER_THREAD = 4;     // dynamic split granularity
// The smallest decode unit the split goes down to. Starting a unit costs: one Zen 5 core read
// qwen2.5-0.5b's [896 x 896] Q4_0 at 18-21 GB/s in 12-tile (48 KiB) units, 20-23 in 16-tile
// (63 KiB) units and 24-27 whole (hexllm_vec_bench "GEMV units", interleaved rounds). 64 KiB
// instead of 16 took the median of that model's QKV and attention-output ops at 2 threads
// from 22.4-25.1 to 19.9-22.5 us and 15.3-17.7 to 13.9-16.1 us (5 alternating traced runs, every
// pair lower); matrices with K >= 2048 already had larger units. Measured before the GEMV
// prefetched its streams' heads (DESIGN §10, "Stream heads"), which made small units cheaper.
inline constexpr uint32_t HTP_MM_GEMV_MIN_UNIT_BYTES = 64u << 10;
inline constexpr uint32_t HTP_MM_GEMM_MIN_ROWS = 4;  // act rows from which units are sized for GEMM
inline constexpr uint32_t HTP_MM_QUANT_PIECE_BYTES = 16u << 10;  // F32 bytes per quant piece at most
// Below this many activation elements per chunk one worker quantizes (a second run costs more).
inline constexpr uint32_t HTP_MM_QUANT_MIN_ELEMS = 1u << 16;
// The solver keeps chunks at least this many act rows (if there are as many) before it gives
// up weight-unit size: every chunk streams the weights once more.
inline constexpr uint32_t HTP_MM_MIN_CHUNK_ROWS = 64;

// Everything the kernel derives from the tensors alone (no choices).
struct htp_mm_shape {
  uint32_t opcode;      // HTP_OP_MUL_MAT or HTP_OP_MUL_MAT_ID
  uint32_t tile;        // tile type of src0
  uint32_t k;           // src0 ne[0] = src1 ne[0]
  uint32_t m;           // src0 ne[1] = dst ne[0]
  uint32_t n_blocks;    // K blocks of a row tile
  uint32_t n_tiles;     // row tiles of one weight slice
  uint32_t rows;        // act rows: N * c2 * c3 (MUL_MAT) or n_used * n_tok (MUL_MAT_ID)
  uint32_t seg_rows;    // MUL_MAT: consecutive act rows on one weight slice and one dst stride; ID: 0
  uint32_t n_slices;    // weight slices: b2 * b3 (MUL_MAT) or n_expert (MUL_MAT_ID)
  uint32_t div[4];      // fastdiv divisors: MUL_MAT {N, c2, c2 / b2, c3 / b3}; ID {n_used, n_b, 0, 0}
  uint32_t b2;          // MUL_MAT: src0 ne[2] (slice = i2 / r2 + b2 * (i3 / r3))
  uint64_t slice_bytes;  // tiled bytes of one weight slice; slices are consecutive
};

// The choices the host makes.
struct htp_mm_config {
  uint16_t n_threads;      // matmul workers (at most the row tiles)
  uint16_t quant_threads;  // activation quantization workers
  uint16_t n_prefetch;     // weight ring slots per worker
  uint16_t act;            // htp_act_type of the act area: the tile's own, or HTP_ACT_BF16
  uint32_t group_tiles;    // row tiles per weight unit
  uint32_t k_blocks;       // K blocks per weight unit: n_blocks unless K is split (then group_tiles == 1)
  uint32_t quant_blocks;   // K blocks per quantization piece
  uint32_t act_rows;       // act rows per chunk
  uint32_t seg_rows;       // copied from the shape
};

struct htp_mm_layout {
  uint32_t act_stride;      // bytes per act row in the act area (at VTCM offset 0)
  uint32_t aux_offset;      // ID: expert offsets [n_slices + 1], sorted pairs [rows], ids staging [rows]
  uint32_t thread_offset;   // worker w's area at thread_offset + w * thread_bytes
  uint32_t thread_bytes;
  uint32_t slot_bytes;      // weight ring slot s at s * slot_bytes within the worker area
  uint32_t qslot_bytes;     // quant staging slot s at s * qslot_bytes (overlaps the ring)
  uint32_t out_offset;      // out slot o at out_offset + o * out_slot_bytes; K-split scratch after them
  uint32_t out_slot_bytes;
  uint32_t out_stride;      // bytes per act row in an out slot (group_tiles * 8 floats)
};

struct htp_mm_params {
  htp_divisor div[4];  // fastdiv constants of htp_mm_shape::div
  htp_mm_config cfg;
  htp_mm_layout lay;
};
static_assert(sizeof(htp_mm_params) <= HTP_KPARAMS_BYTES && sizeof(htp_mm_params) % 8 == 0,
              "htp_mm_params must fit the kernel-params blob");

constexpr uint32_t htp_mm_div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

// Shape and support check shared by host (supports_op) and kernel; ids is nullptr for MUL_MAT.
// An empty dst is reported with rows == 0 or m == 0 (nothing to do).
constexpr htp_status htp_mm_shape_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0,
                                        const htp_tensor& src1, const htp_tensor* ids, htp_mm_shape* out) {
  using hexllm::htp::htp_tile_info;
  if (opcode != HTP_OP_MUL_MAT && opcode != HTP_OP_MUL_MAT_ID) return HTP_ERR_NO_SUPPORT;
  if (!hexllm::htp::htp_tile_valid(src0.type)) return HTP_ERR_NO_SUPPORT;  // plain src0: reference backend
  if (dst.type != HTP_TYPE_F32 || src1.type != HTP_TYPE_F32) return HTP_ERR_NO_SUPPORT;
  if (dst.nb[0] != 4 || src1.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
  htp_mm_shape s{};
  s.opcode = opcode;
  s.tile = src0.type;
  s.k = src0.ne[0];
  s.m = src0.ne[1];
  if (src1.ne[0] != s.k || dst.ne[0] != s.m) return HTP_ERR_INVALID_PARAMS;
  if (s.k == 0 || s.m == 0 || src0.ne[2] == 0 || src0.ne[3] == 0) {
    *out = s;  // empty
    return HTP_OK;
  }
  if (!hexllm::htp::htp_tile_k_ok(s.tile, s.k)) return HTP_ERR_INVALID_PARAMS;
  s.n_blocks = hexllm::htp::htp_tile_padded_k(s.tile, s.k) / htp_tile_info(s.tile).kblock;
  s.n_tiles = hexllm::htp::htp_tile_count(s.m);
  s.slice_bytes = hexllm::htp::htp_tiled_size(s.tile, s.m, s.k);
  uint64_t rows = 0;
  if (opcode == HTP_OP_MUL_MAT) {
    // dst [M, N, c2, c3]; src1 [K, N, c2, c3]; src0 [K, M, b2, b3] broadcast over c2 / b2, c3 / b3.
    for (int d = 1; d < 4; ++d)
      if (dst.ne[d] != src1.ne[d]) return HTP_ERR_INVALID_PARAMS;
    if (src1.ne[2] % src0.ne[2] != 0 || src1.ne[3] % src0.ne[3] != 0) return HTP_ERR_INVALID_PARAMS;
    const uint64_t slices = (uint64_t)src0.ne[2] * src0.ne[3];
    if (slices > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;
    s.n_slices = (uint32_t)slices;
    rows = (uint64_t)src1.ne[1] * src1.ne[2] * src1.ne[3];
    s.div[0] = src1.ne[1];
    s.div[1] = src1.ne[2];
    s.div[2] = src1.ne[2] / src0.ne[2];
    s.div[3] = src1.ne[3] / src0.ne[3];
    s.b2 = src0.ne[2];
    if (rows != 0) {
      // A segment is one batch of N rows, or several when their dst rows continue with stride
      // nb1: the r2 planes on one slice, or (2-D weight per i3) all planes of r3 consecutive i3.
      const uint64_t n = src1.ne[1], c2 = src1.ne[2], r2 = s.div[2], r3 = s.div[3];
      const bool planes_even = c2 == 1 || dst.nb[2] == n * dst.nb[1];
      uint64_t seg = planes_even ? n * r2 : n;
      if (src0.ne[2] == 1 && planes_even && (r3 == 1 || dst.nb[3] == n * c2 * dst.nb[1])) seg = n * c2 * r3;
      s.seg_rows = (uint32_t)seg;
    }
  } else {
    // src0 [K, M, n_expert]; src1 [K, n_b, n_tok]; ids I32 [n_used, n_tok]; dst [M, n_used, n_tok].
    if (ids == nullptr || ids->type != HTP_TYPE_I32 || ids->nb[0] != 4) return HTP_ERR_NO_SUPPORT;
    if (src0.ne[3] != 1 || src1.ne[3] != 1 || dst.ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1)
      return HTP_ERR_INVALID_PARAMS;
    if (dst.ne[1] != ids->ne[0] || dst.ne[2] != ids->ne[1] || src1.ne[2] != ids->ne[1])
      return HTP_ERR_INVALID_PARAMS;
    if (src1.ne[1] == 0 && ids->ne[0] != 0) return HTP_ERR_INVALID_PARAMS;
    s.n_slices = src0.ne[2];
    rows = (uint64_t)ids->ne[0] * ids->ne[1];
    s.div[0] = ids->ne[0];
    s.div[1] = src1.ne[1];
  }
  if (rows > 0x7fffffffu || (uint64_t)s.k * 4 > 0x7fffffffu) return HTP_ERR_NO_SUPPORT;
  s.rows = (uint32_t)rows;
  // The repacked slices must lie inside the tensor's bytes (its size is the tiled size).
  if (s.slice_bytes * s.n_slices > src0.size) return HTP_ERR_INVALID_PARAMS;
  *out = s;
  return HTP_OK;
}

constexpr bool htp_mm_shape_empty(const htp_mm_shape& s) { return s.rows == 0 || s.m == 0 || s.k == 0; }

// Act row bytes of one K block in format `act` (the act area is indexed per block when K is split).
constexpr uint32_t htp_mm_act_block_bytes(uint32_t tile, uint32_t act) {
  return (uint32_t)hexllm::htp::htp_act_row_bytes(tile, hexllm::htp::htp_tile_info(tile).kblock, act);
}

// The act format for a matmul of `rows` act rows: bf16 where the device's GEMM asks for it
// (quantized weights only), else the tile type's own.
constexpr uint32_t htp_mm_act_format(uint32_t tile, uint32_t rows, const htp_gemm_prefs& gemm) {
  const uint32_t own = hexllm::htp::htp_tile_info(tile).act;
  const bool bf16 = own != hexllm::htp::HTP_ACT_F32 && gemm.bf16_min_rows != 0 && rows >= gemm.bf16_min_rows;
  return bf16 ? (uint32_t)hexllm::htp::HTP_ACT_BF16 : own;
}

// Where the MUL_MAT_ID scratch sits, from its start `at`: expert offsets [n_slices + 1] (act row
// ranges), pairs (i + n_used * t) sorted by expert [rows], the ids staging [rows].
struct htp_mm_aux {
  uint64_t offs, pairs, ids, end;
};

constexpr htp_mm_aux htp_mm_aux_layout(uint64_t at, const htp_mm_shape& s) {
  htp_layout l{at};
  htp_mm_aux a{};
  a.offs = htp_layout_add(&l, ((uint64_t)s.n_slices + 1) * 4);
  a.pairs = htp_layout_add(&l, (uint64_t)s.rows * 4);
  a.ids = htp_layout_add(&l, (uint64_t)s.rows * 4);
  a.end = l.size;
  return a;
}

// Derives fastdivs and the layout of configuration `c`; checks the configuration's ranges.
// *vtcm_bytes gets the arena bytes the op needs.
constexpr htp_status htp_mm_params_make(const htp_mm_shape& s, const htp_mm_config& c, htp_mm_params* out,
                                        uint64_t* vtcm_bytes) {
  using hexllm::htp::htp_tile_info;
  if (htp_mm_shape_empty(s)) return HTP_ERR_INVALID_PARAMS;
  if (c.n_threads == 0 || c.n_threads > HTP_MAX_THREADS || c.n_threads > s.n_tiles) return HTP_ERR_INVALID_PARAMS;
  if (c.quant_threads == 0 || c.quant_threads > HTP_MAX_THREADS) return HTP_ERR_INVALID_PARAMS;
  if (c.n_prefetch == 0 || c.n_prefetch > HTP_MM_MAX_PREFETCH) return HTP_ERR_INVALID_PARAMS;
  if (c.group_tiles == 0 || c.group_tiles > s.n_tiles) return HTP_ERR_INVALID_PARAMS;
  if (c.k_blocks == 0 || c.k_blocks > s.n_blocks || (c.k_blocks < s.n_blocks && c.group_tiles != 1))
    return HTP_ERR_INVALID_PARAMS;
  if (c.quant_blocks == 0 || c.quant_blocks > s.n_blocks) return HTP_ERR_INVALID_PARAMS;
  if (c.act_rows == 0 || c.act_rows > s.rows || c.seg_rows != s.seg_rows) return HTP_ERR_INVALID_PARAMS;
  const hexllm::htp::htp_tile_desc& td = htp_tile_info(s.tile);
  if (c.act != td.act && (c.act != hexllm::htp::HTP_ACT_BF16 || td.act == hexllm::htp::HTP_ACT_F32))
    return HTP_ERR_INVALID_PARAMS;

  htp_mm_params p{};
  for (int i = 0; i < 4; ++i) p.div[i] = htp_fastdiv_init(s.div[i]);
  p.cfg = c;
  uint64_t act_stride = htp_align_up((uint64_t)s.n_blocks * htp_mm_act_block_bytes(s.tile, c.act), HTP_VTCM_ALIGN);
  // A bf16 GEMM reads 16 rows at a time (an AMX tile): at a stride of an even number of lines
  // they share few L1 sets (one at 4 KiB), an odd number spreads them over 16.
  if (c.act == hexllm::htp::HTP_ACT_BF16 && act_stride / HTP_VTCM_ALIGN % 2 == 0) act_stride += HTP_VTCM_ALIGN;
  const uint64_t slot = htp_align_up((uint64_t)c.group_tiles * c.k_blocks * td.block_bytes, HTP_VTCM_ALIGN);
  const uint64_t qslot = htp_align_up((uint64_t)c.quant_blocks * td.kblock * 4, HTP_VTCM_ALIGN);
  const uint64_t out_stride = (uint64_t)c.group_tiles * hexllm::htp::kHtpTileRows * 4;
  const uint64_t out_slot = htp_align_up(c.act_rows * out_stride, HTP_VTCM_ALIGN);
  const bool split = c.k_blocks < s.n_blocks;

  htp_layout l{};
  htp_layout_add(&l, c.act_rows * act_stride);
  uint64_t aux = 0;
  if (s.opcode == HTP_OP_MUL_MAT_ID) {
    const htp_mm_aux a = htp_mm_aux_layout(htp_layout_total(l), s);
    aux = a.offs;
    l.size = a.end;
  }
  const uint64_t threads_at = htp_layout_total(l);

  htp_layout w{};
  htp_layout_add(&w, c.n_prefetch * slot);
  const uint64_t out_at = htp_layout_add(&w, (HTP_MM_OUT_SLOTS + (split ? 1 : 0)) * out_slot);
  const uint64_t ring_total = htp_layout_total(w);
  const uint64_t quant_total = HTP_MM_QUANT_SLOTS * qslot;
  const uint64_t thread_bytes = ring_total > quant_total ? ring_total : quant_total;
  const uint32_t n_areas = c.n_threads > c.quant_threads ? c.n_threads : c.quant_threads;
  const uint64_t total = threads_at + n_areas * thread_bytes;
  if (total > 0xffffffffu) return HTP_ERR_VTCM_TOO_SMALL;
  p.lay = {(uint32_t)act_stride,   (uint32_t)aux,      (uint32_t)threads_at, (uint32_t)thread_bytes,
           (uint32_t)slot,         (uint32_t)qslot,    (uint32_t)out_at,     (uint32_t)out_slot,
           (uint32_t)out_stride};
  *out = p;
  *vtcm_bytes = total;
  return HTP_OK;
}

// Host side: the configuration for this session (max_threads workers, vtcm_size bytes, its GEMM's
// preferences). Prefers, in order: whole-K units, chunks of at least HTP_MM_MIN_CHUNK_ROWS act
// rows, 3 ring slots, large units, all workers; then anything that fits.
constexpr htp_status htp_mm_params_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0,
                                         const htp_tensor& src1, const htp_tensor* ids, uint32_t max_threads,
                                         uint32_t vtcm_size, htp_mm_params* out, const htp_gemm_prefs& gemm = {}) {
  htp_mm_shape s{};
  htp_status st = htp_mm_shape_build(opcode, dst, src0, src1, ids, &s);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  if (htp_mm_shape_empty(s)) {  // nothing to compute; the kernel returns before any check
    *out = {};
    return HTP_OK;
  }
  const hexllm::htp::htp_tile_desc& td = hexllm::htp::htp_tile_info(s.tile);
  const uint32_t threads = max_threads < s.n_tiles ? max_threads : s.n_tiles;
  const uint64_t row_bytes = hexllm::htp::htp_tile_row_bytes(s.tile, s.k);
  const uint64_t gemv_unit = gemm.gemv_unit_bytes != 0 ? gemm.gemv_unit_bytes : HTP_MM_GEMV_UNIT_BYTES;
  const uint64_t unit_target = s.rows >= HTP_MM_GEMM_MIN_ROWS ? HTP_MM_GEMM_UNIT_BYTES : gemv_unit;
  uint64_t g_max = unit_target / row_bytes;
  const uint64_t tiles_per_thread = htp_mm_div_up(s.n_tiles, threads);
  uint64_t g_cap = tiles_per_thread;
  if (s.rows < HTP_MM_GEMM_MIN_ROWS && threads > 1) {
    // Workers take units from each other (matmul.cpp): a few units each let the split follow
    // the bandwidth each worker gets, as long as units stay large enough to amortize their
    // overhead.
    const uint64_t quarter = htp_mm_div_up(tiles_per_thread, HTP_MM_GEMV_UNITS_PER_THREAD);
    const uint64_t floor_tiles = htp_mm_div_up(HTP_MM_GEMV_MIN_UNIT_BYTES, row_bytes);
    g_cap = quarter > floor_tiles ? quarter : floor_tiles;
    if (g_cap > tiles_per_thread) g_cap = tiles_per_thread;
  }
  if (g_max > g_cap) g_max = g_cap;
  // The zmm GEMV (x86_avx512.cpp) reads 4 row tiles at once (4 weight streams); a remainder is
  // read in fewer streams, which is slower. HVX takes tiles one by one, so this costs it nothing.
  if (s.rows < HTP_MM_GEMM_MIN_ROWS && g_max > 4) g_max -= g_max % 4;
  // The zmm GEMM multiplies row tiles in pairs; a unit's odd last tile takes the one-tile ymm
  // kernel, at half the rate: in units of few tiles (long K) that weighs.
  if (s.rows >= HTP_MM_GEMM_MIN_ROWS && g_max > 1 && g_max < 16) g_max -= g_max % 2;
  if (g_max == 0) g_max = 1;

  // A device whose GEMM converts the weights on every pass over them (gemm.min_pass_rows) first
  // gives up unit size for chunks of that many rows, and gets chunks of equal size: a short
  // last chunk would pay the whole conversion for a few rows.
  const bool pass_rows = gemm.min_pass_rows != 0;
  for (int pass = pass_rows ? 0 : 1; pass < 3; ++pass) {
    const uint32_t want = pass == 0 ? gemm.min_pass_rows : pass == 1 ? HTP_MM_MIN_CHUNK_ROWS : 1;
    const uint32_t min_rows = s.rows < want ? s.rows : want;
    for (uint32_t nt = threads; nt >= 1; --nt) {
      if (pass < 2 && nt != threads) break;
      htp_mm_config c{};
      c.n_threads = (uint16_t)nt;
      c.act = (uint16_t)htp_mm_act_format(s.tile, s.rows, gemm);
      const uint64_t elems = (uint64_t)s.rows * s.k;
      const uint32_t qt = elems >= HTP_MM_QUANT_MIN_ELEMS ? (max_threads > HTP_MAX_THREADS ? HTP_MAX_THREADS : max_threads) : 1;
      c.quant_threads = (uint16_t)(pass < 2 ? qt : (qt < nt ? qt : nt));
      // Quant pieces: bounded staging, and enough pieces that a few long rows still spread.
      uint32_t parts = htp_mm_div_up((uint64_t)s.n_blocks * td.kblock * 4, HTP_MM_QUANT_PIECE_BYTES);
      const uint32_t per_row = s.rows >= c.quant_threads ? 1 : htp_mm_div_up(c.quant_threads, s.rows);
      if (parts < per_row) parts = per_row;
      if (parts > s.n_blocks) parts = s.n_blocks;
      c.quant_blocks = htp_mm_div_up(s.n_blocks, parts);
      c.seg_rows = s.seg_rows;
      for (uint32_t kb = s.n_blocks;; kb = htp_mm_div_up(kb, 2)) {
        c.k_blocks = kb;
        for (uint32_t np = 3; np >= 2; --np) {
          c.n_prefetch = (uint16_t)np;
          for (uint64_t g = kb == s.n_blocks ? g_max : 1; g >= 1; g /= 2) {
            c.group_tiles = (uint32_t)g;
            // Largest chunk that fits: the layout grows with act_rows.
            uint32_t lo = 0, hi = s.rows;
            while (lo < hi) {
              const uint32_t mid = lo + (hi - lo + 1) / 2;
              c.act_rows = mid;
              htp_mm_params p{};
              uint64_t bytes = 0;
              if (htp_mm_params_make(s, c, &p, &bytes) == HTP_OK && bytes <= vtcm_size) lo = mid;
              else hi = mid - 1;
            }
            const uint32_t even = lo == 0 ? 0 : htp_mm_div_up(s.rows, htp_mm_div_up(s.rows, lo));
            if ((pass == 0 ? even : lo) >= min_rows && lo >= 1) {
              c.act_rows = pass_rows ? even : lo;
              uint64_t bytes = 0;
              return htp_mm_params_make(s, c, out, &bytes);
            }
          }
        }
        if (kb == 1) break;
      }
    }
  }
  return HTP_ERR_VTCM_TOO_SMALL;
}

// Device side: host params are untrusted. Rebuilds every derived field from the configuration
// they name and requires all of it to match. Call for a non-empty shape.
inline htp_status htp_mm_params_check(const htp_mm_params& p, const htp_mm_shape& s, uint32_t max_threads,
                                      uint32_t vtcm_size) {
  if (p.cfg.n_threads > max_threads || p.cfg.quant_threads > max_threads) return HTP_ERR_INVALID_PARAMS;
  htp_mm_params want{};
  uint64_t bytes = 0;
  const htp_status st = htp_mm_params_make(s, p.cfg, &want, &bytes);
  if (st != HTP_OK) return st;
  if (__builtin_memcmp(&want, &p, sizeof p) != 0) return HTP_ERR_INVALID_PARAMS;
  if (bytes > vtcm_size) return HTP_ERR_VTCM_TOO_SMALL;
  return HTP_OK;
}
