// The matmul family's job and workers, shared by the plain ops (matmul.cpp) and the fused ones
// (matmul_fused.cpp): a fused op runs one quantization run and then these workers once per part.
#pragma once

#include "htp/abi/matmul_params.h"
#include "htp/ops/ops.h"
#include "htp/vec/vec.h"

namespace hexllm::htp {

struct mm_job {
  const htp_op_ctx* ctx;
  htp_mm_params p;
  htp_mm_shape s;
  const tensor_ref* w;    // tiled weights
  const tensor_ref* x;    // F32 activations
  const tensor_ref* d;    // output (unused when `local` is set)
  const tensor_ref* ids;  // MUL_MAT_ID
  // Fused FFN parts: results go to VTCM rows (act row - chunk0) * local_stride instead of d.
  uint8_t* local;
  uint32_t local_stride;
  // Fused MUL_MAT_ADD / QKV bias: added to the final sums before write-back (MUL_MAT only).
  const tensor_ref* addend;
  bool addend_bcast;      // one row for every output row; else dst's layout
  uint8_t* addend_area;   // worker w's staging at addend_area + w * addend_bytes
  uint32_t addend_bytes;
  vec_gemv_fn gemv;       // nullptr with bf16 activations: every batch takes the GEMM
  vec_gemm_fn gemm;
  vec_quant_fn quant;
  bool float_weights;
  uint32_t kblock;      // elements per K block
  uint32_t block_bytes; // bytes of one block tile
  uint32_t act_block;   // bytes of one K block of an act row
  uint32_t q_parts;     // quantization pieces per act row
  uint32_t n_kc;        // weight units along K per (segment, group): 1 unless K is split
  uint64_t row_bytes;   // bytes of one row tile
  uint32_t chunk0;      // first act row of the current chunk
  uint32_t chunk_end;
  uint8_t* act;           // the act area
  uint64_t area_offset;   // run 2: worker w's area at area_offset + w * area_stride
  uint64_t area_stride;
  const uint32_t* offs;   // ID: act row range of expert e = [offs[e], offs[e + 1])
  const uint32_t* pairs;  // ID: act row r is pair pairs[r] = i + n_used * t
  // Dynamic split (one segment, whole-K units): each worker claims the units of its own range
  // front to back, so its weights stay one contiguous stream, and a worker whose range is done
  // takes units from the back of another's. The worker that gets less memory bandwidth or CPU
  // then does less and both finish together. Each range's last group is cut into smaller units
  // (tail_tiles each), so the steals at the end are small.
  bool dynamic;
  uint32_t tail_tiles;
  uint32_t spans[HTP_MAX_THREADS];  // worker w's unclaimed units [front, back), mm_span_pack
  uint32_t tile0, tile_end;  // this device's row tiles (output columns): all of them on one device
  htp_status status[HTP_MAX_THREADS];
};

// A span packs two unit indices in one 32-bit word for one CAS: [front, back) = low, high half.
// Row tile counts (and so unit counts) below kMmSpanLimit take the dynamic split.
inline constexpr uint32_t kMmSpanLimit = 0xffffu;
constexpr uint32_t mm_span_pack(uint32_t front, uint32_t back) { return front | back << 16; }
constexpr uint32_t mm_span_front(uint32_t s) { return s & kMmSpanLimit; }
constexpr uint32_t mm_span_back(uint32_t s) { return s >> 16; }

// The dynamic split's units: worker w's range of row tiles, cut into units of group_tiles and
// then, for at least the range's last group's worth of tiles, units of tail_tiles.
inline htp_mdev_range mm_dynamic_range(const mm_job& j, unsigned w) {
  return htp_worker_part({j.tile0, j.tile_end - j.tile0}, w, j.p.cfg.n_threads);
}
inline uint32_t mm_dynamic_full_units(const mm_job& j, uint32_t tiles) {
  const uint32_t g = j.p.cfg.group_tiles;
  return tiles > g ? (tiles - g) / g : 0;
}
inline uint32_t mm_dynamic_units(const mm_job& j, unsigned w) {
  const uint32_t tiles = mm_dynamic_range(j, w).count, full = mm_dynamic_full_units(j, tiles);
  return full + htp_mm_div_up(tiles - full * j.p.cfg.group_tiles, j.tail_tiles);
}
// Unit u of worker w's range, u < mm_dynamic_units(j, w).
inline htp_mdev_range mm_dynamic_unit(const mm_job& j, unsigned w, uint32_t u) {
  const htp_mdev_range r = mm_dynamic_range(j, w);
  const uint32_t full = mm_dynamic_full_units(j, r.count), g = j.p.cfg.group_tiles;
  const uint32_t at = u < full ? u * g : full * g + (u - full) * j.tail_tiles;
  const uint32_t size = u < full ? g : j.tail_tiles;
  return {r.start + at, size < r.count - at ? size : r.count - at};
}

// MUL_MAT act row r = n + N * (i2 + c2 * i3).
struct mm_batch {
  uint32_t n, i2, i3;
};

inline mm_batch mm_batch_of(const mm_job& j, uint32_t r) {
  const uint32_t b = htp_fastdiv(r, j.p.div[0]);
  const uint32_t i3 = htp_fastdiv(b, j.p.div[1]);
  return {r - b * j.p.div[0].div, b - i3 * j.p.div[1].div, i3};
}

// MUL_MAT_ID pair q = i + n_used * t.
struct mm_pair {
  uint32_t i, t;
};

inline mm_pair mm_pair_of(const mm_job& j, uint32_t q) {
  const uint32_t t = htp_fastdiv(q, j.p.div[0]);
  return {q - t * j.p.div[0].div, t};
}

// Row r of tensor `t` laid out as MUL_MAT's / MUL_MAT_ID's dst (the addend shares dst's layout).
inline uint8_t* mm_out_row(const mm_job& j, const tensor_ref& t, uint32_t r) {
  if (j.s.opcode == HTP_OP_MUL_MAT) {
    const mm_batch x = mm_batch_of(j, r);
    return t.data + (uint64_t)x.n * t.t.nb[1] + (uint64_t)x.i2 * t.t.nb[2] + (uint64_t)x.i3 * t.t.nb[3];
  }
  const mm_pair x = mm_pair_of(j, j.pairs[r]);
  return t.data + (uint64_t)x.i * t.t.nb[1] + (uint64_t)x.t * t.t.nb[2];
}

// Fills the fields every job derives from its shape, params, tensors and kernels (the fused
// fields cleared); `p` must have passed its check. Fails when this device's kernels lack the
// params' activation format (bf16 from a host that misread htp_hwinfo).
inline htp_status mm_job_init(mm_job* j, const htp_op_ctx* ctx, const htp_mm_shape& s, const htp_mm_params& p,
                              const tensor_ref* w, const tensor_ref* x, const tensor_ref* d, const tensor_ref* ids) {
  const vec_kernels& vk = htp_vec_select();
  const htp_tile_desc& td = htp_tile_info(s.tile);
  const bool bf16 = p.cfg.act == HTP_ACT_BF16;
  if (bf16 && (vk.for_tile(s.tile).gemm_bf16 == nullptr || vk.quant[HTP_ACT_BF16] == nullptr))
    return HTP_ERR_NO_SUPPORT;
  j->ctx = ctx;
  j->s = s;
  j->p = p;
  j->w = w;
  j->x = x;
  j->d = d;
  j->ids = ids;
  j->local = nullptr;
  j->local_stride = 0;
  j->addend = nullptr;
  j->addend_bcast = false;
  j->addend_area = nullptr;
  j->addend_bytes = 0;
  j->gemv = bf16 ? nullptr : vk.for_tile(s.tile).gemv;
  j->gemm = bf16 ? vk.for_tile(s.tile).gemm_bf16 : vk.for_tile(s.tile).gemm;
  j->quant = vk.quant[p.cfg.act];
  j->float_weights = htp_tile_is_float(s.tile);
  j->kblock = td.kblock;
  j->block_bytes = td.block_bytes;
  j->act_block = htp_mm_act_block_bytes(s.tile, p.cfg.act);
  j->q_parts = (s.n_blocks + p.cfg.quant_blocks - 1) / p.cfg.quant_blocks;
  j->n_kc = (s.n_blocks + p.cfg.k_blocks - 1) / p.cfg.k_blocks;
  j->row_bytes = htp_tile_row_bytes(s.tile, s.k);
  j->act = ctx->vtcm_base;
  j->area_offset = p.lay.thread_offset;
  j->area_stride = p.lay.thread_bytes;
  j->offs = nullptr;
  j->pairs = nullptr;
  j->tile0 = 0;
  j->tile_end = s.n_tiles;
  return HTP_OK;
}
// Sets the chunk [c0, c0 + act_rows) for the next runs.
void mm_job_chunk(mm_job* j, uint32_t c0);
// Run 1 (quantize the chunk into the act area) and run 2 (stream the weights): work_fn workers.
void mm_quant_worker(unsigned n, unsigned w, void* data);
void mm_worker(unsigned n, unsigned w, void* data);
// MUL_MAT_ID: sorts (slot, token) pairs by expert into the aux area; fails on a bad id.
htp_status mm_route_ids(mm_job* j);
// MUL_MAT_ADD, MUL_MAT_QKV, MUL_MAT_FFN, MUL_MAT_ID_FFN (matmul_fused.cpp), from op_matmul.
htp_status op_matmul_fused(htp_op_ctx* ctx);

}  // namespace hexllm::htp
