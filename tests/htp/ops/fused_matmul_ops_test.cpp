// The fused matmul ops the prepare stage forms (MUL_MAT_ADD, MUL_MAT_QKV, MUL_MAT_FFN,
// MUL_MAT_ID_FFN), against two truths: the reference backend (NMSE 5e-4, the matmul threshold:
// the activations are quantized to 8 bits) and the same graph on the device with every fusion
// and the reorder off, which the fused op must reproduce bit for bit (same quantized
// activation, same dot kernels, the ADD / GLU on the same floats). Each case also checks that
// the fused op formed (the device's opcodes), under the standard configs (1 and 2 threads,
// 8 MiB and 256 KiB VTCM, every DMA engine, sentinels around every tensor); and the device
// refuses tampered fused params.
#include <cmath>

#include "htp-host/op_builders.h"
#include "htp/abi/matmul_fused_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 5e-4;

uint32_t count_of(const std::vector<uint32_t>& ops, uint32_t opcode) {
  uint32_t n = 0;
  for (uint32_t op : ops) n += op == opcode;
  return n;
}

// Runs `build` fused and unfused under every standard config: the fused run must hold `want`
// ops `opcode`, match the reference, and give the unfused run's bits.
void expect_fused(const std::string& name, const std::function<Tensor*(OpTester&)>& build, uint32_t opcode,
                  uint32_t want) {
  if (const std::string why = op_target_unavailable(); !why.empty()) GTEST_SKIP() << "op target " << op_target() << ": " << why;
  for (DeviceConfig c : standard_configs()) {
    OpTester fused_t;
    const OpResult fused = fused_t.run(build(fused_t), c);
    ASSERT_TRUE(fused.supported) << name << ": the device refused " << fused.unsupported << " (" << c.label() << ")";
    EXPECT_LE(fused.nmse, kNmse) << name << " (" << c.label() << ")";
    // Fused ops form with any device count (each device takes its columns of every part).
    EXPECT_EQ(count_of(fused.opcodes, opcode), want) << name << ": " << htp_opcode_name(opcode) << " (" << c.label() << ")";
    if (fused.host_differ >= 0) {
      EXPECT_EQ(fused.host_differ, 0) << name << ": differs from one x86 in-process device (" << c.label() << ")";
    }

    c.fuse = "none";
    c.reorder = false;
    OpTester plain_t;
    const OpResult plain = plain_t.run(build(plain_t), c);
    ASSERT_TRUE(plain.supported) << name << " unfused (" << c.label() << ")";
    EXPECT_EQ(count_of(plain.opcodes, opcode), 0u) << name << " (" << c.label() << ")";
    ASSERT_EQ(fused.output.size(), plain.output.size()) << name;
    int64_t differ = 0;
    for (size_t i = 0; i < fused.output.size(); ++i)
      differ += !(fused.output[i] == plain.output[i] || (std::isnan(fused.output[i]) && std::isnan(plain.output[i])));
    EXPECT_EQ(differ, 0) << name << ": elements of " << fused.output.size() << " that differ from the unfused ops ("
                         << c.label() << ")";
  }
}

std::string shape_name(const char* what, Type type, int64_t k, int64_t m, int64_t n) {
  return std::string(what) + " " + type_name(type) + " K" + std::to_string(k) + " M" + std::to_string(m) + " N" +
         std::to_string(n);
}

int64_t k_for(Type type) { return type == Type::Q4_K || type == Type::Q6_K ? 256 : 96; }

// ---- MUL_MAT + ADD ----------------------------------------------------------------------------

TEST(HtpFusedMatmul, MulMatAddBiasRow) {
  for (Type type : {Type::Q4_0, Type::Q8_0, Type::Q4_K, Type::F16})
    for (int64_t m : {19, 64})
      for (int64_t n : {1, 5, 67}) {
        const int64_t k = k_for(type);
        expect_fused(shape_name("bias", type, k, m, n), [&](OpTester& t) {
          Tensor* y = graph::mul_mat(t.ctx(), t.weight(type, {k, m}), t.input(Type::F32, {k, n}));
          return graph::add(t.ctx(), y, t.weight(Type::F32, {m}));
        }, HTP_OP_MUL_MAT_ADD, 1);
      }
}

TEST(HtpFusedMatmul, MulMatAddResidualAndBatches) {
  for (int64_t n : {1, 6, 33}) {
    expect_fused(shape_name("residual first", Type::Q4_0, 128, 40, n), [&](OpTester& t) {
      Tensor* y = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {128, 40}), t.input(Type::F32, {128, n}));
      return graph::add(t.ctx(), t.input(Type::F32, {40, n}), y);
    }, HTP_OP_MUL_MAT_ADD, 1);
    // A 2-D weight broadcast over 3 batches, the residual of the output's shape.
    expect_fused(shape_name("batched residual", Type::Q8_0, 64, 24, n), [&](OpTester& t) {
      Tensor* y = graph::mul_mat(t.ctx(), t.weight(Type::Q8_0, {64, 24}), t.input(Type::F32, {64, n, 3}));
      return graph::add(t.ctx(), y, t.input(Type::F32, {24, n, 3}));
    }, HTP_OP_MUL_MAT_ADD, 1);
  }
}

TEST(HtpFusedMatmul, MulMatAddOfAView) {
  expect_fused("activation is a strided view", [](OpTester& t) {
    Tensor* big = t.input(Type::F32, {160, 7});
    Tensor* x = graph::view_2d(t.ctx(), big, 96, 7, big->nb[1], 32 * 4);
    Tensor* y = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {96, 27}), x);
    return graph::add(t.ctx(), y, t.weight(Type::F32, {27}));
  }, HTP_OP_MUL_MAT_ADD, 1);
}

// ---- Q, K, V -----------------------------------------------------------------------------------

// concat(concat(q, k), v) along the rows: one output of the three (the harness compares one).
// Q, K and V weights of types tq, tk, tv.
Tensor* qkv_graph(OpTester& t, Type tq, Type tk, Type tv, int64_t k, int64_t n, bool bias, int64_t mq, int64_t mkv) {
  Tensor* x = t.input(Type::F32, {k, n});
  auto proj = [&](Type type, int64_t m) {
    Tensor* y = graph::mul_mat(t.ctx(), t.weight(type, {k, m}), x);
    return bias ? graph::add(t.ctx(), y, t.weight(Type::F32, {m})) : y;
  };
  Tensor* q = proj(tq, mq);
  Tensor* kk = proj(tk, mkv);
  Tensor* v = proj(tv, mkv);
  return graph::concat(t.ctx(), graph::concat(t.ctx(), q, kk, 0), v, 0);
}

Tensor* qkv_graph(OpTester& t, Type type, int64_t k, int64_t n, bool bias, int64_t mq, int64_t mkv) {
  return qkv_graph(t, type, type, type, k, n, bias, mq, mkv);
}

TEST(HtpFusedMatmul, QkvFormsOneOp) {
  for (Type type : {Type::Q4_0, Type::Q8_0, Type::Q4_K})
    for (bool bias : {false, true})
      for (int64_t n : {1, 7, 40}) {
        const int64_t k = k_for(type);
        expect_fused(shape_name(bias ? "qkv+bias" : "qkv", type, k, 64, n),
                     [&](OpTester& t) { return qkv_graph(t, type, k, n, bias, 64, 24); }, HTP_OP_MUL_MAT_QKV, 1);
      }
}

struct QkvMix {
  Type q, k, v;
};

std::string mix_name(const char* what, const QkvMix& mix, int64_t k, int64_t mq, int64_t mkv, int64_t n) {
  return std::string(what) + " " + type_name(mix.q) + "+" + type_name(mix.k) + "+" + type_name(mix.v) + " K" +
         std::to_string(k) + " M" + std::to_string(mq) + "/" + std::to_string(mkv) + " N" + std::to_string(n);
}

// Parts of different tile types that take one activation format fuse: llama's Q4_K_M gives
// Q4_K Q and K with a Q6_K V on half the layers; Q4_0 and Q8_0 share the 32-element one.
// Each part must run its own type's kernels on the one quantized activation, bit for bit.
TEST(HtpFusedMatmul, QkvMixedTypesShareTheActivation) {
  for (QkvMix mix : {QkvMix{Type::Q4_K, Type::Q4_K, Type::Q6_K}, QkvMix{Type::Q8_0, Type::Q4_0, Type::Q4_0}})
    for (bool bias : {false, true})
      for (int64_t n : {1, 7, 40}) {
        const int64_t k = k_for(mix.q), mq = 64, mkv = 19;
        expect_fused(mix_name(bias ? "qkv+bias" : "qkv", mix, k, mq, mkv, n),
                     [&](OpTester& t) { return qkv_graph(t, mix.q, mix.k, mix.v, k, n, bias, mq, mkv); },
                     HTP_OP_MUL_MAT_QKV, 1);
      }
}

// Activation formats that differ (8-bit per 256 vs per 32 elements, F32 for a float weight)
// cannot share one quantization run: no QKV forms, and the separate matmuls still give the
// unfused bits.
TEST(HtpFusedMatmul, QkvRefusesTypesOfDifferentActivations) {
  for (QkvMix mix : {QkvMix{Type::Q4_K, Type::Q4_K, Type::Q4_0}, QkvMix{Type::F16, Type::Q4_0, Type::Q4_0}})
    for (int64_t n : {1, 7}) {
      const int64_t k = 256, mq = 40, mkv = 19;
      expect_fused(mix_name("qkv", mix, k, mq, mkv, n),
                   [&](OpTester& t) { return qkv_graph(t, mix.q, mix.k, mix.v, k, n, false, mq, mkv); },
                   HTP_OP_MUL_MAT_QKV, 0);
    }
}

// The graph's order is q, concat(q, k) needs k... : the reorder must pull v's matmul forward.
TEST(HtpFusedMatmul, QkvNeedsTheReorder) {
  OpTester t;
  DeviceConfig c;
  Tensor* out = qkv_graph(t, Type::Q4_0, 64, 3, true, 40, 16);
  c.reorder = false;
  const OpResult r = t.run(out, c);
  ASSERT_TRUE(r.supported);
  EXPECT_EQ(count_of(r.opcodes, HTP_OP_MUL_MAT_QKV), 0u) << "v's matmul comes after the first concat";
  EXPECT_LE(r.nmse, kNmse);
}

// ---- FFN gate + up + GLU -------------------------------------------------------------------------

TEST(HtpFusedMatmul, FfnGateUpGlu) {
  for (Type type : {Type::Q4_0, Type::Q4_K, Type::F16})
    for (bool silu : {true, false})
      for (int64_t f : {24, 67})
        for (int64_t n : {1, 9, 70}) {
          const int64_t k = k_for(type);
          expect_fused(shape_name(silu ? "swiglu" : "geglu", type, k, f, n), [&](OpTester& t) {
            Tensor* x = t.input(Type::F32, {k, n});
            Tensor* g = graph::mul_mat(t.ctx(), t.weight(type, {k, f}), x);
            Tensor* u = graph::mul_mat(t.ctx(), t.weight(type, {k, f}), x);
            return silu ? graph::swiglu(t.ctx(), g, u) : graph::geglu(t.ctx(), g, u);
          }, HTP_OP_MUL_MAT_FFN, 1);
        }
}

// The up matmul first, then the gate (roles follow the GLU, not the order), and batches.
TEST(HtpFusedMatmul, FfnUpFirstAndBatches) {
  expect_fused("up first, 2 batches", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {64, 5, 2});
    Tensor* u = graph::mul_mat(t.ctx(), t.weight(Type::Q8_0, {64, 48}), x);
    Tensor* g = graph::mul_mat(t.ctx(), t.weight(Type::Q8_0, {64, 48}), x);
    return graph::swiglu(t.ctx(), g, u);
  }, HTP_OP_MUL_MAT_FFN, 1);
}

// ---- MoE: MUL_MAT_ID gate + up + SWIGLU ----------------------------------------------------------

TEST(HtpFusedMatmul, MoeFfn) {
  for (Type type : {Type::Q4_0, Type::Q4_K})
    for (int64_t n_used : {1, 2})
      for (int64_t n_tok : {1, 6, 33}) {
        const int64_t k = k_for(type), f = 40, n_exp = 4;
        expect_fused(shape_name("moe", type, k, f, n_tok) + " used " + std::to_string(n_used), [&](OpTester& t) {
          Tensor* x = t.input(Type::F32, {k, 1, n_tok});
          Tensor* ids = t.ids({n_used, n_tok}, static_cast<int32_t>(n_exp));
          Tensor* g = graph::mul_mat_id(t.ctx(), t.weight(type, {k, f, n_exp}), x, ids);
          Tensor* u = graph::mul_mat_id(t.ctx(), t.weight(type, {k, f, n_exp}), x, ids);
          return graph::swiglu(t.ctx(), g, u);
        }, HTP_OP_MUL_MAT_ID_FFN, 1);
      }
}

// ---- where the patterns do not hold -------------------------------------------------------------

TEST(HtpFusedMatmul, DoesNotFormWhereThePatternDoesNotHold) {
  // The matmul's result is read twice: the ADD cannot swallow it.
  expect_fused("matmul read twice", [](OpTester& t) {
    Tensor* y = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {64, 16}), t.input(Type::F32, {64, 3}));
    Tensor* s = graph::add(t.ctx(), y, t.weight(Type::F32, {16}));
    return graph::add(t.ctx(), s, y);
  }, HTP_OP_MUL_MAT_ADD, 0);
  // Gate and up on different activations: no FFN (each matmul still adds nothing).
  expect_fused("gate and up on two activations", [](OpTester& t) {
    Tensor* g = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {64, 16}), t.input(Type::F32, {64, 3}));
    Tensor* u = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {64, 16}), t.input(Type::F32, {64, 3}));
    return graph::swiglu(t.ctx(), g, u);
  }, HTP_OP_MUL_MAT_FFN, 0);
  // Gate and up of two tile types: only QKV takes mixed parts.
  expect_fused("gate Q4_K, up Q6_K", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {256, 3});
    Tensor* g = graph::mul_mat(t.ctx(), t.weight(Type::Q4_K, {256, 16}), x);
    Tensor* u = graph::mul_mat(t.ctx(), t.weight(Type::Q6_K, {256, 16}), x);
    return graph::swiglu(t.ctx(), g, u);
  }, HTP_OP_MUL_MAT_FFN, 0);
  // The gate result is also read elsewhere: it must reach DDR, so no FFN.
  expect_fused("gate read twice", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {64, 3});
    Tensor* g = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {64, 16}), x);
    Tensor* u = graph::mul_mat(t.ctx(), t.weight(Type::Q4_0, {64, 16}), x);
    return graph::add(t.ctx(), graph::swiglu(t.ctx(), g, u), g);
  }, HTP_OP_MUL_MAT_FFN, 0);
}

// A dense 2-D descriptor: ne0 x ne1 elements, rows of nb1 bytes, element stride nb0.
htp_tensor desc2d(uint32_t type, uint32_t ne0, uint32_t ne1, uint32_t nb0, uint32_t nb1, uint32_t size) {
  htp_tensor t{};
  t.type = type;
  t.ne[0] = ne0;
  t.ne[1] = ne1;
  t.ne[2] = t.ne[3] = 1;
  t.nb[0] = nb0;
  t.nb[1] = nb1;
  t.nb[2] = t.nb[3] = nb1 * ne1;
  t.size = size;
  return t;
}

// A dense FFN's descriptors: Q4_0 gate and up weights (one tensor for both) of k x f, n rows of
// F32 activations and the F32 GLU output.
struct FfnDescs {
  htp_tensor w, x, out;
  FfnDescs(uint32_t k, uint32_t f, uint32_t n) {
    const uint32_t tile = hexllm::htp::htp_tile_for(HTP_TYPE_Q4_0);
    w = desc2d(tile, k, f, 18, k / 32 * 18, (uint32_t)hexllm::htp::htp_tiled_size(tile, f, k));
    x = desc2d(HTP_TYPE_F32, k, n, 4, k * 4, k * n * 4);
    out = desc2d(HTP_TYPE_F32, f, n, 4, f * 4, f * n * 4);
  }
  htp_mmf_tensors tensors() const {
    htp_mmf_tensors t{};
    t.x = &x;
    t.w[0] = t.w[1] = &w;
    t.out[0] = &out;
    return t;
  }
};

// A plan that does not fit VTCM is refused by the builder (the host then runs the ops unfused).
TEST(HtpFusedMatmul, ParamsRefusedWhenVtcmTooSmall) {
  const uint32_t n = 256;
  const FfnDescs ffn(4096, 8192, n);
  htp_mmf_tensors t = ffn.tensors();
  int32_t params[HTP_MAX_PARAMS] = {static_cast<int32_t>(HTP_OP_SWIGLU)};
  htp_mmf_params p{};
  htp_mm_shape shapes[HTP_MMF_MAX_PARTS] = {};
  ASSERT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, t, 2, 16u << 20, &p), HTP_OK);
  // Both result buffers of a chunk stay in VTCM: 16 MiB holds ~170 rows of 2 x 8192 floats.
  EXPECT_LT(p.cfg[0].act_rows, n);
  EXPECT_GE(p.cfg[0].act_rows, HTP_MMF_FFN_MIN_CHUNK_ROWS);
  EXPECT_LE(p.vtcm_bytes, 16u << 20);
  EXPECT_EQ(htp_mmf_params_check(p, HTP_OP_MUL_MAT_FFN, params, t, 2, 16u << 20, shapes), HTP_OK);
  // 8 MiB holds ~70 rows: chunks too short to repay streaming the weights once per chunk, so
  // the fusion is refused (the matmuls then run unfused, with chunks of their own).
  EXPECT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, t, 2, 8u << 20, &p), HTP_ERR_NO_SUPPORT);
  htp_mm_params part{};
  ASSERT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, ffn.out, ffn.w, ffn.x, nullptr, 2, 8u << 20, &part), HTP_OK);
  EXPECT_GE(part.cfg.act_rows, HTP_MMF_FFN_MIN_CHUNK_ROWS);
  // ... unless the chunk holds every row: a batch of 64 fuses in 8 MiB.
  const FfnDescs ffn64(4096, 8192, 64);
  t = ffn64.tensors();
  ASSERT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, t, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.cfg[0].act_rows, 64u);
  EXPECT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, t, 2, 64u << 10, &p), HTP_ERR_VTCM_TOO_SMALL);
  params[0] = static_cast<int32_t>(HTP_OP_SWIGLU_OAI);  // no such fused GLU
  EXPECT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, t, 2, 8u << 20, &p), HTP_ERR_NO_SUPPORT);
}

// A device whose GEMM wants passes of many activation rows (htp_hwinfo's gemm.min_pass_rows:
// amx converts the weights on every pass) gets no FFN fusion that would split the rows into
// shorter chunks; a chunk that holds every row still fuses, and so does decode.
TEST(HtpFusedMatmul, FfnChunksHonourTheDevicesPassRows) {
  int32_t params[HTP_MAX_PARAMS] = {static_cast<int32_t>(HTP_OP_SWIGLU)};
  auto build = [&](uint32_t n, uint32_t pass_rows, htp_mmf_params* p) {
    const FfnDescs ffn(4096, 8192, n);
    return htp_mmf_params_build(HTP_OP_MUL_MAT_FFN, params, ffn.tensors(), 2, 16u << 20, p, {pass_rows, 0, 0, 0});
  };
  htp_mmf_params p{};
  // 16 MiB holds ~170 rows of gate and up results: 512 rows go in chunks of that size...
  ASSERT_EQ(build(512, 0, &p), HTP_OK);
  const uint32_t chunk = p.cfg[0].act_rows;
  EXPECT_GE(chunk, HTP_MMF_FFN_MIN_CHUNK_ROWS);
  EXPECT_LT(chunk, 512u);
  EXPECT_EQ(build(512, chunk, &p), HTP_OK);
  // ... unless the device wants longer passes than that.
  EXPECT_EQ(build(512, chunk + 1, &p), HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(build(512, 384, &p), HTP_ERR_NO_SUPPORT);
  // One chunk holds every row of a shorter batch, and decode's one row: both fuse.
  ASSERT_EQ(build(chunk, 384, &p), HTP_OK);
  EXPECT_EQ(p.cfg[0].act_rows, chunk);
  ASSERT_EQ(build(1, 384, &p), HTP_OK);
  EXPECT_EQ(p.cfg[0].act_rows, 1u);
}

// The plan of a mixed op: each part's own configuration (its tile's unit and ring bytes) fits
// the op's arena; and a part whose activation format differs is refused by the builder.
TEST(HtpFusedMatmul, QkvMixedParamsAccountForEachPartsTiles) {
  using hexllm::htp::htp_tile_for;
  using hexllm::htp::htp_tiled_size;
  const uint32_t q4k = htp_tile_for(HTP_TYPE_Q4_K), q6k = htp_tile_for(HTP_TYPE_Q6_K);
  const uint32_t q40 = htp_tile_for(HTP_TYPE_Q4_0);
  const uint32_t k = 2048, mq = 2048, mkv = 512, n = 9;
  const htp_tensor x = desc2d(HTP_TYPE_F32, k, n, 4, k * 4, k * n * 4);
  const htp_tensor wq = desc2d(q4k, k, mq, 144, k / 256 * 144, (uint32_t)htp_tiled_size(q4k, mq, k));
  const htp_tensor wk = desc2d(q4k, k, mkv, 144, k / 256 * 144, (uint32_t)htp_tiled_size(q4k, mkv, k));
  const htp_tensor wv = desc2d(q6k, k, mkv, 210, k / 256 * 210, (uint32_t)htp_tiled_size(q6k, mkv, k));
  const htp_tensor oq = desc2d(HTP_TYPE_F32, mq, n, 4, mq * 4, mq * n * 4);
  const htp_tensor okv = desc2d(HTP_TYPE_F32, mkv, n, 4, mkv * 4, mkv * n * 4);
  htp_mmf_tensors t{};
  t.x = &x;
  t.w[0] = &wq;
  t.w[1] = &wk;
  t.w[2] = &wv;
  t.out[0] = &oq;
  t.out[1] = t.out[2] = &okv;
  const int32_t params[HTP_MAX_PARAMS] = {};
  for (uint32_t vtcm : {8u << 20, 256u << 10}) {
    htp_mmf_params p{};
    htp_mm_shape shapes[HTP_MMF_MAX_PARTS] = {};
    ASSERT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_QKV, params, t, 2, vtcm, &p), HTP_OK) << vtcm;
    ASSERT_EQ(htp_mmf_params_check(p, HTP_OP_MUL_MAT_QKV, params, t, 2, vtcm, shapes), HTP_OK) << vtcm;
    EXPECT_EQ(shapes[2].tile, q6k);
    for (uint32_t part = 0; part < 3; ++part) {
      htp_mm_params mp{};
      uint64_t bytes = 0;
      ASSERT_EQ(htp_mm_params_make(shapes[part], p.cfg[part], &mp, &bytes), HTP_OK) << part;
      EXPECT_LE(bytes, p.vtcm_bytes) << "part " << part << " at " << vtcm;
      // The ring holds units of the part's own blocks (V's Q6_K ones are larger than Q4_K's).
      const htp_mm_config& c = p.cfg[part];
      const uint32_t block_bytes = hexllm::htp::htp_tile_info(t.w[part]->type).block_bytes;
      const uint64_t unit = (uint64_t)c.group_tiles * c.k_blocks * block_bytes;
      EXPECT_EQ(mp.lay.slot_bytes, htp_align_up(unit, HTP_VTCM_ALIGN)) << "part " << part << " at " << vtcm;
    }
  }
  const htp_tensor wv40 = desc2d(q40, k, mkv, 18, k / 32 * 18, (uint32_t)htp_tiled_size(q40, mkv, k));
  t.w[2] = &wv40;
  htp_mmf_params p{};
  EXPECT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_QKV, params, t, 2, 8u << 20, &p), HTP_ERR_NO_SUPPORT);
}

// The device rebuilds the derived fields from the configurations the params name: with this
// small shape every changed byte is out of range or breaks a derived field, and is refused.
TEST(HtpFusedMatmul, DeviceRefusesTamperedParams) {
  const uint32_t tile = hexllm::htp::htp_tile_for(HTP_TYPE_Q4_0);
  const htp_tensor x = desc2d(HTP_TYPE_F32, 64, 3, 4, 256, 768);
  const htp_tensor w = desc2d(tile, 64, 16, 18, 36, (uint32_t)hexllm::htp::htp_tiled_size(tile, 16, 64));
  const htp_tensor out = desc2d(HTP_TYPE_F32, 16, 3, 4, 64, 192);
  const htp_tensor bias = desc2d(HTP_TYPE_F32, 16, 1, 4, 64, 64);
  htp_mmf_tensors t{};
  t.x = &x;
  t.w[0] = &w;
  t.addend[0] = &bias;
  t.out[0] = &out;
  const int32_t params[HTP_MAX_PARAMS] = {};
  htp_mmf_params good{};
  htp_mm_shape shapes[HTP_MMF_MAX_PARTS] = {};
  ASSERT_EQ(htp_mmf_params_build(HTP_OP_MUL_MAT_ADD, params, t, 2, 1u << 20, &good), HTP_OK);
  EXPECT_EQ(good.add_mask, 1u);
  EXPECT_EQ(good.bcast_mask, 1u);
  for (size_t byte = 0; byte < sizeof good; ++byte) {
    htp_mmf_params bad = good;
    reinterpret_cast<uint8_t*>(&bad)[byte] ^= 0x10;
    EXPECT_NE(htp_mmf_params_check(bad, HTP_OP_MUL_MAT_ADD, params, t, 2, 1u << 20, shapes), HTP_OK) << "byte " << byte;
  }
  // A fused op without its addend, or with a weight in a slot past its parts, is invalid.
  t.addend[0] = nullptr;
  EXPECT_NE(htp_mmf_params_build(HTP_OP_MUL_MAT_ADD, params, t, 2, 1u << 20, &good), HTP_OK);
  t.addend[0] = &bias;
  t.w[2] = &w;
  EXPECT_NE(htp_mmf_params_build(HTP_OP_MUL_MAT_ADD, params, t, 2, 1u << 20, &good), HTP_OK);
}

}  // namespace
}  // namespace hexllm::test
