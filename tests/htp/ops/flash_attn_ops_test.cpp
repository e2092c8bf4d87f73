// FLASH_ATTN_EXT on the device against the reference backend (scores, softmax and the weighted
// sum in double): head sizes, KV lengths, query counts, GQA ratios, masks (causal with padding,
// sliding windows, finite ALiBi distances, fully masked rows), softcap, ALiBi, sinks. K and V
// are permuted views of an F16 KV cache [D * n_head_kv, n_ctx] and Q a permuted view of the
// projection output, exactly as model/graph_builder.cpp builds them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "htp/abi/flash_attn_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// docs/DESIGN.md §9 allows flash attention 5e-4, but that would let real bugs through (one key of 1024
// dropped moves the output by ~1e-6 NMSE). Both sides read the same F16 K/V; the kernel keeps
// Q, scores, the online softmax and O in F32 (vmath exp/tanh within ~2e-6 relative), so it
// matches the double reference to float rounding (measured ~1e-13). Held to 1e-9.
constexpr double kNmse = 1e-9;
constexpr uint16_t kZero = 0x0000;
constexpr uint16_t kNegInf = 0xfc00;

// An F16 [ne0, ne1] leaf with the given halves. The harness builds leaves from explicit values
// only as I32; such a leaf's bytes are reinterpreted here as F16.
Tensor* f16_leaf(OpTester& t, int64_t ne0, int64_t ne1, const std::vector<uint16_t>& halves) {
  std::vector<int32_t> words((halves.size() + 1) / 2, 0);
  std::memcpy(words.data(), halves.data(), halves.size() * sizeof(uint16_t));
  Tensor* leaf = t.ids_from({static_cast<int64_t>(words.size())}, words);
  leaf->type = Type::F16;
  leaf->ne[0] = ne0;
  leaf->ne[1] = ne1;
  graph::set_contiguous_strides(*leaf);
  return leaf;
}

// Masks [n_kv, rows] for queries at positions pos0 + r (rows >= n_q: padded like llama.cpp's).
// Cell j holds position j; cells >= valid are padding.
std::vector<uint16_t> causal_mask(int64_t n_kv, int64_t rows, int64_t pos0, int64_t valid,
                                  int64_t window = 0) {
  std::vector<uint16_t> m(static_cast<size_t>(n_kv * rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n_kv; ++j) {
      const int64_t p = pos0 + r;
      const bool visible = j < valid && j <= p && (window <= 0 || p - j < window);
      m[static_cast<size_t>(r * n_kv + j)] = visible ? kZero : kNegInf;
    }
  return m;
}

// ALiBi-style finite mask: -(p - j) for visible cells, -inf for the future.
std::vector<uint16_t> distance_mask(int64_t n_kv, int64_t rows, int64_t pos0) {
  std::vector<uint16_t> m(static_cast<size_t>(n_kv * rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n_kv; ++j) {
      const int64_t p = pos0 + r;
      m[static_cast<size_t>(r * n_kv + j)] = j <= p ? fp32_to_fp16(-static_cast<float>(p - j)) : kNegInf;
    }
  return m;
}

struct Shape {
  int64_t d, dv, n_head, n_head_kv, n_q, n_kv;
  std::string label() const {
    const std::string dvs = dv != d ? strprintf("/Dv%lld", (long long)dv) : "";
    return strprintf("D%lld%s heads%lld/%lld n_q%lld n_kv%lld", (long long)d, dvs.c_str(), (long long)n_head,
                     (long long)n_head_kv, (long long)n_q, (long long)n_kv);
  }
};

struct Qkv {
  Tensor* q;  // [D, n_q, n_head], rows of one head strided by the projection row
  Tensor* k;  // [D, n_kv, n_head_kv], rows of one head strided by the cache row
  Tensor* v;
};

// Q, K and V the way the graph builder makes them; the cache has room past n_kv.
Qkv make_qkv(OpTester& t, const Shape& s, float q_range = 1.0f) {
  const int64_t n_ctx = s.n_kv + 5;
  Tensor* q = t.input(Type::F32, {s.d, s.n_head, s.n_q}, -q_range, q_range);
  Tensor* kc = t.input(Type::F16, {s.d * s.n_head_kv, n_ctx});
  Tensor* vc = t.input(Type::F16, {s.dv * s.n_head_kv, n_ctx});
  const size_t f16 = sizeof(uint16_t);
  Tensor* k = graph::view_3d(t.ctx(), kc, s.d, s.n_head_kv, s.n_kv, s.d * f16, kc->nb[1], 0);
  Tensor* v = graph::view_3d(t.ctx(), vc, s.dv, s.n_head_kv, s.n_kv, s.dv * f16, vc->nb[1], 0);
  return {graph::permute(t.ctx(), q, 0, 2, 1, 3), graph::permute(t.ctx(), k, 0, 2, 1, 3),
          graph::permute(t.ctx(), v, 0, 2, 1, 3)};
}

float scale_of(const Shape& s) { return 1.0f / std::sqrt(static_cast<float>(s.d)); }

// Every head size x KV length x GQA ratio, each with one of the query counts (rotating so that
// every head size, KV length and GQA ratio meets every query count; the full product would make
// the double-precision reference too slow for a unit test), under a causal mask with padded
// rows and padded cells.
TEST(HtpFlashAttnOps, HeadDimsKvLengthsGqa) {
  const int64_t n_qs[] = {1, 4, 33, 128};
  int k = 0;
  for (int64_t d : {64, 128, 40})
    for (int64_t n_kv : {1, 7, 113, 512, 1024})
      for (int64_t gqa : {1, 2, 4, 7}) {
        const Shape s{d, d, 2 * gqa, 2, n_qs[(k + k / 4 + k / 20) % 4], n_kv};
        ++k;
        expect_op_matches(s.label(), [&](OpTester& t) {
          const Qkv a = make_qkv(t, s);
          const int64_t valid = s.n_kv - s.n_kv / 8;  // the last cells are padding
          const int64_t pos0 = std::max<int64_t>(0, valid - s.n_q);
          Tensor* mask = f16_leaf(t, s.n_kv, s.n_q + 3, causal_mask(s.n_kv, s.n_q + 3, pos0, valid));
          return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f);
        }, kNmse);
      }
}

// Decode and prefill batch sizes, with and without a mask, and a long decode.
TEST(HtpFlashAttnOps, QueryCounts) {
  for (int64_t n_q : {1, 4, 33, 128})
    for (bool masked : {true, false}) {
      const Shape s{64, 64, 8, 2, n_q, 512};
      expect_op_matches(s.label() + (masked ? " causal" : " no mask"), [&](OpTester& t) {
        const Qkv a = make_qkv(t, s);
        Tensor* mask =
            masked ? f16_leaf(t, s.n_kv, s.n_q, causal_mask(s.n_kv, s.n_q, s.n_kv - s.n_q, s.n_kv)) : nullptr;
        return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f);
      }, kNmse);
    }
  const Shape s{64, 64, 32, 8, 1, 4096};
  expect_op_matches(s.label() + " long decode", [&](OpTester& t) {
    const Qkv a = make_qkv(t, s);
    Tensor* mask = f16_leaf(t, s.n_kv, 1, causal_mask(s.n_kv, 1, 4000, 4001));
    return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f);
  }, kNmse);
}

// Decode over a short cache (the graph's n_kv of 256) at several fill levels: by heads where
// the KV heads deal out evenly to the workers, split KV where they do not (1 and 3 KV heads on
// 2 workers), both with fewer live keys than one 64-key block per worker.
TEST(HtpFlashAttnOps, DecodeShortCache) {
  for (int64_t n_head_kv : {1, 2, 3, 4})
    for (int64_t live : {1, 63, 65, 200}) {
      const Shape s{64, 64, 4 * n_head_kv, n_head_kv, 1, 256};
      expect_op_matches(s.label() + strprintf(" live %lld", (long long)live), [&](OpTester& t) {
        const Qkv a = make_qkv(t, s);
        Tensor* mask = f16_leaf(t, s.n_kv, 1, causal_mask(s.n_kv, 1, live - 1, live));
        return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f);
      }, kNmse);
    }
}

// gemma3's sliding-window layers: query p sees cells (p - window, p].
TEST(HtpFlashAttnOps, SlidingWindow) {
  for (int64_t window : {64, 200})
    for (int64_t n_q : {1, 33}) {
      const Shape s{128, 128, 8, 4, n_q, 512};
      expect_op_matches(s.label() + " window " + std::to_string(window), [&](OpTester& t) {
        const Qkv a = make_qkv(t, s);
        const std::vector<uint16_t> m = causal_mask(s.n_kv, s.n_q, 400, 480, window);
        return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, f16_leaf(t, s.n_kv, s.n_q, m), scale_of(s), 0.0f,
                                     0.0f);
      }, kNmse);
    }
}

// Logit soft-capping (gemma2-style), with logits large enough for tanh to bend them.
TEST(HtpFlashAttnOps, Softcap) {
  for (int64_t n_q : {1, 33}) {
    const Shape s{64, 64, 4, 2, n_q, 113};
    expect_op_matches(s.label() + " softcap", [&](OpTester& t) {
      const Qkv a = make_qkv(t, s, 6.0f);
      Tensor* mask = f16_leaf(t, s.n_kv, s.n_q, causal_mask(s.n_kv, s.n_q, s.n_kv - s.n_q, s.n_kv));
      return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 1.5f);
    }, kNmse);
  }
}

// ALiBi: per-head slopes times a finite distance mask; 12 heads exercise both slope series.
TEST(HtpFlashAttnOps, Alibi) {
  for (int64_t n_q : {1, 33}) {
    const Shape s{64, 64, 12, 12, n_q, 113};
    expect_op_matches(s.label() + " alibi", [&](OpTester& t) {
      const Qkv a = make_qkv(t, s);
      Tensor* mask = f16_leaf(t, s.n_kv, s.n_q, distance_mask(s.n_kv, s.n_q, s.n_kv - s.n_q));
      return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 8.0f, 0.0f);
    }, kNmse);
  }
}

// Attention sinks (gpt-oss): exp(sink[h]) joins each head's denominator.
TEST(HtpFlashAttnOps, Sinks) {
  for (bool masked : {true, false}) {
    const Shape s{64, 64, 8, 2, 4, 113};
    expect_op_matches(s.label() + " sinks" + (masked ? " masked" : ""), [&](OpTester& t) {
      const Qkv a = make_qkv(t, s);
      Tensor* sinks = t.input(Type::F32, {s.n_head}, -1.0f, 3.0f);
      Tensor* mask =
          masked ? f16_leaf(t, s.n_kv, s.n_q, causal_mask(s.n_kv, s.n_q, 50, s.n_kv, 32)) : nullptr;
      return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f, sinks);
    }, kNmse);
  }
}

// A query that sees no key gives zeros (with or without a sink); with every row masked the
// whole output is zero, so the NMSE is the absolute error.
TEST(HtpFlashAttnOps, FullyMaskedRows) {
  const Shape s{64, 64, 4, 2, 6, 150};
  for (bool sinks : {false, true}) {
    expect_op_matches(s.label() + " rows 0, 3 masked" + (sinks ? " sinks" : ""), [&](OpTester& t) {
      const Qkv a = make_qkv(t, s);
      std::vector<uint16_t> m = causal_mask(s.n_kv, s.n_q, 100, s.n_kv);
      for (int64_t r : {0, 3})
        for (int64_t j = 0; j < s.n_kv; ++j) m[static_cast<size_t>(r * s.n_kv + j)] = kNegInf;
      Tensor* sk = sinks ? t.input(Type::F32, {s.n_head}) : nullptr;
      Tensor* mask = f16_leaf(t, s.n_kv, s.n_q, m);
      return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f, sk);
    }, kNmse);
    expect_op_matches(s.label() + " all masked" + (sinks ? " sinks" : ""), [&](OpTester& t) {
      const Qkv a = make_qkv(t, s);
      const std::vector<uint16_t> m(static_cast<size_t>(s.n_kv * s.n_q), kNegInf);
      Tensor* sk = sinks ? t.input(Type::F32, {s.n_head}) : nullptr;
      Tensor* mask = f16_leaf(t, s.n_kv, s.n_q, m);
      return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f, sk);
    }, 0.0);
  }
}

// V head size different from K's, and contiguous 4-D inputs with several sequences (Q dim 3
// broadcast over K's).
TEST(HtpFlashAttnOps, OtherLayouts) {
  const Shape s{128, 64, 4, 2, 5, 77};
  expect_op_matches(s.label(), [&](OpTester& t) {
    const Qkv a = make_qkv(t, s);
    Tensor* mask = f16_leaf(t, s.n_kv, s.n_q, causal_mask(s.n_kv, s.n_q, 70, s.n_kv));
    return graph::flash_attn_ext(t.ctx(), a.q, a.k, a.v, mask, scale_of(s), 0.0f, 0.0f);
  }, kNmse);
  // Several sequences with K/V as views of a per-sequence cache [D * n_head_kv, n_kv, n_seq]
  // (heads interleaved in a row, as the decode path reads them).
  for (int64_t n_q : {1, 3}) {
    expect_op_matches("2 sequences, cache views, n_q " + std::to_string(n_q), [&](OpTester& t) {
      const int64_t d = 64, n_kv = 150, n_head_kv = 2;
      Tensor* q = t.input(Type::F32, {d, n_q, 4, 2});
      Tensor* kc = t.input(Type::F16, {d * n_head_kv, n_kv, 2});
      Tensor* vc = t.input(Type::F16, {d * n_head_kv, n_kv, 2});
      auto view = [&](Tensor* c) {
        Tensor* v4 = graph::view_4d(t.ctx(), c, d, n_head_kv, n_kv, 2, d * 2, c->nb[1], c->nb[2], 0);
        return graph::permute(t.ctx(), v4, 0, 2, 1, 3);  // [d, n_kv, n_head_kv, 2]
      };
      Tensor* mask = f16_leaf(t, n_kv, n_q, causal_mask(n_kv, n_q, 140, n_kv));
      return graph::flash_attn_ext(t.ctx(), q, view(kc), view(vc), mask, 0.125f, 0.0f, 0.0f);
    }, kNmse);
  }
  for (int64_t n_seq_kv : {1, 2}) {
    expect_op_matches("4-D, 2 sequences, " + std::to_string(n_seq_kv) + " KV sequences", [&](OpTester& t) {
      Tensor* q = t.input(Type::F32, {64, 3, 4, 2});
      Tensor* k = t.input(Type::F16, {64, 40, 2, n_seq_kv});
      Tensor* v = t.input(Type::F16, {64, 40, 2, n_seq_kv});
      Tensor* mask = f16_leaf(t, 40, 3, causal_mask(40, 3, 30, 40));
      return graph::flash_attn_ext(t.ctx(), q, k, v, mask, 0.125f, 0.0f, 0.0f);
    }, kNmse);
  }
}

// What the device does not take falls back to the reference backend: F32 K/V, an F32 mask,
// a per-head mask.
TEST(HtpFlashAttnOps, RefusesUnsupported) {
  const DeviceConfig c = standard_configs()[0];
  {
    OpTester t;
    Tensor* q = t.input(Type::F32, {64, 2, 4});
    Tensor* k = t.input(Type::F32, {64, 16, 2});
    EXPECT_FALSE(t.run(graph::flash_attn_ext(t.ctx(), q, k, k, nullptr, 0.125f, 0.0f, 0.0f), c).supported);
  }
  {
    OpTester t;
    Tensor* q = t.input(Type::F32, {64, 2, 4});
    Tensor* k = t.input(Type::F16, {64, 16, 2});
    Tensor* mask = t.input(Type::F32, {16, 2});
    EXPECT_FALSE(t.run(graph::flash_attn_ext(t.ctx(), q, k, k, mask, 0.125f, 0.0f, 0.0f), c).supported);
  }
  {
    OpTester t;
    Tensor* q = t.input(Type::F32, {64, 2, 4});
    Tensor* k = t.input(Type::F16, {64, 16, 2});
    Tensor* mask = t.input(Type::F16, {16, 2, 4}, -1.0f, 0.0f);
    EXPECT_FALSE(t.run(graph::flash_attn_ext(t.ctx(), q, k, k, mask, 0.125f, 0.0f, 0.0f), c).supported);
  }
}


// ---- the planner and the kernel's check of its params (header-only, host side) ----------------

htp_tensor tensor_desc(uint32_t type, std::initializer_list<uint32_t> ne,
                       std::initializer_list<uint32_t> nb) {
  htp_tensor t{};
  t.type = type;
  for (int i = 0; i < 4; ++i) {
    t.ne[i] = i < static_cast<int>(ne.size()) ? ne.begin()[i] : 1;
    t.nb[i] = nb.begin()[i];
  }
  return t;
}

// Q, K/V views of a cache and a mask as the graph builder makes them: D 64, 32 heads, 8 KV heads.
struct Descs {
  htp_tensor q, k, mask, dst;
};
Descs llama_descs(uint32_t n_q, uint32_t n_kv) {
  const uint32_t d = 64, h = 32, hk = 8;
  return {tensor_desc(HTP_TYPE_F32, {d, n_q, h}, {4, d * h * 4, d * 4, d * h * 4 * n_q}),
          tensor_desc(HTP_TYPE_F16, {d, n_kv, hk}, {2, d * hk * 2, d * 2, d * hk * 2 * n_kv}),
          tensor_desc(HTP_TYPE_F16, {n_kv, n_q}, {2, n_kv * 2, n_kv * 2 * n_q, n_kv * 2 * n_q}),
          tensor_desc(HTP_TYPE_F32, {d, h, n_q}, {4, d * 4, d * h * 4, d * h * 4 * n_q})};
}

TEST(HtpFlashAttnPlan, DecodeSplitsKvPrefillSplitsHeads) {
  // Decode: one unit per worker, each over every head and a share of the blocks.
  Descs a = llama_descs(1, 4096);
  htp_fa_params p{};
  ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.flags, static_cast<uint32_t>(HTP_FA_SPLIT_KV));
  EXPECT_EQ(p.n_units, 2u);
  EXPECT_EQ(p.n_threads, 2u);
  EXPECT_EQ(p.head_group, 4u);
  // Decode on a short cache (n_kv <= 256): by heads when the 8 KV heads deal out evenly (2 or
  // 4 workers: one KV head with its 4 query heads a unit, no combine pass), split KV when not
  // (3 workers).
  a = llama_descs(1, 256);
  for (uint32_t threads : {2u, 4u}) {
    ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, threads, 8u << 20, &p), HTP_OK);
    EXPECT_EQ(p.flags, 0u) << threads << " threads";
    EXPECT_EQ(p.n_units, 8u) << threads << " threads";
    EXPECT_EQ(p.head_group, 4u) << threads << " threads";
    EXPECT_EQ(p.q_tile, 1u) << threads << " threads";
  }
  ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 3, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.flags, static_cast<uint32_t>(HTP_FA_SPLIT_KV));
  EXPECT_EQ(p.n_units, 3u);
  // One step longer than the short cache: split KV again.
  a = llama_descs(1, 257);
  ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.flags, static_cast<uint32_t>(HTP_FA_SPLIT_KV));
  // Prefill: the 4 query heads of a KV head x 32 queries = 128 rows share each K/V block.
  a = llama_descs(512, 512);
  ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.flags, 0u);
  EXPECT_EQ(p.head_group, 4u);
  EXPECT_EQ(p.q_tile, 32u);
  EXPECT_EQ(p.n_units, 16u * 8u);
  // A small arena shrinks the tiles; a tiny one is refused.
  ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 256u << 10, &p), HTP_OK);
  EXPECT_LE(static_cast<uint64_t>(p.total_bytes), 256u << 10);
  EXPECT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 4u << 10, &p), HTP_ERR_VTCM_TOO_SMALL);
}

TEST(HtpFlashAttnPlan, KernelRejectsTamperedParams) {
  for (uint32_t n_q : {1u, 512u}) {
    const Descs a = llama_descs(n_q, 1024);
    htp_fa_params good{};
    ASSERT_EQ(htp_fa_plan(a.dst, a.q, a.k, a.k, &a.mask, nullptr, 2, 8u << 20, &good), HTP_OK);
    good.q_scale = 1.0f;  // what the host computes for scale 1, no softcap, no ALiBi
    const int32_t op_params[HTP_MAX_PARAMS] = {0x3f800000};  // f[0] = 1.0f
    htp_fa_tiling t{};
    htp_fa_layout lay{};
    auto check = [&](const htp_fa_params& p, uint32_t vtcm) {
      return htp_fa_params_check(p, a.dst, a.q, a.k, a.k, &a.mask, nullptr, op_params, 2, vtcm, &t, &lay);
    };
    EXPECT_EQ(check(good, 8u << 20), HTP_OK);
    // Any of these would send the kernel's DMA or indexing out of bounds.
    const std::vector<std::function<void(htp_fa_params&)>> tamper = {
        [](htp_fa_params& p) { p.n_units += 1; },
        [](htp_fa_params& p) { p.block_kv = 2048; },
        [](htp_fa_params& p) { p.q_tile += 1; },
        [](htp_fa_params& p) { p.head_group = 5; },
        [](htp_fa_params& p) { p.n_threads = 3; },
        [](htp_fa_params& p) { p.total_bytes -= 128; },
        [](htp_fa_params& p) { p.n_parts.mul ^= 1; },
        [](htp_fa_params& p) { p.flags ^= HTP_FA_SPLIT_KV; },
        [](htp_fa_params& p) { p.flags |= 0x80; },
    };
    for (size_t i = 0; i < tamper.size(); ++i) {
      htp_fa_params p = good;
      tamper[i](p);
      EXPECT_NE(check(p, 8u << 20), HTP_OK) << "tampering " << i << ", n_q " << n_q;
    }
    // The arena the session really has is what counts.
    EXPECT_NE(check(good, good.total_bytes - 1), HTP_OK);
  }
}

// ---- speed (not a test: prints figures; run with --gtest_also_run_disabled_tests) -------------
//
// Time of one FLASH_ATTN_EXT for the shapes of a small llama (head size 64, 32 query heads,
// 8 KV heads, causal mask over the whole cache), against a plain scalar implementation of the
// same math on the same data (one thread, F32 scores and softmax, every key scored). Medians of
// several runs. The machine is shared, so besides the device's own per-op timer (wall time)
// the CPU time of the process during the call is reported: with one worker in zero-copy mode
// it is the kernel's cost; the scalar code is timed by its thread's CPU time.

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_ms(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct Timing {
  double wall_ms, cpu_ms;
};

struct BenchData {
  int64_t d = 64, n_head = 32, n_head_kv = 8, n_q = 1, n_kv = 512;
  std::vector<float> q;        // [D, n_head, n_q]
  std::vector<uint16_t> k, v;  // cache [D * n_head_kv, n_kv]
  std::vector<uint16_t> mask;  // [n_kv, n_q]
};

BenchData bench_data(int64_t n_q, int64_t n_kv) {
  BenchData b;
  b.n_q = n_q;
  b.n_kv = n_kv;
  uint64_t s = 88172645463325252ull;
  auto uni = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<float>(s >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  };
  b.q.resize(static_cast<size_t>(b.d * b.n_head * n_q));
  for (float& x : b.q) x = uni();
  for (auto* c : {&b.k, &b.v}) {
    c->resize(static_cast<size_t>(b.d * b.n_head_kv * n_kv));
    for (uint16_t& h : *c) h = fp32_to_fp16(uni());
  }
  b.mask = causal_mask(n_kv, n_q, n_kv - n_q, n_kv);
  return b;
}

// The plain way: per head and query, every score, a softmax, the weighted sum of V rows.
void scalar_attention(const BenchData& b, float scale, float* out) {
  const int64_t gqa = b.n_head / b.n_head_kv, row = b.d * b.n_head_kv;
  std::vector<float> sc(static_cast<size_t>(b.n_kv));
  for (int64_t iq = 0; iq < b.n_q; ++iq)
    for (int64_t h = 0; h < b.n_head; ++h) {
      const float* q = &b.q[static_cast<size_t>((iq * b.n_head + h) * b.d)];
      const int64_t hk = h / gqa;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < b.n_kv; ++j) {
        const uint16_t* k = &b.k[static_cast<size_t>(j * row + hk * b.d)];
        float acc = 0.0f;
        for (int64_t i = 0; i < b.d; ++i) acc += q[i] * fp16_to_fp32(k[i]);
        sc[static_cast<size_t>(j)] = acc * scale + fp16_to_fp32(b.mask[static_cast<size_t>(iq * b.n_kv + j)]);
        mx = std::max(mx, sc[static_cast<size_t>(j)]);
      }
      float sum = 0.0f;
      for (float& x : sc) sum += (x = std::exp(x - mx));
      float* o = out + (iq * b.n_head + h) * b.d;
      std::fill(o, o + b.d, 0.0f);
      for (int64_t j = 0; j < b.n_kv; ++j) {
        const uint16_t* v = &b.v[static_cast<size_t>(j * row + hk * b.d)];
        const float p = sc[static_cast<size_t>(j)] / sum;
        for (int64_t i = 0; i < b.d; ++i) o[i] += p * fp16_to_fp32(v[i]);
      }
    }
}

// Median device time (wall, from the per-op timer) and process CPU time of the op; checks the
// result against the scalar one.
Timing device_time(const BenchData& b, const DeviceConfig& c, int runs, const std::vector<float>& want) {
  htp_host::HtpOptions opts;
  opts.n_threads = c.n_threads;
  opts.vtcm_bytes = c.vtcm_bytes;
  opts.dma_mode = c.dma_mode;
  htp_host::HtpBackend htp(opts);
  graph::Context ctx;
  std::vector<std::unique_ptr<backend::Buffer>> bufs;
  auto leaf = [&](Type type, std::initializer_list<int64_t> ne, const void* bytes, size_t n) {
    Tensor* t = ctx.new_tensor(type, ne);
    bufs.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = bufs.back()->data();
    std::memcpy(t->data, bytes, n);
    return t;
  };
  Tensor* q = leaf(Type::F32, {b.d, b.n_head, b.n_q}, b.q.data(), b.q.size() * 4);
  Tensor* kc = leaf(Type::F16, {b.d * b.n_head_kv, b.n_kv}, b.k.data(), b.k.size() * 2);
  Tensor* vc = leaf(Type::F16, {b.d * b.n_head_kv, b.n_kv}, b.v.data(), b.v.size() * 2);
  Tensor* mask = leaf(Type::F16, {b.n_kv, b.n_q}, b.mask.data(), b.mask.size() * 2);
  Tensor* k = graph::view_3d(ctx, kc, b.d, b.n_head_kv, b.n_kv, b.d * 2, kc->nb[1], 0);
  Tensor* v = graph::view_3d(ctx, vc, b.d, b.n_head_kv, b.n_kv, b.d * 2, vc->nb[1], 0);
  Tensor* out = graph::flash_attn_ext(ctx, graph::permute(ctx, q, 0, 2, 1, 3),
                                      graph::permute(ctx, k, 0, 2, 1, 3), graph::permute(ctx, v, 0, 2, 1, 3),
                                      mask, 0.125f, 0.0f, 0.0f);
  graph::Graph gf;
  gf.expand(out);
  for (Tensor* n : gf.nodes()) {
    if (n->view_src != nullptr) {
      n->data = static_cast<uint8_t*>(graph::storage_root(n)->data) + n->view_offs;
    } else {
      bufs.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, n->n_bytes()));
      n->data = bufs.back()->data();
    }
  }
  std::vector<Tensor*> nodes(gf.nodes().begin(), gf.nodes().end());
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    const double c0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
    htp.compute(nodes);
    cpu.push_back(cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - c0);
    EXPECT_EQ(htp.last_op_ns().size(), 1u);
    wall.push_back(static_cast<double>(htp.last_op_ns().at(0)) * 1e-6);
  }
  double num = 0.0, den = 0.0;
  const auto* got = static_cast<const float*>(out->data);
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += static_cast<double>(want[i]) * want[i];
  }
  EXPECT_LE(num / den, kNmse) << "against the scalar implementation";
  return {median(wall), median(cpu)};
}

TEST(HtpFlashAttnBench, DISABLED_DecodeAndPrefill) {
  struct Case {
    const char* name;
    int64_t n_q, n_kv;
  };
  const Case cases[] = {{"decode n_kv 512", 1, 512},
                        {"decode n_kv 2048", 1, 2048},
                        {"decode n_kv 8192", 1, 8192},
                        {"prefill 512x512", 512, 512}};
  const DeviceConfig configs[] = {{1, 8u << 20, HTP_DMA_ZERO_COPY},
                                  {2, 8u << 20, HTP_DMA_ZERO_COPY},
                                  {2, 8u << 20, HTP_DMA_ASYNC}};
  std::printf("FLASH_ATTN_EXT, D 64, 32 heads / 8 KV heads; ms as wall / process CPU\n");
  std::printf("%-17s %9s", "", "scalar");
  for (const DeviceConfig& c : configs)
    std::printf(" | %dT %-21s", static_cast<int>(c.n_threads),
                c.dma_mode == HTP_DMA_ASYNC ? "async" : "zero-copy");
  std::printf("\n");
  // HEXLLM_FA_BENCH=<text> keeps the cases whose name contains it, HEXLLM_FA_BENCH_RUNS=<n>
  // sets the runs per config (for profiling one shape).
  const char* only = std::getenv("HEXLLM_FA_BENCH");
  const char* runs_env = std::getenv("HEXLLM_FA_BENCH_RUNS");
  for (const Case& cs : cases) {
    if (only != nullptr && std::string(cs.name).find(only) == std::string::npos) continue;
    const BenchData b = bench_data(cs.n_q, cs.n_kv);
    const int runs = runs_env != nullptr ? std::max(1, std::atoi(runs_env)) : cs.n_q > 1 ? 5 : 9;
    std::vector<float> want(static_cast<size_t>(b.d * b.n_head * b.n_q));
    std::vector<double> scalar;
    for (int r = 0; r < 3; ++r) {
      const double c0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
      scalar_attention(b, 0.125f, want.data());
      scalar.push_back(cpu_ms(CLOCK_THREAD_CPUTIME_ID) - c0);
    }
    const double s_ms = median(scalar);
    std::printf("%-17s %9.2f", cs.name, s_ms);
    for (const DeviceConfig& c : configs) {
      const Timing d = device_time(b, c, runs, want);
      std::printf(" | %7.3f / %7.3f x%-5.0f", d.wall_ms, d.cpu_ms, s_ms / d.cpu_ms);
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace hexllm::test
