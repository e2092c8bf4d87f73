// FLASH_ATTN_EXT: out = softmax(scale q.k (soft-capped) + slope mask, with sinks) . v, one
// pass over K/V with the online softmax (running max m, running sum l, accumulator O, all F32;
// a new block max rescales l and O by exp(m_old - m_new)).
//
// Work units (abi/flash_attn_params.h) are by heads (prefill) or KV chunks over all heads
// (decode, split KV); worker i takes units i, i + n, ... (units late in a causal prefill cost
// more; interleaving balances them). Several devices interleave by-heads units the same way
// (device d, worker i: unit d + count * i, step count * n); split KV runs on device 0. Per unit:
//   1. the Q rows of its heads and queries come in through DMA and are scaled in place;
//   2. with a mask, the unit's mask tiles stream through VTCM once to mark the K/V blocks in
//      which some query sees some key (padding, causal future and sliding windows are skipped
//      without fetching their K/V);
//   3. the live K/V blocks (and mask tiles) stream DDR -> DMA -> VTCM through two slots; per
//      KV head of the unit, each block serves all its query rows with two tiled products of
//      the vec layer: S = Q.K^T (Q rows against K as F32 row tiles, transposed 8 keys at a
//      time), then, after the row-wise online softmax in vmath, P.V (P rows against V^T as
//      F16 tiles);
//   4. by heads: O / l goes to the output (one query's heads are contiguous: one 2-D
//      write-back); split KV: (m, l, O) stay in VTCM and a last pass combines the chunks.
#include "htp/abi/flash_attn_params.h"
#include "htp/ops/ops.h"
#include "htp/util.h"
#include "htp/vec/vec.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

namespace {

constexpr float kNegInf = -__builtin_inff();
// Query rows per K/V head up to which P.V goes through vmath's pv_f16 instead of V^T tiles.
constexpr uint32_t kDirectPvRows = 8;

struct fa_job {
  const htp_op_ctx* ctx;
  const vmath_ops* vm;
  const vec_mm_kernels* mm_f32;  // K tiles (S = Q.K^T)
  const vec_mm_kernels* mm_f16;  // V^T tiles (P.V)
  htp_fa_params p;
  htp_fa_tiling t;
  htp_fa_layout lay;
  htp_fa_shape s;
  uint32_t gqa;
  uint32_t n_blocks;
  bool split;
  // The units this device takes: unit0, unit0 + unit_step, ... (0, 1: all of them).
  uint32_t unit0, unit_step;
  htp_status status[HTP_MAX_THREADS];
};

// The query rows, KV heads and K/V blocks one unit covers. Row m is (KV head g, query iq,
// head hh) = (g * nq + iq) * gh + hh; its query head is h0 + g * gqa + hh.
struct fa_unit {
  uint32_t iq0, nq;          // queries
  uint32_t h0, gh;           // first query head; query heads per KV head
  uint32_t hk0, n_kvh;       // first KV head; KV heads
  uint32_t is, isk;          // sequence of Q, of K/V
  uint32_t b_first, b_step;  // blocks b_first, b_first + b_step, ...
  uint32_t index;            // unit index (split KV: its partial results)
};

fa_unit unit_at(const fa_job& j, uint32_t u) {
  const htp_fa_params& p = j.p;
  fa_unit un;
  un.index = u;
  const uint32_t part = htp_fastmod(u, p.n_parts);
  const uint32_t t = htp_fastdiv(u, p.n_parts);
  if (j.split) {
    un.iq0 = 0;
    un.nq = j.s.n_q;
    un.h0 = 0;
    un.gh = j.gqa;
    un.hk0 = 0;
    un.n_kvh = j.s.n_head_kv;
    un.is = t;
    un.b_first = part;
    un.b_step = p.n_parts.div;
  } else {
    const uint32_t hk = htp_fastmod(t, p.n_head_kv);
    const uint32_t t2 = htp_fastdiv(t, p.n_head_kv);
    un.is = htp_fastmod(t2, p.n_seq);
    const uint32_t qt = htp_fastdiv(t2, p.n_seq);
    un.iq0 = qt * p.q_tile;
    un.nq = htp_min(p.q_tile, j.s.n_q - un.iq0);
    un.h0 = hk * j.gqa + part * p.head_group;
    un.gh = htp_min(p.head_group, j.gqa - part * p.head_group);
    un.hk0 = hk;
    un.n_kvh = 1;
    un.b_first = 0;
    un.b_step = 1;
  }
  un.isk = htp_fastdiv(un.is, p.seq_ratio);
  return un;
}

// Zero-copy mode reads K/V straight from DDR: the loads of a block are started when it is
// pushed, a block ahead, as a copy engine would start them.
void prefetch_rows(const uint8_t* p, uint32_t stride, uint32_t row_bytes, uint32_t rows) {
  for (uint32_t r = 0; r < rows; ++r, p += stride)
    for (uint32_t o = 0; o < row_bytes; o += 64) __builtin_prefetch(p + o, 0, 2);
}

float scalar_exp(const vmath_ops& vm, float x) {
  float y;
  vm.exp(&x, &y, 1);
  return y;
}

// Whether a mask row has a cell other than -inf, four cells per compare.
bool row_visible(const uint16_t* row, uint32_t n) {
  constexpr uint64_t kAllNegInf = 0x0001000100010001ull * HTP_FA_F16_NEG_INF;
  uint32_t c = 0;
  for (; c + 4 <= n; c += 4) {
    uint64_t w;
    __builtin_memcpy(&w, row + c, 8);
    if (w != kAllNegInf) return true;
  }
  for (; c < n; ++c)
    if (row[c] != HTP_FA_F16_NEG_INF) return true;
  return false;
}

// ALiBi slope of head h (1 without ALiBi), powers by repeated products in double.
float alibi_slope(const htp_fa_params& p, uint32_t h) {
  if (p.n_head_log2 == 0) return 1.0f;
  const double base = h < p.n_head_log2 ? p.alibi_m0 : p.alibi_m1;
  const uint32_t e = h < p.n_head_log2 ? h + 1 : 2 * (h - p.n_head_log2) + 1;
  double r = 1.0;
  for (uint32_t i = 0; i < e; ++i) r *= base;
  return (float)r;
}

class unit_runner {
 public:
  unit_runner(const fa_job& j, unsigned i)
      : j_(j),
        vm_(*j.vm),
        lay_(j.lay),
        q_(&j.ctx->dma[i]),
        tr_(&j.ctx->trace[i]),
        area_(j.ctx->vtcm_base + (uint64_t)i * j.lay.thread_bytes) {
    // The Q rows and K tiles meet in the tiled product over D padded to 32: both are zero past
    // D (element c of a K tile row r sits at 8 c + r); nothing else writes there.
    const uint32_t d = j_.s.d, pad = lay_.kf_stride / 4 - d;
    if (pad != 0) {
      const uint32_t q_rows = j_.t.q_tile * j_.t.head_group * j_.t.kv_heads;
      for (uint32_t m = 0; m < q_rows; ++m) htp_memset(stage(m) + (uint64_t)d * 4, 0, (uint64_t)pad * 4);
      for (uint32_t t = 0; t < htp_fa_tiles(j_.t.block_kv); ++t)
        htp_memset(k_tile(t) + (uint64_t)d * HTP_FA_TILE_ROWS, 0, (uint64_t)pad * HTP_FA_TILE_ROWS * 4);
    }
  }

  bool run(const fa_unit& u) {
    u_ = u;
    group_rows_ = u.nq * u.gh;
    rows_ = group_rows_ * u.n_kvh;
    load_q();
    if (ok_) init_state();
    if (ok_ && j_.ctx->src[3] != nullptr) mark_live_blocks();
    if (ok_) stream_kv();
    if (ok_) {
      if (j_.split)
        save_partials();
      else
        finish();
    }
    return ok_;
  }

 private:
  uint8_t* slot(uint32_t s) { return area_ + (uint64_t)s * lay_.slot_bytes; }
  float* kf_row(uint32_t c) { return (float*)(area_ + lay_.kf_off + (uint64_t)c * lay_.kf_stride); }
  float* k_tile(uint32_t t) { return (float*)(area_ + lay_.kt_off + (uint64_t)t * lay_.kt_row_bytes); }
  float* s_row(uint32_t m) { return (float*)(area_ + lay_.s_off + (uint64_t)m * lay_.s_stride); }
  float* o_row(uint32_t m) { return (float*)(area_ + lay_.o_off) + (uint64_t)m * j_.s.dv; }
  float* ot_row(uint32_t m) { return (float*)(area_ + lay_.ot_off) + (uint64_t)m * j_.s.dv; }
  float* run_max() { return (float*)(area_ + lay_.m_off); }
  float* run_sum() { return (float*)(area_ + lay_.l_off); }
  float* rescale() { return (float*)(area_ + lay_.alpha_off); }
  uint32_t* live() { return (uint32_t*)(area_ + lay_.live_off); }
  uint32_t block_rows(uint32_t b) const { return htp_min(j_.t.block_kv, j_.s.n_kv - b * j_.t.block_kv); }
  // Query head of local head index hl = g * gqa + hh.
  uint32_t head_of(uint32_t hl) const { return u_.h0 + hl; }
  uint32_t n_local_heads() const { return (u_.n_kvh - 1) * j_.gqa + u_.gh; }

  // Q rows into their staging rows (unit row order), scaled by q_scale; sinks and slopes of
  // the unit's heads.
  void load_q() {
    const tensor_ref& q = *j_.ctx->src[0];
    const uint32_t d = j_.s.d;
    for (uint32_t g = 0; g < u_.n_kvh; ++g)
      for (uint32_t hh = 0; hh < u_.gh; ++hh) {
        const uint32_t h = head_of(g * j_.gqa + hh);
        const uint8_t* src =
            q.data + (uint64_t)u_.iq0 * q.t.nb[1] + (uint64_t)h * q.t.nb[2] + (uint64_t)u_.is * q.t.nb[3];
        ok_ &= dma_queue_push_2d(q_, stage(g * group_rows_ + hh), u_.gh * lay_.qs_stride, src, q.t.nb[1],
                                 d * 4, u_.nq);
      }
    const tensor_ref* sinks = j_.ctx->src[4];
    const uint32_t n_heads = n_local_heads();
    if (sinks != nullptr)
      ok_ &= dma_queue_push(q_, area_ + lay_.sinks_off, sinks->data + (uint64_t)u_.h0 * 4, n_heads * 4);
    trace_begin(tr_, HTP_EV_DMA_WAIT, 0xffff);
    // Scaled into their staging rows: in place where the DMA put them, from DDR in zero-copy.
    for (uint32_t g = 0; g < u_.n_kvh && ok_; ++g)
      for (uint32_t hh = 0; hh < u_.gh; ++hh) {
        const dma_ptr p = dma_queue_pop(q_);
        for (uint32_t iq = 0; iq < u_.nq; ++iq) {
          auto* row = (float*)stage(g * group_rows_ + iq * u_.gh + hh);
          const auto* src = (const float*)(p.data + (uint64_t)iq * p.stride);
          vm_.scale_bias(src, row, d, j_.p.q_scale, 0.0f);
        }
      }
    if (sinks != nullptr && ok_) {
      const auto* sv = (const float*)dma_queue_pop(q_).data;
      for (uint32_t hl = 0; hl < n_heads; ++hl) sink_[hl] = sv[hl];
    }
    trace_end(tr_, HTP_EV_DMA_WAIT, 0xffff);
    for (uint32_t hl = 0; hl < n_heads; ++hl) slope_[hl] = alibi_slope(j_.p, head_of(hl));
  }

  // Staging row m (unit row order) for the Q rows as they arrive.
  uint8_t* stage(uint32_t m) { return area_ + lay_.qs_off + (uint64_t)m * lay_.qs_stride; }

  void init_state() {
    float* m = run_max();
    float* l = run_sum();
    for (uint32_t r = 0; r < rows_; ++r) {
      m[r] = kNegInf;
      l[r] = 0.0f;
    }
    htp_memset(area_ + lay_.o_off, 0, (uint64_t)rows_ * j_.s.dv * 4);
  }

  void push_mask_tile(uint32_t s, uint32_t b) {
    const tensor_ref& mk = *j_.ctx->src[3];
    const uint8_t* src = mk.data + (uint64_t)u_.iq0 * mk.t.nb[1] + (uint64_t)b * j_.t.block_kv * 2;
    ok_ &= dma_queue_push_2d(q_, slot(s) + lay_.mask_off, lay_.mask_stride, src, mk.t.nb[1],
                             block_rows(b) * 2, u_.nq);
  }

  // Pass 1: a block is live when some query of the unit sees some key of it.
  void mark_live_blocks() {
    const uint32_t n_blocks = j_.n_blocks;
    uint32_t* bits = live();
    for (uint32_t w = 0; w < (n_blocks + 31) / 32; ++w) bits[w] = 0;
    uint32_t next = u_.b_first, k = 0;
    uint32_t fetched[HTP_FA_SLOTS];
    uint32_t n_fetched = 0;
    for (; n_fetched < HTP_FA_SLOTS && next < n_blocks; ++n_fetched, next += u_.b_step) {
      push_mask_tile(n_fetched, next);
      fetched[n_fetched] = next;
    }
    for (; k < n_fetched && ok_; ++k) {
      const uint32_t s = k % HTP_FA_SLOTS;
      const uint32_t b = fetched[s];
      trace_begin(tr_, HTP_EV_DMA_WAIT, (uint16_t)b);
      const dma_ptr t = dma_queue_pop(q_);
      trace_end(tr_, HTP_EV_DMA_WAIT, (uint16_t)b);
      const uint32_t nb = block_rows(b);
      bool any = false;
      for (uint32_t r = 0; r < u_.nq && !any; ++r)
        any = row_visible((const uint16_t*)(t.data + (uint64_t)r * t.stride), nb);
      if (any) bits[b / 32] |= 1u << (b % 32);
      if (next < n_blocks) {
        push_mask_tile(s, next);
        fetched[s] = next;
        ++n_fetched;
        next += u_.b_step;
      }
    }
  }

  // The unit's next live block from b on (b itself included), or n_blocks.
  uint32_t next_live(uint32_t b) {
    const bool masked = j_.ctx->src[3] != nullptr;
    const uint32_t* bits = live();
    while (b < j_.n_blocks && masked && (bits[b / 32] & (1u << (b % 32))) == 0) b += u_.b_step;
    return b < j_.n_blocks ? b : j_.n_blocks;
  }

  void push_block(uint32_t s, uint32_t b) {
    const tensor_ref& k = *j_.ctx->src[1];
    const tensor_ref& v = *j_.ctx->src[2];
    const uint64_t j0 = (uint64_t)b * j_.t.block_kv;
    const uint32_t nb = block_rows(b);
    const uint8_t* ks = k.data + j0 * k.t.nb[1] + (uint64_t)u_.hk0 * k.t.nb[2] + (uint64_t)u_.isk * k.t.nb[3];
    const uint8_t* vs = v.data + j0 * v.t.nb[1] + (uint64_t)u_.hk0 * v.t.nb[2] + (uint64_t)u_.isk * v.t.nb[3];
    ok_ &= dma_queue_push_2d(q_, slot(s) + lay_.k_off, lay_.k_stride, ks, k.t.nb[1], j_.t.k_span, nb);
    ok_ &= dma_queue_push_2d(q_, slot(s) + lay_.v_off, lay_.v_stride, vs, v.t.nb[1], j_.t.v_span, nb);
    if (q_->mode == HTP_DMA_ZERO_COPY) {
      prefetch_rows(ks, k.t.nb[1], j_.t.k_span, nb);
      prefetch_rows(vs, v.t.nb[1], j_.t.v_span, nb);
    }
    if (j_.ctx->src[3] != nullptr) push_mask_tile(s, b);
  }

  // Pass 2: live K/V blocks through the two slots; the FIFO order is the slot rotation.
  void stream_kv() {
    const bool has_mask = j_.ctx->src[3] != nullptr;
    uint32_t blocks[HTP_FA_SLOTS];
    uint32_t n_fetched = 0;
    uint32_t next = next_live(u_.b_first);
    for (uint32_t s = 0; s < HTP_FA_SLOTS && next < j_.n_blocks; ++s) {
      push_block(s, next);
      blocks[s] = next;
      ++n_fetched;
      next = next_live(next + u_.b_step);
    }
    for (uint32_t k = 0; k < n_fetched && ok_; ++k) {
      const uint32_t s = k % HTP_FA_SLOTS;
      const uint32_t b = blocks[s];
      trace_begin(tr_, HTP_EV_DMA_WAIT, (uint16_t)b);
      const dma_ptr kp = dma_queue_pop(q_);
      const dma_ptr vp = dma_queue_pop(q_);
      const dma_ptr mp = has_mask ? dma_queue_pop(q_) : dma_ptr{};
      trace_end(tr_, HTP_EV_DMA_WAIT, (uint16_t)b);
      trace_begin(tr_, HTP_EV_COMPUTE, (uint16_t)b);
      for (uint32_t g = 0; g < u_.n_kvh; ++g)
        compute_block(g, kp.data + (uint64_t)g * j_.s.k_head_stride, kp.stride,
                      vp.data + (uint64_t)g * j_.s.v_head_stride, vp.stride, has_mask ? &mp : nullptr,
                      block_rows(b));
      trace_end(tr_, HTP_EV_COMPUTE, (uint16_t)b);
      if (next < j_.n_blocks) {
        push_block(s, next);
        blocks[s] = next;
        ++n_fetched;
        next = next_live(next + u_.b_step);
      }
    }
  }

  // One block of K/V head g against that head's query rows.
  void compute_block(uint32_t g, const uint8_t* kd, uint32_t k_stride, const uint8_t* vd, uint32_t v_stride,
                     const dma_ptr* mp, uint32_t nb) {
    const uint32_t d = j_.s.d, dv = j_.s.dv, rows = group_rows_, m0 = g * group_rows_;
    const uint32_t nb_pad = (uint32_t)htp_fa_pad32(nb);
    // K as F32 row tiles: each row converted, then 8 keys at a time transposed into a tile row
    // (element c of key r at 8 c + r: block tiles of 32 x 8 follow each other).
    for (uint32_t c = 0; c < nb; ++c)
      vm_.f16_to_f32((const uint16_t*)(kd + (uint64_t)c * k_stride), kf_row(c), d);
    for (uint32_t c0 = 0; c0 < nb; c0 += HTP_FA_TILE_ROWS)
      vm_.transpose(kf_row(c0), lay_.kf_stride / 4, k_tile(c0 / HTP_FA_TILE_ROWS), HTP_FA_TILE_ROWS,
                    htp_min(HTP_FA_TILE_ROWS, nb - c0), d);
    // S[ml][c] = Q row ml . K row c (scale folded into Q), zero padded to 32 for P.V.
    const uint32_t s_stride = lay_.s_stride / 4;
    j_.mm_f32->gemm((const uint8_t*)k_tile(0), stage(m0), lay_.qs_stride, rows, s_row(0), s_stride, d, nb);
    if (nb < nb_pad)
      for (uint32_t ml = 0; ml < rows; ++ml) htp_memset(s_row(ml) + nb, 0, (uint64_t)(nb_pad - nb) * 4);
    // Online softmax per row: P = exp(S - m_new) in place, alpha = exp(m_old - m_new).
    float* run_m = run_max() + m0;
    float* run_l = run_sum() + m0;
    float* alpha = rescale() + m0;
    const float softcap = j_.p.softcap;
    for (uint32_t iq = 0; iq < u_.nq; ++iq) {
      const auto* mrow = mp != nullptr ? (const uint16_t*)(mp->data + (uint64_t)iq * mp->stride) : nullptr;
      for (uint32_t hh = 0; hh < u_.gh; ++hh) {
        const uint32_t ml = iq * u_.gh + hh;
        float* sr = s_row(ml);
        alpha[ml] = 1.0f;
        if (softcap != 0.0f) {
          vm_.tanh(sr, sr, nb);
          vm_.scale_bias(sr, sr, nb, softcap, 0.0f);
        }
        const float bmax = mrow != nullptr
                               ? vm_.scale_add_max_f16(sr, mrow, sr, nb, 1.0f, slope_[g * j_.gqa + hh])
                               : vm_.max(sr, nb);
        const float m_old = run_m[ml];
        const float m_new = bmax > m_old ? bmax : m_old;
        if (m_new == kNegInf) {  // every key so far masked: P = 0 leaves O as it is
          htp_memset(sr, 0, (uint64_t)nb * 4);
          continue;
        }
        const float sum = vm_.exp_sub_sum(sr, sr, nb, m_new);
        if (m_new != m_old) {
          alpha[ml] = m_old == kNegInf ? 0.0f : scalar_exp(vm_, m_old - m_new);
          run_l[ml] *= alpha[ml];
          run_m[ml] = m_new;
        }
        run_l[ml] += sum;
      }
    }
    // O = alpha O + P.V
    for (uint32_t ml = 0; ml < rows; ++ml)
      if (alpha[ml] != 1.0f) vm_.scale_bias(o_row(m0 + ml), o_row(m0 + ml), dv, alpha[ml], 0.0f);
    // Few query rows (decode): P.V straight from the value rows, each row's accumulators in
    // registers over the block: tiling V^T for them cost more than the product
    // (hexllm_attention_bench, decode).
    if (rows <= kDirectPvRows) {
      vm_.pv_f16({s_row(0), s_stride, rows, (const uint16_t*)vd, v_stride / 2u, nb, o_row(m0), dv, dv});
      return;
    }
    // V^T as F16 tiles: row tile t holds dims 8t..8t+7; its block tile b keys 32b..32b+31,
    // as [32 keys][8 dims]. Padding keys and dims are zero (P is zero there too, but 0 * nan
    // would not be).
    uint8_t* vt = area_ + lay_.vt_off;
    const uint32_t n_tiles = (uint32_t)htp_fa_tiles(dv);
    for (uint32_t t = 0; t < n_tiles; ++t) {
      const uint32_t d0 = t * HTP_FA_TILE_ROWS;
      auto* dst = (uint16_t*)(vt + (uint64_t)t * (nb_pad / HTP_FA_TILE_K) * HTP_FA_F16_TILE_BYTES);
      if (d0 + HTP_FA_TILE_ROWS <= dv) {
        for (uint32_t c = 0; c < nb; ++c)
          htp_memcpy(dst + (uint64_t)c * HTP_FA_TILE_ROWS,
                     (const uint16_t*)(vd + (uint64_t)c * v_stride) + d0, HTP_FA_TILE_ROWS * 2);
      } else {
        for (uint32_t c = 0; c < nb; ++c) {
          const auto* vr = (const uint16_t*)(vd + (uint64_t)c * v_stride);
          for (uint32_t r = 0; r < HTP_FA_TILE_ROWS; ++r)
            dst[c * HTP_FA_TILE_ROWS + r] = d0 + r < dv ? vr[d0 + r] : 0;
        }
      }
      htp_memset(dst + (uint64_t)nb * HTP_FA_TILE_ROWS, 0, (uint64_t)(nb_pad - nb) * HTP_FA_TILE_ROWS * 2);
    }
    j_.mm_f16->gemm(vt, (const uint8_t*)s_row(0), lay_.s_stride, rows, ot_row(0), dv, nb, dv);
    for (uint32_t ml = 0; ml < rows; ++ml) vm_.axpy(1.0f, ot_row(ml), o_row(m0 + ml), dv);
  }

  // By heads: O / l (with the sink in the denominator) into the output, then the write-back.
  void finish() {
    const tensor_ref& dst = *j_.ctx->dst;
    const uint32_t dv = j_.s.dv;
    const uint32_t run_bytes = u_.gh * dv * 4;  // one query's heads, contiguous in VTCM and DDR
    uint8_t* ddr = dst.data + (uint64_t)u_.h0 * dst.t.nb[1] + (uint64_t)u_.iq0 * dst.t.nb[2] +
                   (uint64_t)u_.is * dst.t.nb[3];
    uint8_t* o_base = area_ + lay_.o_off;
    const dma_view out = dma_queue_write_target(q_, o_base, run_bytes, ddr, dst.t.nb[2]);
    const bool has_sinks = j_.ctx->src[4] != nullptr;
    const float* run_m = run_max();
    const float* run_l = run_sum();
    for (uint32_t iq = 0; iq < u_.nq; ++iq)
      for (uint32_t hh = 0; hh < u_.gh; ++hh) {
        const uint32_t m = iq * u_.gh + hh;
        float l = run_l[m], a = 1.0f;
        if (has_sinks) {
          const float mo = run_m[m], sink = sink_[hh];
          const float mf = sink > mo ? sink : mo;
          a = mo == kNegInf ? 0.0f : scalar_exp(vm_, mo - mf);
          l = l * a + scalar_exp(vm_, sink - mf);
        }
        const float f = l > 0.0f ? a / l : 0.0f;  // no visible key (and no sink): zeros
        vm_.scale_bias(o_row(m), (float*)(out.ptr + (uint64_t)iq * out.stride) + (uint64_t)hh * dv, dv, f,
                       0.0f);
      }
    ok_ &= dma_queue_push_2d(q_, ddr, dst.t.nb[2], o_base, run_bytes, run_bytes, u_.nq);
    // O is reused by the next unit: wait for the write-back.
    trace_begin(tr_, HTP_EV_FLUSH, 0);
    dma_queue_flush(q_);
    trace_end(tr_, HTP_EV_FLUSH, 0);
  }

  // Split KV: the unit's (m, l, O) rows into its partial-results area, for fa_combine.
  void save_partials() {
    auto* part = (float*)(j_.ctx->vtcm_base + lay_.partials_off + (uint64_t)u_.index * lay_.partial_bytes);
    const uint32_t dv = j_.s.dv;
    for (uint32_t m = 0; m < rows_; ++m) {
      float* r = part + (uint64_t)m * (2 + dv);
      r[0] = run_max()[m];
      r[1] = run_sum()[m];
      htp_memcpy(r + 2, o_row(m), (uint64_t)dv * 4);
    }
  }

  const fa_job& j_;
  const vmath_ops& vm_;
  const htp_fa_layout& lay_;
  dma_queue* q_;
  trace_buf* tr_;
  uint8_t* area_;
  fa_unit u_{};
  uint32_t group_rows_ = 0, rows_ = 0;
  bool ok_ = true;
  float slope_[HTP_FA_MAX_HEADS] = {};
  float sink_[HTP_FA_MAX_HEADS] = {};
};

void fa_worker(unsigned n, unsigned i, void* data) {
  auto* j = (fa_job*)data;
  unit_runner runner(*j, i);
  bool ok = true;
  const uint32_t step = n * j->unit_step;
  for (uint32_t u = j->unit0 + i * j->unit_step; u < j->p.n_units && ok; u += step) ok = runner.run(unit_at(*j, u));
  if (!ok) dma_queue_flush(&j->ctx->dma[i]);
  j->status[i] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

// Split KV: for each sequence, merges the chunks' partial results row by row (the online
// softmax rescale across chunks, sinks in the denominator) into the output. Every query row
// of a unit is (KV head g, query iq, head hh) = (g * n_q + iq) * gqa + hh.
void fa_combine(unsigned, unsigned i, void* data) {
  auto* j = (fa_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const vmath_ops& vm = *j->vm;
  const htp_fa_layout& lay = j->lay;
  const tensor_ref& dst = *ctx->dst;
  dma_queue* q = &ctx->dma[i];
  trace_buf* tr = &ctx->trace[i];
  const uint32_t dv = j->s.dv, n_q = j->s.n_q, n_head = j->s.n_head, n_chunks = j->p.n_parts.div;
  const uint32_t run_bytes = n_head * dv * 4;                                    // one query's heads
  uint8_t* stage = ctx->vtcm_base + (uint64_t)i * lay.thread_bytes + lay.o_off;  // n_q x n_head x Dv
  const bool has_sinks = ctx->src[4] != nullptr;
  float sink_v[HTP_FA_MAX_HEADS];
  bool ok = true;
  if (has_sinks) {
    uint8_t* buf = ctx->vtcm_base + (uint64_t)i * lay.thread_bytes + lay.sinks_off;
    ok &= dma_queue_push(q, buf, ctx->src[4]->data, n_head * 4);
    const dma_ptr p = dma_queue_pop(q);
    for (uint32_t h = 0; h < n_head && ok; ++h) sink_v[h] = ((const float*)p.data)[h];
  }
  trace_begin(tr, HTP_EV_COMPUTE, 0xfffe);
  for (uint32_t is = 0; is < j->s.n_seq && ok; ++is) {
    uint8_t* ddr = dst.data + (uint64_t)is * dst.t.nb[3];
    const dma_view out = dma_queue_write_target(q, stage, run_bytes, ddr, dst.t.nb[2]);
    for (uint32_t iq = 0; iq < n_q; ++iq)
      for (uint32_t h = 0; h < n_head; ++h) {
        const uint32_t g = h / j->gqa, hh = h % j->gqa;
        const uint64_t m = ((uint64_t)g * n_q + iq) * j->gqa + hh;
        float mx = has_sinks ? sink_v[h] : kNegInf;
        for (uint32_t c = 0; c < n_chunks; ++c) {
          const auto* r = (const float*)(ctx->vtcm_base + lay.partials_off +
                                         (uint64_t)(is * n_chunks + c) * lay.partial_bytes) +
                          m * (2 + dv);
          if (r[0] > mx) mx = r[0];
        }
        float* o = (float*)(out.ptr + (uint64_t)iq * out.stride) + (uint64_t)h * dv;
        htp_memset(o, 0, (uint64_t)dv * 4);
        if (mx == kNegInf) continue;  // no visible key and no sink: zeros
        float l = has_sinks ? scalar_exp(vm, sink_v[h] - mx) : 0.0f;
        for (uint32_t c = 0; c < n_chunks; ++c) {
          const auto* r = (const float*)(ctx->vtcm_base + lay.partials_off +
                                         (uint64_t)(is * n_chunks + c) * lay.partial_bytes) +
                          m * (2 + dv);
          if (r[0] == kNegInf) continue;  // the chunk saw no key of this row
          const float w = scalar_exp(vm, r[0] - mx);
          l += w * r[1];
          vm.axpy(w, r + 2, o, dv);
        }
        if (l > 0.0f) vm.scale_bias(o, o, dv, 1.0f / l, 0.0f);
      }
    ok &= dma_queue_push_2d(q, ddr, dst.t.nb[2], stage, run_bytes, run_bytes, n_q);
    dma_queue_flush(q);  // the staging rows are reused for the next sequence
  }
  trace_end(tr, HTP_EV_COMPUTE, 0xfffe);
  j->status[i] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_flash_attn(htp_op_ctx* ctx) {
  if (ctx->op->opcode != HTP_OP_FLASH_ATTN_EXT) return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr || ctx->src[2] == nullptr)
    return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor& tq = ctx->src[0]->t;
  const htp_tensor& tk = ctx->src[1]->t;
  const htp_tensor& tv = ctx->src[2]->t;
  const htp_tensor* mask = ctx->src[3] != nullptr ? &ctx->src[3]->t : nullptr;
  const htp_tensor* sinks = ctx->src[4] != nullptr ? &ctx->src[4]->t : nullptr;
  htp_status st = htp_fa_supported(td, tq, tk, tv, mask, sinks);
  if (st != HTP_OK) return st;
  fa_job job;
  job.ctx = ctx;
  job.vm = &vmath_select();
  const vec_kernels& vk = htp_vec_select();
  job.mm_f32 = &vk.for_tile(HTP_TILE_F32_X8);
  job.mm_f16 = &vk.for_tile(HTP_TILE_F16_X8);
  job.p = htp_kparams_get<htp_fa_params>(*ctx->op);
  job.s = htp_fa_shape_of(tq, tk, tv);
  if (job.s.n_q == 0 || job.s.n_head == 0 || job.s.n_seq == 0) return HTP_OK;
  st = htp_fa_params_check(job.p, td, tq, tk, tv, mask, sinks, ctx->op->params, ctx->n_threads, ctx->vtcm_size,
                          &job.t, &job.lay);
  if (st != HTP_OK) return st;
  job.gqa = job.s.n_head / job.s.n_head_kv;
  job.n_blocks = htp_fa_ceil_div(job.s.n_kv, job.t.block_kv);
  job.split = (job.p.flags & HTP_FA_SPLIT_KV) != 0;
  job.unit0 = 0;
  job.unit_step = 1;
  if (ctx->mdev.count > 1) {
    // By heads, devices interleave units as workers do (causal prefill's late units cost more).
    // A unit writes whole head rows of the output, so it owns its lines when every head row
    // does. Split KV combines all heads at the end: device 0 alone, as when too few units.
    const bool heads_lined = htp_mdev_rows_per_chunk(td, job.s.dv * 4) == 1;
    if (!job.split && heads_lined && job.p.n_units >= ctx->mdev.count) {
      job.unit0 = ctx->mdev.idx;
      job.unit_step = ctx->mdev.count;
    } else if (ctx->mdev.idx != 0) {
      return HTP_OK;
    }
  }
  st = run_workers(ctx, fa_worker, &job, job.status, job.p.n_threads);
  if (st != HTP_OK) return st;
  if (job.split) {
    st = run_workers(ctx, fa_combine, &job, job.status, 1);
    if (st != HTP_OK) return st;
  }
  return HTP_OK;
}

}  // namespace hexllm::htp
