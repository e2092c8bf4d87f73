// Kernel params of the fused matmul ops: up to three matmuls ("parts") on one activation, run as
// one device op that quantizes the activation once (matmul_params.h, run 1) and streams each
// part's weights against it (run 2), chunk by chunk:
//   MUL_MAT_ADD     1 part, its output plus an addend (a bias row or a residual of its shape);
//   MUL_MAT_QKV     2-3 parts (Q, K, V), each with its own output and optional bias row;
//   MUL_MAT_FFN     2 parts (gate, up) whose results stay in VTCM; the op's output is
//                   glu(gate, up) (SWIGLU or GEGLU), so neither result goes to DDR;
//   MUL_MAT_ID_FFN  the same for MUL_MAT_ID (MoE experts), one routing of the ids for both.
// Each part keeps the configuration the unfused matmul would get (k_blocks above all, which
// decides the summation order), except the chunk size, which is shared, and the quantization
// run, which is part 0's: so a fused op gives the unfused ops' bits.
//
// Tensor slots: src[0] activation; src[1 + p] weight of part p; src[4 + p] addend of part p
// (optional); src[7] ids (MUL_MAT_ID_FFN). Outputs: dst is part 0's output (FFN: the GLU
// result), dst_ext[p - 1] part p's (QKV). Op params: params[0] is the GLU opcode (FFN), else 0.
//
// VTCM: [act area][aux][worker areas: the largest of the parts'][FFN: gate and up results,
// act_rows rows of local_stride each][addend staging: one out slot per worker].
#pragma once

#include "htp/abi/matmul_params.h"

inline constexpr uint32_t HTP_MMF_MAX_PARTS = 3;
inline constexpr uint32_t HTP_MMF_ADDEND_SRC = 4;  // src[4 + p]: part p's addend
inline constexpr uint32_t HTP_MMF_IDS_SRC = 7;
// A dense FFN whose act rows do not fit one chunk needs chunks of at least this many rows. The
// gate and up results of a chunk stay in VTCM (8 bytes per FFN column and row: 64 KiB a row at
// m = 8192), so a wide FFN gets short chunks, and each chunk streams the weights again. In
// 8 MiB, llama-3.2-1b's FFN gets 95-row chunks at 1 worker and 70 at 2, and prompt processing
// was 4-6% slower fused than unfused (whose chunks hold all 512 rows); its Q8_0 gets 97 rows at
// 1 worker, and pp512 ran 199-202 t/s fused against 254 unfused (Zen 5, 2026-12-07): twice the
// weight bytes streamed 6 times. qwen2.5-0.5b's gets 140 and 92; at 1 worker its pp512 ran
// 603-625 t/s fused against 576-587 unfused. A device may ask for longer chunks
// (htp_hwinfo::gemm_min_pass_rows). Decode's single row always fits.
inline constexpr uint32_t HTP_MMF_FFN_MIN_CHUNK_ROWS = 128;

struct htp_mmf_params {
  htp_mm_config cfg[HTP_MMF_MAX_PARTS];  // per part; htp_mm_params_make derives the rest
  uint32_t n_parts;
  uint32_t glu;             // FFN: HTP_OP_SWIGLU or HTP_OP_GEGLU; else 0
  uint32_t add_mask;        // bit p: part p adds src[4 + p]
  uint32_t bcast_mask;      // bit p: that addend is one row, broadcast over every output row
  uint32_t local_offset;    // FFN: gate results at local_offset, up results one buffer later
  uint32_t local_stride;    // FFN: bytes per act row of a result buffer
  uint32_t addend_offset;   // worker w's addend staging at addend_offset + w * addend_bytes
  uint32_t addend_bytes;
  uint32_t vtcm_bytes;      // the op's arena bytes
};
static_assert(sizeof(htp_mmf_params) <= HTP_KPARAMS_BYTES && sizeof(htp_mmf_params) % 8 == 0,
              "htp_mmf_params must fit the kernel-params blob");

// The tensors of a fused matmul op, as the descriptor names them (nullptr where absent).
struct htp_mmf_tensors {
  const htp_tensor* x;
  const htp_tensor* w[HTP_MMF_MAX_PARTS];
  const htp_tensor* addend[HTP_MMF_MAX_PARTS];
  const htp_tensor* ids;
  const htp_tensor* out[HTP_MMF_MAX_PARTS];  // FFN: out[0] is the GLU result
};

constexpr bool htp_mmf_is_ffn(uint32_t opcode) { return opcode == HTP_OP_MUL_MAT_FFN || opcode == HTP_OP_MUL_MAT_ID_FFN; }
constexpr bool htp_mmf_is_fused(uint32_t opcode) {
  return opcode == HTP_OP_MUL_MAT_ADD || opcode == HTP_OP_MUL_MAT_QKV || htp_mmf_is_ffn(opcode);
}

// The dense F32 tensor of `shape`'s ne: where an FFN part's result would be (it stays in VTCM).
constexpr htp_tensor htp_mmf_dense(const htp_tensor& shape) {
  htp_tensor t{};
  t.type = HTP_TYPE_F32;
  uint64_t nb = 4;
  for (int d = 0; d < 4; ++d) {
    t.ne[d] = shape.ne[d];
    t.nb[d] = (uint32_t)nb;
    nb *= shape.ne[d];
  }
  t.size = nb > 0xffffffffu ? 0xffffffffu : (uint32_t)nb;
  return t;
}

// An addend the kernel can add on the way out: a row of M floats, or exactly dst's layout.
constexpr bool htp_mmf_addend_ok(const htp_tensor& a, const htp_tensor& dst, bool* bcast) {
  if (a.type != HTP_TYPE_F32 || a.nb[0] != 4) return false;
  if (a.ne[0] == dst.ne[0] && a.ne[1] == 1 && a.ne[2] == 1 && a.ne[3] == 1) {
    *bcast = true;
    return true;
  }
  for (int d = 0; d < 4; ++d)
    if (a.ne[d] != dst.ne[d] || a.nb[d] != dst.nb[d]) return false;
  *bcast = false;
  return true;
}

// Parts may differ in tile type (llama's Q4_K Q and K with a Q6_K V) when one quantized
// activation serves both: the act area is built once, by part 0's quantizer, and each part's
// kernels read it by the same K blocks.
constexpr bool htp_mmf_same_act(uint32_t tile_a, uint32_t tile_b) {
  const hexllm::htp::htp_tile_desc& a = hexllm::htp::htp_tile_info(tile_a);
  const hexllm::htp::htp_tile_desc& b = hexllm::htp::htp_tile_info(tile_b);
  return a.act == b.act && a.kblock == b.kblock;
}

// Shapes of the parts, checked: one activation (format and shape) for all, nothing empty.
constexpr htp_status htp_mmf_shapes(uint32_t opcode, const int32_t* op_params, const htp_mmf_tensors& t,
                                    htp_mm_shape* shapes, uint32_t* n_parts, uint32_t* glu) {
  if (!htp_mmf_is_fused(opcode) || t.x == nullptr) return HTP_ERR_NO_SUPPORT;
  const bool is_id = opcode == HTP_OP_MUL_MAT_ID_FFN;
  const bool ffn = htp_mmf_is_ffn(opcode);
  uint32_t n = 0;
  while (n < HTP_MMF_MAX_PARTS && t.w[n] != nullptr) ++n;
  for (uint32_t p = n; p < HTP_MMF_MAX_PARTS; ++p)
    if (t.w[p] != nullptr || t.addend[p] != nullptr || (!htp_mmf_is_ffn(opcode) && t.out[p] != nullptr))
      return HTP_ERR_INVALID_PARAMS;
  // Parts: MUL_MAT_ADD 1, MUL_MAT_QKV 2-3, the FFN ops 2.
  const uint32_t n_lo = opcode == HTP_OP_MUL_MAT_ADD ? 1 : 2;
  const uint32_t n_hi = opcode == HTP_OP_MUL_MAT_ADD ? 1 : opcode == HTP_OP_MUL_MAT_QKV ? 3 : 2;
  if (n < n_lo || n > n_hi) return HTP_ERR_INVALID_PARAMS;
  if (is_id != (t.ids != nullptr)) return HTP_ERR_INVALID_PARAMS;
  *glu = 0;
  if (ffn) {
    if (op_params[0] != (int32_t)HTP_OP_SWIGLU && op_params[0] != (int32_t)HTP_OP_GEGLU) return HTP_ERR_NO_SUPPORT;
    *glu = (uint32_t)op_params[0];
    if (t.out[0] == nullptr || t.out[1] != nullptr || t.out[2] != nullptr) return HTP_ERR_INVALID_PARAMS;
    if (t.out[0]->type != HTP_TYPE_F32 || t.out[0]->nb[0] != 4) return HTP_ERR_NO_SUPPORT;
  }
  for (uint32_t p = 0; p < n; ++p) {
    const htp_tensor* out = ffn ? t.out[0] : t.out[p];
    if (out == nullptr) return HTP_ERR_INVALID_PARAMS;
    if (ffn && p > 0 && t.w[p]->ne[1] != t.w[0]->ne[1]) return HTP_ERR_INVALID_PARAMS;
    const htp_tensor part_dst = ffn ? htp_mmf_dense(*out) : *out;
    const htp_status st = htp_mm_shape_build(is_id ? HTP_OP_MUL_MAT_ID : HTP_OP_MUL_MAT, part_dst, *t.w[p], *t.x,
                                             t.ids, &shapes[p]);
    if (st != HTP_OK) return st;
    if (htp_mm_shape_empty(shapes[p])) return HTP_ERR_NO_SUPPORT;  // the unfused ops handle empty shapes
    const htp_mm_shape& a = shapes[0];
    const htp_mm_shape& b = shapes[p];
    // Only QKV takes mixed tiles so far (the presets' FFN gate and up share one type).
    const bool tiles_ok = opcode == HTP_OP_MUL_MAT_QKV ? htp_mmf_same_act(b.tile, a.tile) : b.tile == a.tile;
    if (!tiles_ok || b.k != a.k || b.rows != a.rows || b.seg_rows != a.seg_rows || b.n_slices != a.n_slices ||
        b.n_blocks != a.n_blocks)
      return HTP_ERR_NO_SUPPORT;
    for (int i = 0; i < 4; ++i)
      if (b.div[i] != a.div[i]) return HTP_ERR_NO_SUPPORT;
    if (t.addend[p] != nullptr) {
      bool bcast = false;
      if (ffn || is_id || !htp_mmf_addend_ok(*t.addend[p], *out, &bcast)) return HTP_ERR_NO_SUPPORT;
    }
  }
  if (opcode == HTP_OP_MUL_MAT_ADD && t.addend[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  *n_parts = n;
  return HTP_OK;
}

// The parts' weight-streaming runs are one work run (matmul_fused.cpp): a worker may start part
// p + 1 while another still streams part p, so worker w's area is the same for every part, after
// every part's act area and as large as the largest part's.
struct htp_mmf_areas {
  uint64_t offset;
  uint64_t stride;
  uint32_t n_threads;
};

constexpr void htp_mmf_areas_add(htp_mmf_areas* a, const htp_mm_params& mp) {
  if (mp.lay.thread_offset > a->offset) a->offset = mp.lay.thread_offset;
  if (mp.lay.thread_bytes > a->stride) a->stride = mp.lay.thread_bytes;
  if (mp.cfg.n_threads > a->n_threads) a->n_threads = mp.cfg.n_threads;
}

constexpr uint64_t htp_mmf_areas_end(const htp_mmf_areas& a) { return a.offset + a.n_threads * a.stride; }

// Arena bytes of the whole op with every part at `act_rows` rows per chunk (configs updated);
// 0 when a part's configuration is out of range.
constexpr uint64_t htp_mmf_layout(const htp_mm_shape* shapes, uint32_t n_parts, bool ffn, uint32_t add_mask,
                                  uint32_t act_rows, htp_mm_config* cfg, htp_mmf_params* out) {
  uint64_t parts_total = 0, addend_bytes = 0;
  uint32_t max_threads = 0;
  htp_mmf_areas areas{};
  for (uint32_t p = 0; p < n_parts; ++p) {
    cfg[p].act_rows = act_rows;
    htp_mm_params mp{};
    uint64_t bytes = 0;
    if (htp_mm_params_make(shapes[p], cfg[p], &mp, &bytes) != HTP_OK) return 0;
    if (bytes > parts_total) parts_total = bytes;
    htp_mmf_areas_add(&areas, mp);
    if (((add_mask >> p) & 1u) != 0 && mp.lay.out_slot_bytes > addend_bytes) addend_bytes = mp.lay.out_slot_bytes;
    if (cfg[p].n_threads > max_threads) max_threads = cfg[p].n_threads;
  }
  if (htp_mmf_areas_end(areas) > parts_total) parts_total = htp_mmf_areas_end(areas);
  htp_layout l{parts_total};
  uint64_t local_offset = 0, local_stride = 0;
  if (ffn) {
    local_stride = htp_align_up((uint64_t)shapes[0].m * 4, HTP_VTCM_ALIGN);
    local_offset = htp_layout_add(&l, 2 * (uint64_t)act_rows * local_stride);
  }
  const uint64_t addend_offset = addend_bytes != 0 ? htp_layout_add(&l, max_threads * addend_bytes) : 0;
  const uint64_t total = htp_layout_total(l);
  if (total > 0xffffffffu) return 0;
  out->local_offset = (uint32_t)local_offset;
  out->local_stride = (uint32_t)local_stride;
  out->addend_offset = (uint32_t)addend_offset;
  out->addend_bytes = (uint32_t)addend_bytes;
  out->vtcm_bytes = (uint32_t)total;
  return total;
}

// Host side (and the device's rebuild): each part's own matmul configuration, then the largest
// shared chunk for which the parts and the op's extra buffers fit the arena. A dense FFN that
// needs several chunks is refused below max(HTP_MMF_FFN_MIN_CHUNK_ROWS, gemm_min_pass_rows)
// rows per chunk (gemm.min_pass_rows: the device's GEMM preferences, htp_hwinfo).
constexpr htp_status htp_mmf_params_build(uint32_t opcode, const int32_t* op_params, const htp_mmf_tensors& t,
                                          uint32_t max_threads, uint32_t vtcm_size, htp_mmf_params* out,
                                          const htp_gemm_prefs& gemm = {}) {
  htp_mm_shape shapes[HTP_MMF_MAX_PARTS] = {};
  htp_mmf_params p{};
  htp_status st = htp_mmf_shapes(opcode, op_params, t, shapes, &p.n_parts, &p.glu);
  if (st != HTP_OK) return st;
  htp_mm_config cfg[HTP_MMF_MAX_PARTS] = {};
  uint32_t hi = shapes[0].rows;
  for (uint32_t k = 0; k < p.n_parts; ++k) {
    htp_mm_params mp{};
    const htp_tensor part_dst = htp_mmf_is_ffn(opcode) ? htp_mmf_dense(*t.out[0]) : *t.out[k];
    st = htp_mm_params_build(shapes[k].opcode, part_dst, *t.w[k], *t.x, t.ids, max_threads, vtcm_size, &mp, gemm);
    if (st != HTP_OK) return st;
    cfg[k] = mp.cfg;
    cfg[k].quant_threads = cfg[0].quant_threads;  // one quantization run, part 0's
    cfg[k].quant_blocks = cfg[0].quant_blocks;
    if (mp.cfg.act_rows < hi) hi = mp.cfg.act_rows;
    if (t.addend[k] != nullptr) {
      bool bcast = false;
      htp_mmf_addend_ok(*t.addend[k], part_dst, &bcast);
      p.add_mask |= 1u << k;
      if (bcast) p.bcast_mask |= 1u << k;
    }
  }
  const bool ffn = htp_mmf_is_ffn(opcode);
  uint32_t lo = 0;
  while (lo < hi) {  // the arena grows with the chunk
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    htp_mmf_params probe{};
    const uint64_t bytes = htp_mmf_layout(shapes, p.n_parts, ffn, p.add_mask, mid, cfg, &probe);
    if (bytes != 0 && bytes <= vtcm_size) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0) return HTP_ERR_VTCM_TOO_SMALL;
  const uint32_t min_chunk =
      gemm.min_pass_rows > HTP_MMF_FFN_MIN_CHUNK_ROWS ? gemm.min_pass_rows : HTP_MMF_FFN_MIN_CHUNK_ROWS;
  if (opcode == HTP_OP_MUL_MAT_FFN && lo < shapes[0].rows && lo < min_chunk) return HTP_ERR_NO_SUPPORT;
  htp_mmf_layout(shapes, p.n_parts, ffn, p.add_mask, lo, cfg, &p);
  for (uint32_t k = 0; k < p.n_parts; ++k) p.cfg[k] = cfg[k];
  *out = p;
  return HTP_OK;
}

// Device side: host params are untrusted, and the kernel must not rerun the host's search per
// op. Like htp_mm_params_check it takes the configurations the params name, requires each to be
// valid for its part (htp_mm_params_make) and the shared fields (chunk, quantization run) to
// agree, rebuilds every derived field from them, and requires all of it to match and fit.
// `shapes` (HTP_MMF_MAX_PARTS entries) gets the parts' shapes.
inline htp_status htp_mmf_params_check(const htp_mmf_params& got, uint32_t opcode, const int32_t* op_params,
                                       const htp_mmf_tensors& t, uint32_t max_threads, uint32_t vtcm_size,
                                       htp_mm_shape* shapes) {
  htp_mmf_params want{};
  htp_status st = htp_mmf_shapes(opcode, op_params, t, shapes, &want.n_parts, &want.glu);
  if (st != HTP_OK) return st;
  htp_mm_config cfg[HTP_MMF_MAX_PARTS] = {};
  for (uint32_t k = 0; k < want.n_parts; ++k) {
    const htp_mm_config& c = got.cfg[k];
    if (c.n_threads > max_threads || c.quant_threads > max_threads) return HTP_ERR_INVALID_PARAMS;
    if (c.act_rows != got.cfg[0].act_rows || c.quant_threads != got.cfg[0].quant_threads ||
        c.quant_blocks != got.cfg[0].quant_blocks || c.act != got.cfg[0].act)
      return HTP_ERR_INVALID_PARAMS;
    cfg[k] = c;
    if (t.addend[k] != nullptr) {
      bool bcast = false;
      htp_mmf_addend_ok(*t.addend[k], *t.out[k], &bcast);
      want.add_mask |= 1u << k;
      if (bcast) want.bcast_mask |= 1u << k;
    }
  }
  if (htp_mmf_layout(shapes, want.n_parts, htp_mmf_is_ffn(opcode), want.add_mask, got.cfg[0].act_rows, cfg, &want) ==
      0)
    return HTP_ERR_INVALID_PARAMS;
  for (uint32_t k = 0; k < want.n_parts; ++k) want.cfg[k] = cfg[k];
  if (__builtin_memcmp(&want, &got, sizeof want) != 0) return HTP_ERR_INVALID_PARAMS;
  return want.vtcm_bytes <= vtcm_size ? HTP_OK : HTP_ERR_VTCM_TOO_SMALL;
}
