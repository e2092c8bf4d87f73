// ROPE on the device against the reference backend (which forms every angle and its sin/cos in
// double): normal and NEOX pairing, partial rotation (n_dims < head dim), freq factors,
// freq_scale, YaRN, large positions, strided and permuted inputs.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "htp/abi/rope_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// docs/DESIGN.md §9 "others". The kernel forms angles in double and rounds cos/sin and each output once
// to float, so its error is a few float ulps.
constexpr double kNmse = 1e-7;
// With angles in double, large positions cost nothing: NMSE stays at float rounding (~1e-14).
// Angles formed in float would be off by ~ulp(1e6) = 0.06 rad here, an NMSE of ~1e-4.
constexpr double kNmseLargePos = 1e-12;

struct Case {
  int64_t head_dim, n_dims, n_head, n_tok;
  int mode;
  bool freq_factors;
  float freq_scale;
  bool yarn;
  std::string label() const {
    return "hd" + std::to_string(head_dim) + " nd" + std::to_string(n_dims) + " heads" +
           std::to_string(n_head) +
           " tok" + std::to_string(n_tok) + (mode == graph::kRopeNeox ? " neox" : " normal") +
           (freq_factors ? " ff" : "") + " fs" + std::to_string(freq_scale) + (yarn ? " yarn" : "");
  }
};

graph::RopeParams params_of(const Case& c) {
  graph::RopeParams p;
  p.n_dims = static_cast<int32_t>(c.n_dims);
  p.mode = c.mode;
  p.freq_base = 10000.0f;
  p.freq_scale = c.freq_scale;
  if (c.yarn) {
    p.n_ctx_orig = 4096;
    p.ext_factor = 1.0f;
    p.attn_factor = 1.0f;
    p.beta_fast = 32.0f;
    p.beta_slow = 1.0f;
  }
  return p;
}

// Positions: a run from p0, plus scattered large ones when `large`.
std::vector<int32_t> positions(int64_t n_tok, int32_t p0, bool large) {
  std::vector<int32_t> pos;
  for (int64_t t = 0; t < n_tok; ++t) pos.push_back(p0 + static_cast<int32_t>(t));
  if (large) {
    const int32_t big[] = {100000, 999999, 1000000, 65535, 123457, 7};
    for (size_t k = 0; k < pos.size(); k += 2) pos[k] = big[(k / 2) % 6];
  }
  return pos;
}

Tensor* freq_factors_of(OpTester& t, const Case& c) {
  return c.freq_factors ? t.input(Type::F32, {c.n_dims / 2}, 1.0f, 8.0f) : nullptr;
}

// Every combination of pairing, head size, freq factors, freq_scale, YaRN and small or large
// positions on a contiguous [head_dim, n_head, n_tok] input.
TEST(HtpRopeOps, ModesHeadDimsFrequencies) {
  const int64_t dims[][2] = {{64, 64}, {128, 128}, {80, 32}};
  for (const auto& d : dims)
    for (int mode : {graph::kRopeNormal, graph::kRopeNeox})
      for (bool ff : {false, true})
        for (float fs : {1.0f, 0.25f})
          for (bool yarn : {false, true})
            for (bool large : {false, true}) {
              if (yarn && fs == 1.0f) continue;  // YaRN extends context: freq_scale < 1
              const Case c{d[0], d[1], 5, 7, mode, ff, fs, yarn};
              expect_op_matches(c.label() + (large ? " large positions" : ""), [&](OpTester& t) {
                Tensor* a = t.input(Type::F32, {c.head_dim, c.n_head, c.n_tok});
                Tensor* pos = t.ids_from({c.n_tok}, positions(c.n_tok, 3, large));
                return graph::rope(t.ctx(), a, pos, freq_factors_of(t, c), params_of(c));
              }, kNmse);
            }
}

// Positions up to 1e6 (long-context decode): the angle must be formed in double.
TEST(HtpRopeOps, LargePositions) {
  for (int mode : {graph::kRopeNormal, graph::kRopeNeox})
    for (bool yarn : {false, true}) {
      const Case c{128, 128, 4, 12, mode, false, yarn ? 0.125f : 1.0f, yarn};
      expect_op_matches(c.label() + " large positions", [&](OpTester& t) {
        Tensor* a = t.input(Type::F32, {c.head_dim, c.n_head, c.n_tok});
        Tensor* pos = t.ids_from({c.n_tok}, positions(c.n_tok, 99990, true));
        return graph::rope(t.ctx(), a, pos, nullptr, params_of(c));
      }, kNmseLargePos);
    }
}

// Q/K as the model builds them: a view of a fused projection output (rows of one token
// strided by the fused row, tokens by the tensor row), and a permuted [head_dim, n_tok, n_head].
TEST(HtpRopeOps, StridedAndPermutedInputs) {
  for (int mode : {graph::kRopeNormal, graph::kRopeNeox}) {
    const Case c{64, 64, 6, 9, mode, true, 1.0f, false};
    expect_op_matches(c.label() + " fused view", [&](OpTester& t) {
      // [hd * (n_head + 2 n_head_kv), n_tok]: Q heads first, then K and V of 2 KV heads.
      Tensor* qkv = t.input(Type::F32, {c.head_dim * (c.n_head + 4), c.n_tok});
      Tensor* k = graph::view_3d(t.ctx(), qkv, c.head_dim, 2, c.n_tok, c.head_dim * 4, qkv->nb[1],
                                 c.head_dim * c.n_head * 4);
      Tensor* pos = t.ids_from({c.n_tok}, positions(c.n_tok, 40, false));
      return graph::rope(t.ctx(), k, pos, freq_factors_of(t, c), params_of(c));
    }, kNmse);
    expect_op_matches(c.label() + " permuted", [&](OpTester& t) {
      Tensor* x = t.input(Type::F32, {c.head_dim, c.n_tok, c.n_head});
      Tensor* a = graph::permute(t.ctx(), x, 0, 2, 1, 3);  // [hd, n_head, n_tok], heads strided by tokens
      Tensor* pos = t.ids_from({c.n_tok}, positions(c.n_tok, 100000, true));
      return graph::rope(t.ctx(), a, pos, freq_factors_of(t, c), params_of(c));
    }, kNmse);
  }
}

// Shapes that exercise the blocking: one head, many tokens (blocks span tokens), many heads
// of a large row (blocks split one token), odd counts, a 4-D input, a long prefill.
TEST(HtpRopeOps, BlockShapes) {
  const int64_t shapes[][4] = {{64, 1, 300, 1}, {256, 33, 3, 1}, {96, 3, 5, 2}, {128, 32, 64, 1}};
  for (const auto& s : shapes)
    for (int mode : {graph::kRopeNormal, graph::kRopeNeox}) {
      const Case c{s[0], s[0], s[1], s[2], mode, false, 1.0f, false};
      expect_op_matches(c.label() + " ne3 " + std::to_string(s[3]), [&](OpTester& t) {
        Tensor* a = t.input(Type::F32, {s[0], s[1], s[2], s[3]});
        Tensor* pos = t.ids_from({s[2]}, positions(s[2], 11, false));
        return graph::rope(t.ctx(), a, pos, nullptr, params_of(c));
      }, kNmse);
    }
}

// What the device does not take falls back to the reference backend: an F16 input.
TEST(HtpRopeOps, RefusesF16Input) {
  OpTester t;
  Tensor* a = t.input(Type::F16, {64, 2, 3});
  Tensor* pos = t.ids_from({3}, {0, 1, 2});
  graph::RopeParams p;
  p.n_dims = 64;
  const OpResult r = t.run(graph::rope(t.ctx(), a, pos, nullptr, p), standard_configs()[0]);
  EXPECT_FALSE(r.supported);
}

// The kernel re-derives the layout and fastdiv constants and refuses params that disagree.
TEST(HtpRopePlan, KernelRejectsTamperedParams) {
  htp_tensor src{}, pos{}, dst{};
  src.type = dst.type = HTP_TYPE_F32;
  pos.type = HTP_TYPE_I32;
  const uint32_t ne[4] = {128, 32, 7, 1};
  for (int i = 0; i < 4; ++i) src.ne[i] = dst.ne[i] = ne[i];
  src.nb[0] = dst.nb[0] = 4;
  for (int i = 1; i < 4; ++i) src.nb[i] = dst.nb[i] = dst.nb[i - 1] * ne[i - 1];
  pos.ne[0] = 7;
  pos.ne[1] = pos.ne[2] = pos.ne[3] = 1;
  pos.nb[0] = 4;
  pos.nb[1] = pos.nb[2] = pos.nb[3] = 28;
  int32_t op_params[HTP_MAX_PARAMS] = {128, (int32_t)HTP_ROPE_MODE_NEOX};
  const float one = 1.0f;
  std::memcpy(&op_params[4], &one, 4);  // freq_scale
  std::memcpy(&op_params[6], &one, 4);  // attn_factor
  htp_rope_params good{};
  good.freq_scale = 1.0f;
  good.mscale = 1.0;
  good.corr_denom = 1.0;
  ASSERT_EQ(htp_rope_plan(dst, src, pos, nullptr, 128, HTP_ROPE_MODE_NEOX, 2, 256u << 10, &good), HTP_OK);
  EXPECT_EQ(htp_rope_params_check(good, dst, src, pos, nullptr, op_params, 2, 256u << 10), HTP_OK);
  const std::vector<std::function<void(htp_rope_params&)>> tamper = {
      [](htp_rope_params& p) { p.block_rows = 100000; },  // the layout no longer matches
      [](htp_rope_params& p) { p.layout.pos_offset += 128; },
      [](htp_rope_params& p) { p.layout.thread_bytes = 0; },
      [](htp_rope_params& p) { p.n_threads = 3; },
      [](htp_rope_params& p) { p.ne1.shift += 1; },
      [](htp_rope_params& p) { p.n_dims = 256; },
  };
  for (size_t i = 0; i < tamper.size(); ++i) {
    htp_rope_params p = good;
    tamper[i](p);
    EXPECT_NE(htp_rope_params_check(p, dst, src, pos, nullptr, op_params, 2, 256u << 10), HTP_OK)
        << "tampering " << i;
  }
  // Params planned for a larger arena than the session has are refused.
  EXPECT_NE(htp_rope_params_check(good, dst, src, pos, nullptr, op_params, 2,
                                  good.layout.thread_bytes * good.n_threads - 1),
            HTP_OK);
  // Shapes the kernel cannot take are refused up front.
  EXPECT_EQ(htp_rope_plan(dst, src, pos, nullptr, 130, HTP_ROPE_MODE_NORMAL, 2, 8u << 20, &good),
            HTP_ERR_INVALID_PARAMS);  // n_dims > head dim
  EXPECT_EQ(htp_rope_plan(dst, src, pos, nullptr, 64, 1, 2, 8u << 20, &good), HTP_ERR_NO_SUPPORT);  // mode
}

}  // namespace
}  // namespace hexllm::test
