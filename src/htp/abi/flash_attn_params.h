// Kernel params and VTCM layout for FLASH_ATTN_EXT: Q F32 (any row strides), K and V F16
// (rows strided, e.g. permuted views of the KV cache), optional F16 mask [n_kv, >= n_q] shared
// by all heads, optional F32 sinks, softcap, ALiBi, GQA; output F32 [Dv, n_head, n_q, n_seq].
//
// Work is split into units; a unit holds scaled Q rows for some queries and query heads in
// VTCM and streams its KV heads' K/V blocks through two slots once, so each K/V block serves
// every query row of the unit. Two ways to form units:
// - by heads (prefill, and decode on a short cache): (query tile, sequence, KV head, head
//   group). All the query heads of a KV head (unless that leaves workers idle) times a tile of
//   queries share each K/V block.
// - split KV (decode past HTP_FA_SHORT_KV keys, or KV heads that do not deal out evenly to
//   the workers; HTP_FA_SPLIT_KV): (sequence, KV chunk). A unit takes every head and
//   every query and the K/V blocks c, c + n_chunks, ... of the cache; a K/V block is then one
//   contiguous run of cache rows (all heads), not one head's 128-byte slices 1 KiB apart, and
//   the chunks keep every worker busy whatever the head count. Each unit leaves unnormalized
//   partial results (m, l, O) in VTCM; one pass combines them into the output.
// Header-only: the host plans with htp_fa_plan, the kernel re-runs the layout builder in
// htp_fa_params_check. Everything is sized for the largest unit.
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_FA_SLOTS = 2;          // double-buffered K/V/mask blocks
inline constexpr uint32_t HTP_FA_MAX_HEADS = 64;     // query heads per unit (per-head state on the stack)
inline constexpr uint32_t HTP_FA_TARGET_ROWS = 128;  // query rows (heads x queries) a K/V block serves
inline constexpr uint32_t HTP_FA_MIN_ROWS = 32;      // rows kept before the K/V block shrinks
inline constexpr uint32_t HTP_FA_BLOCK_KV = 64;      // K/V rows per block (shrinks to fit VTCM)
inline constexpr uint32_t HTP_FA_SPLIT_MAX_Q = 8;    // split KV for at most this many queries
// Decode by heads up to this n_kv where the KV heads deal out evenly (htp_fa_plan).
inline constexpr uint32_t HTP_FA_SHORT_KV = 4 * HTP_FA_BLOCK_KV;
inline constexpr uint16_t HTP_FA_F16_NEG_INF = 0xfc00;
// The products run on the vec layer's float tiles (htp/abi/tiles.h): Q as F32 8-row tiles
// (the "weights", built once per unit) times K rows converted to F32 gives S^T; the
// probabilities times V^T as F16 8-row tiles gives the block's contribution to O.
inline constexpr uint32_t HTP_FA_TILE_ROWS = 8;          // rows per tile (kHtpTileRows)
inline constexpr uint32_t HTP_FA_TILE_K = 32;            // elements per block tile along K
inline constexpr uint32_t HTP_FA_F32_TILE_BYTES = 1024;  // [32 k][8 r] f32
inline constexpr uint32_t HTP_FA_F16_TILE_BYTES = 512;   // [32 k][8 r] f16

constexpr uint64_t htp_fa_pad32(uint64_t n) {
  return (n + HTP_FA_TILE_K - 1) / HTP_FA_TILE_K * HTP_FA_TILE_K;
}
constexpr uint64_t htp_fa_tiles(uint64_t rows) { return (rows + HTP_FA_TILE_ROWS - 1) / HTP_FA_TILE_ROWS; }
constexpr uint32_t htp_fa_ceil_div(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a + b - 1) / b); }

enum htp_fa_flags : uint32_t {
  HTP_FA_SPLIT_KV = 1u << 0,  // units are KV chunks over all heads; partial results combined
  HTP_FA_FLAGS_ALL = 0x1,
};

// Q, K, V, mask and sinks dimensions, read once from the tensors.
struct htp_fa_shape {
  uint32_t d, dv;  // head sizes of K (= Q) and V
  uint32_t n_q, n_head, n_seq;
  uint32_t n_kv, n_head_kv, n_seq_kv;
  uint32_t k_head_stride, v_head_stride;  // bytes between the heads of one K / V row (nb[2])
};

constexpr htp_fa_shape htp_fa_shape_of(const htp_tensor& q, const htp_tensor& k, const htp_tensor& v) {
  return {q.ne[0], v.ne[0], q.ne[1], q.ne[2], q.ne[3], k.ne[1], k.ne[2], k.ne[3], k.nb[2], v.nb[2]};
}

// What one unit holds, from the params and the shape.
struct htp_fa_tiling {
  uint32_t q_tile;      // queries
  uint32_t head_group;  // query heads per KV head
  uint32_t kv_heads;    // KV heads (1, or all of them when splitting KV)
  uint32_t block_kv;    // K/V rows per block
  uint32_t k_span;      // bytes of a K row the DMA moves: one head, or every head of the row
  uint32_t v_span;
};

constexpr htp_fa_tiling htp_fa_tiling_of(const htp_fa_shape& s, uint32_t q_tile, uint32_t head_group,
                                         uint32_t block_kv, bool split) {
  const uint32_t kv_heads = split ? s.n_head_kv : 1;
  const uint64_t k_span = (uint64_t)(kv_heads - 1) * s.k_head_stride + (uint64_t)s.d * 2;
  const uint64_t v_span = (uint64_t)(kv_heads - 1) * s.v_head_stride + (uint64_t)s.dv * 2;
  // Spans are checked against small bounds (htp_fa_split_ok) before they are used.
  return {q_tile, head_group, kv_heads, block_kv, (uint32_t)k_span, (uint32_t)v_span};
}

// One worker's VTCM area: HTP_FA_SLOTS slots of {K block, V block, mask tile}, then the unit
// state: Q rows (scaled F32, the act rows of S = Q.K^T), one KV head's K rows in F32 and as
// row tiles, its scores S (then the probabilities P), its V^T tiles and P.V, the O
// accumulators, running max, sum and rescale factor per row, the live-block bitmap and the
// sinks. Row m of a unit is (KV head g, query iq, query head hh):
// m = (g * q_tile' + iq) * head_group' + hh, with the unit's actual counts.
struct htp_fa_layout {
  uint32_t k_off, v_off, mask_off, slot_bytes;  // within a slot
  uint32_t qs_off, kf_off, kt_off, s_off;
  uint32_t vt_off, ot_off, o_off, m_off;
  uint32_t l_off, alpha_off, live_off, sinks_off;
  uint32_t qs_stride;                        // bytes per Q row (F32, D padded to 32)
  uint32_t k_stride, v_stride, mask_stride;  // VTCM row strides of the slots
  uint32_t kf_stride;                        // bytes per F32 K row (D padded to 32)
  uint32_t kt_row_bytes;                     // bytes per K row tile (F32, K = D)
  uint32_t s_stride;                         // bytes per P row (block padded to 32)
  uint32_t thread_bytes;                     // worker i's area starts at i * thread_bytes
  uint32_t partials_off;                     // split KV: after every worker's area
  uint32_t partial_bytes;                    // split KV: one unit's (m, l, O) rows
  uint32_t total_bytes;                      // everything the op places in VTCM
  uint32_t pad;
};

struct htp_fa_params {
  double alibi_m0,
      alibi_m1;           // slope of head h: m0^(h+1) if h < n_head_log2, else m1^(2(h - n_head_log2) + 1)
  htp_divisor n_parts;    // unit u: part = u % n_parts (head group; split: KV chunk), then
  htp_divisor n_head_kv;  //   KV head = (u / n_parts) % n_head_kv (not split), then
  htp_divisor n_seq;      //   sequence and query tile from the rest (split: sequence = u / n_parts)
  htp_divisor seq_ratio;  // KV sequence = sequence / (n_seq / n_seq_kv)
  float q_scale;          // scale, or scale / softcap, folded into Q
  float softcap;          // 0: none
  uint32_t n_head_log2;   // 0: no ALiBi (slope 1)
  uint32_t n_threads;
  uint32_t n_units;
  uint32_t block_kv;    // K/V rows per block
  uint32_t q_tile;      // queries per unit
  uint32_t head_group;  // query heads per KV head in a unit
  uint32_t flags;       // htp_fa_flags
  uint32_t total_bytes;
};
static_assert(sizeof(htp_fa_params) <= HTP_KPARAMS_BYTES && sizeof(htp_fa_params) % 8 == 0,
              "htp_fa_params must fit the kernel-params blob");

// Shape and type check shared by host and kernel. mask and sinks are nullptr when absent.
constexpr htp_status htp_fa_supported(const htp_tensor& dst, const htp_tensor& q, const htp_tensor& k,
                                      const htp_tensor& v, const htp_tensor* mask, const htp_tensor* sinks) {
  if (dst.type != HTP_TYPE_F32 || q.type != HTP_TYPE_F32 || k.type != HTP_TYPE_F16 || v.type != HTP_TYPE_F16)
    return HTP_ERR_NO_SUPPORT;
  if (mask != nullptr && mask->type != HTP_TYPE_F16) return HTP_ERR_NO_SUPPORT;
  if (sinks != nullptr && sinks->type != HTP_TYPE_F32) return HTP_ERR_NO_SUPPORT;
  if (q.nb[0] != 4 || k.nb[0] != 2 || v.nb[0] != 2 || !htp_tensor_contiguous(dst)) return HTP_ERR_NO_SUPPORT;
  if ((mask != nullptr && mask->nb[0] != 2) || (sinks != nullptr && sinks->nb[0] != 4))
    return HTP_ERR_NO_SUPPORT;
  const htp_fa_shape s = htp_fa_shape_of(q, k, v);
  if (s.d == 0 || s.dv == 0 || s.n_kv == 0 || s.n_head_kv == 0 || s.n_seq_kv == 0) return HTP_ERR_NO_SUPPORT;
  if (k.ne[0] != s.d || v.ne[1] != s.n_kv || v.ne[2] != s.n_head_kv || v.ne[3] != s.n_seq_kv)
    return HTP_ERR_INVALID_PARAMS;
  if (s.n_head % s.n_head_kv != 0 || s.n_seq % s.n_seq_kv != 0) return HTP_ERR_INVALID_PARAMS;
  if (dst.ne[0] != s.dv || dst.ne[1] != s.n_head || dst.ne[2] != s.n_q || dst.ne[3] != s.n_seq)
    return HTP_ERR_INVALID_PARAMS;
  // One mask for every head and sequence (what the model builds); per-head masks run elsewhere.
  if (mask != nullptr && (mask->ne[2] != 1 || mask->ne[3] != 1)) return HTP_ERR_NO_SUPPORT;
  if (mask != nullptr && (mask->ne[0] != s.n_kv || mask->ne[1] < s.n_q)) return HTP_ERR_INVALID_PARAMS;
  if (sinks != nullptr && sinks->ne[0] < s.n_head) return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

// Split KV needs every head of a unit in the per-head state and the heads of a K/V row close
// together (the KV cache interleaves them in one row), so that a row's span stays small.
constexpr bool htp_fa_split_ok(const htp_fa_shape& s) {
  if (s.n_q > HTP_FA_SPLIT_MAX_Q || s.n_head > HTP_FA_MAX_HEADS) return false;
  if (s.k_head_stride < s.d * 2 || s.v_head_stride < s.dv * 2) return false;  // heads must not overlap
  const uint64_t k_span = (uint64_t)(s.n_head_kv - 1) * s.k_head_stride + (uint64_t)s.d * 2;
  const uint64_t v_span = (uint64_t)(s.n_head_kv - 1) * s.v_head_stride + (uint64_t)s.dv * 2;
  return k_span <= 2ull * s.n_head_kv * s.d * 2 && v_span <= 2ull * s.n_head_kv * s.dv * 2;
}

constexpr htp_fa_layout htp_fa_layout_build(const htp_fa_shape& s, const htp_fa_tiling& t, bool has_mask,
                                            uint32_t n_threads, uint32_t n_units, bool split) {
  const uint64_t group_rows = (uint64_t)t.q_tile * t.head_group;  // rows of one KV head
  const uint64_t rows = group_rows * t.kv_heads;
  const uint64_t k_stride = htp_align_up(t.k_span, HTP_VTCM_ALIGN);
  const uint64_t v_stride = htp_align_up(t.v_span, HTP_VTCM_ALIGN);
  const uint64_t mask_stride = htp_align_up((uint64_t)t.block_kv * 2, HTP_VTCM_ALIGN);
  const uint64_t kf_stride = htp_fa_pad32(s.d) * 4;  // a multiple of HTP_VTCM_ALIGN
  const uint64_t kt_row_bytes = htp_fa_pad32(s.d) / HTP_FA_TILE_K * HTP_FA_F32_TILE_BYTES;
  const uint64_t s_stride = htp_fa_pad32(t.block_kv) * 4;
  const uint64_t vt_row_bytes = htp_fa_pad32(t.block_kv) / HTP_FA_TILE_K * HTP_FA_F16_TILE_BYTES;
  const uint64_t qs_stride = kf_stride;  // Q rows meet K rows in the tiled product
  htp_layout sl{};
  const uint64_t k = htp_layout_add(&sl, t.block_kv * k_stride);
  const uint64_t v = htp_layout_add(&sl, t.block_kv * v_stride);
  const uint64_t mask = htp_layout_add(&sl, has_mask ? t.q_tile * mask_stride : 0);
  const uint64_t slot = htp_layout_total(sl);
  htp_layout a{};
  htp_layout_add(&a, slot * HTP_FA_SLOTS);
  const uint64_t qs = htp_layout_add(&a, rows * qs_stride);
  const uint64_t kf = htp_layout_add(&a, t.block_kv * kf_stride);
  const uint64_t kt = htp_layout_add(&a, htp_fa_tiles(t.block_kv) * kt_row_bytes);
  const uint64_t sc = htp_layout_add(&a, group_rows * s_stride);
  const uint64_t vt = htp_layout_add(&a, htp_fa_tiles(s.dv) * vt_row_bytes);
  const uint64_t ot = htp_layout_add(&a, group_rows * s.dv * 4);
  const uint64_t o = htp_layout_add(&a, rows * s.dv * 4);  // packed: also the output staging
  const uint64_t m = htp_layout_add(&a, rows * 4);
  const uint64_t l = htp_layout_add(&a, rows * 4);
  const uint64_t alpha = htp_layout_add(&a, rows * 4);
  const uint64_t n_blocks = ((uint64_t)s.n_kv + t.block_kv - 1) / t.block_kv;
  const uint64_t live = htp_layout_add(&a, has_mask ? (n_blocks + 31) / 32 * 4 : 0);
  const uint64_t sinks = htp_layout_add(&a, (uint64_t)t.head_group * t.kv_heads * 4);
  const uint64_t thread_bytes = htp_layout_total(a);
  // Split KV: per unit, rows x (m, l, Dv values), after every worker's area.
  const uint64_t partial_bytes = split ? htp_align_up(rows * (2 + (uint64_t)s.dv) * 4, HTP_VTCM_ALIGN) : 0;
  const uint64_t partials = thread_bytes * n_threads;
  const uint64_t total = partials + partial_bytes * n_units;
  // Callers reject totals beyond the arena first; fields saturate so that no bound check passes.
  auto u32 = [](uint64_t x) { return x > 0xffffffffull ? 0xffffffffu : (uint32_t)x; };
  return {u32(k),         u32(v),           u32(mask),        u32(slot),       u32(qs),
          u32(kf),        u32(kt),          u32(sc),          u32(vt),         u32(ot),
          u32(o),         u32(m),           u32(l),           u32(alpha),      u32(live),
          u32(sinks),     u32(qs_stride),   u32(k_stride),    u32(v_stride),   u32(mask_stride),
          u32(kf_stride), u32(kt_row_bytes), u32(s_stride),   u32(thread_bytes), u32(partials),
          u32(partial_bytes), u32(total),   0};
}

// Units of the by-heads split.
constexpr uint32_t htp_fa_head_units(const htp_fa_shape& s, uint32_t q_tile, uint32_t head_group) {
  const uint64_t n = (uint64_t)htp_fa_ceil_div(s.n_q, q_tile) * s.n_seq * s.n_head_kv *
                     htp_fa_ceil_div(s.n_head / s.n_head_kv, head_group);
  return n > 0xffffffffu ? 0 : (uint32_t)n;
}

// Host side, after alibi_m0/m1, n_head_log2, q_scale and softcap are in `out`: picks the unit
// split, tiling, K/V block size and thread count for this session and fills the rest.
constexpr htp_status htp_fa_plan(const htp_tensor& dst, const htp_tensor& q, const htp_tensor& k,
                                 const htp_tensor& v, const htp_tensor* mask, const htp_tensor* sinks,
                                 uint32_t max_threads, uint32_t vtcm_size, htp_fa_params* out) {
  const htp_status st = htp_fa_supported(dst, q, k, v, mask, sinks);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  const htp_fa_shape s = htp_fa_shape_of(q, k, v);
  if (s.n_q == 0 || s.n_head == 0 || s.n_seq == 0) {  // nothing to compute
    out->n_threads = 1;
    return HTP_OK;
  }
  const bool has_mask = mask != nullptr;
  const uint32_t gqa = s.n_head / s.n_head_kv;
  uint32_t block_kv = s.n_kv < HTP_FA_BLOCK_KV ? s.n_kv : HTP_FA_BLOCK_KV;

  // Decode: split KV when every worker gets at least one block, except on a short cache (a few
  // blocks) whose KV heads deal out evenly to the workers: there by heads. Split KV deals whole
  // blocks, so while few of a short cache's blocks hold live keys some workers idle, and it
  // needs a combine pass (qwen2.5-0.5b, 2 workers, 128 tokens from an empty cache:
  // FLASH_ATTN_EXT 25.6 -> 20.8 us mean by heads, medians of 5 alternating runs).
  const bool heads_even = s.n_kv <= HTP_FA_SHORT_KV &&
                          (uint64_t)s.n_seq * s.n_head_kv % max_threads == 0;
  if (htp_fa_split_ok(s) && !heads_even) {
    for (;;) {
      const uint32_t n_blocks = htp_fa_ceil_div(s.n_kv, block_kv);
      if (n_blocks < max_threads) break;
      const uint32_t n_chunks = max_threads;
      const uint64_t units = (uint64_t)n_chunks * s.n_seq;
      if (units > 0xffffffffu) break;
      const uint32_t n_threads = (uint32_t)(units < max_threads ? units : max_threads);
      const htp_fa_tiling t = htp_fa_tiling_of(s, s.n_q, gqa, block_kv, true);
      const htp_fa_layout lay = htp_fa_layout_build(s, t, has_mask, n_threads, (uint32_t)units, true);
      if ((uint64_t)lay.thread_bytes * n_threads + (uint64_t)lay.partial_bytes * units <= vtcm_size) {
        out->n_parts = htp_fastdiv_init(n_chunks);
        out->n_head_kv = htp_fastdiv_init(s.n_head_kv);
        out->n_seq = htp_fastdiv_init(s.n_seq);
        out->seq_ratio = htp_fastdiv_init(s.n_seq / s.n_seq_kv);
        out->n_threads = n_threads;
        out->n_units = (uint32_t)units;
        out->block_kv = block_kv;
        out->q_tile = s.n_q;
        out->head_group = gqa;
        out->flags = HTP_FA_SPLIT_KV;
        out->total_bytes = lay.total_bytes;
        return HTP_OK;
      }
      if (block_kv <= 8) break;  // tiny VTCM: the by-heads split needs less
      block_kv = (block_kv + 1) / 2;
    }
    block_kv = s.n_kv < HTP_FA_BLOCK_KV ? s.n_kv : HTP_FA_BLOCK_KV;
  }

  // By heads: all the query heads of a KV head share its K/V blocks; queries tile up to the
  // target rows.
  const uint64_t per_tile = (uint64_t)s.n_seq * s.n_head_kv;  // units per query tile and head group
  uint32_t group = gqa < HTP_FA_MAX_HEADS ? gqa : HTP_FA_MAX_HEADS;
  uint32_t q_tile = HTP_FA_TARGET_ROWS / group;
  if (q_tile == 0) q_tile = 1;
  if (q_tile > s.n_q) q_tile = s.n_q;
  // Idle workers cost more than re-reading K/V: split queries, then heads, until all are busy.
  if (per_tile * htp_fa_ceil_div(s.n_q, q_tile) < max_threads) {
    const uint32_t want_tiles = htp_fa_ceil_div(max_threads, (uint32_t)per_tile);
    q_tile = htp_fa_ceil_div(s.n_q, want_tiles < s.n_q ? want_tiles : s.n_q);
    const uint64_t units = per_tile * htp_fa_ceil_div(s.n_q, q_tile);
    if (units < max_threads) {
      const uint32_t want_groups = htp_fa_ceil_div(max_threads, (uint32_t)units);
      group = htp_fa_ceil_div(gqa, want_groups < gqa ? want_groups : gqa);
    }
  }
  // Shrink until it fits: queries down to HTP_FA_MIN_ROWS rows, then the K/V block down to 16
  // rows, then queries, heads and the block to 1.
  for (;;) {
    const uint32_t n_units = htp_fa_head_units(s, q_tile, group);
    if (n_units == 0) return HTP_ERR_NO_SUPPORT;
    const uint32_t n_threads = n_units < max_threads ? n_units : max_threads;
    const htp_fa_layout lay = htp_fa_layout_build(s, htp_fa_tiling_of(s, q_tile, group, block_kv, false),
                                                  has_mask, n_threads, n_units, false);
    if ((uint64_t)lay.thread_bytes * n_threads <= vtcm_size) {
      out->n_parts = htp_fastdiv_init(htp_fa_ceil_div(gqa, group));
      out->n_head_kv = htp_fastdiv_init(s.n_head_kv);
      out->n_seq = htp_fastdiv_init(s.n_seq);
      out->seq_ratio = htp_fastdiv_init(s.n_seq / s.n_seq_kv);
      out->n_threads = n_threads;
      out->n_units = n_units;
      out->block_kv = block_kv;
      out->q_tile = q_tile;
      out->head_group = group;
      out->flags = 0;
      out->total_bytes = lay.total_bytes;
      return HTP_OK;
    }
    if ((uint64_t)q_tile * group > HTP_FA_MIN_ROWS && q_tile > 1)
      q_tile = (q_tile + 1) / 2;
    else if (block_kv > 16)
      block_kv = (block_kv + 1) / 2;
    else if (q_tile > 1)
      q_tile = (q_tile + 1) / 2;
    else if (group > 1)
      group = (group + 1) / 2;
    else if (block_kv > 1)
      block_kv = (block_kv + 1) / 2;
    else
      return HTP_ERR_VTCM_TOO_SMALL;
  }
}

// Device side (htp_kparams_match): the plan is rebuilt from the tensors and the session.
// q_scale, softcap and n_head_log2 follow from the op params (f[0] scale, f[1] max_bias,
// f[2] softcap) in float and integer arithmetic and are rebuilt too. The ALiBi bases
// alibi_m0/m1 need exp2 in double: with max_bias > 0 they are taken as sent (they only scale
// mask values: wrong numbers, never a bad access), otherwise they must be 0. Call after
// htp_fa_supported, for a non-empty output. Fills the tiling and layout.
inline htp_status htp_fa_params_check(const htp_fa_params& p, const htp_tensor& dst, const htp_tensor& q,
                                      const htp_tensor& k, const htp_tensor& v, const htp_tensor* mask,
                                      const htp_tensor* sinks, const int32_t* op_params, uint32_t max_threads,
                                      uint32_t vtcm_size, htp_fa_tiling* tiling, htp_fa_layout* layout) {
  auto param_f = [&](uint32_t i) {
    float f;
    __builtin_memcpy(&f, &op_params[i], 4);
    return f;
  };
  const float scale = param_f(0), max_bias = param_f(1), softcap = param_f(2);
  htp_fa_params want{};
  want.softcap = softcap;
  want.q_scale = softcap != 0.0f ? scale / softcap : scale;
  if (max_bias > 0.0f) {
    uint32_t n_head_log2 = 1;  // the largest power of two <= n_head
    while (n_head_log2 <= q.ne[2] / 2) n_head_log2 *= 2;
    want.n_head_log2 = n_head_log2;
    want.alibi_m0 = p.alibi_m0;
    want.alibi_m1 = p.alibi_m1;
  }
  const htp_status st =
      htp_kparams_match(htp_fa_plan(dst, q, k, v, mask, sinks, max_threads, vtcm_size, &want), want, p);
  if (st != HTP_OK) return st;
  const htp_fa_shape s = htp_fa_shape_of(q, k, v);
  const bool split = (p.flags & HTP_FA_SPLIT_KV) != 0;
  *tiling = htp_fa_tiling_of(s, p.q_tile, p.head_group, p.block_kv, split);
  *layout = htp_fa_layout_build(s, *tiling, mask != nullptr, p.n_threads, p.n_units, split);
  return layout->total_bytes <= vtcm_size ? HTP_OK : HTP_ERR_VTCM_TOO_SMALL;
}
