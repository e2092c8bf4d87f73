// MUL_MAT and MUL_MAT_ID on the device against the reference backend (the oracle), for every
// weight tile type, under the standard configs ({1, 2} threads x {8 MiB, 256 KiB} VTCM x DMA
// engines). Also: the kernel-params builder and check against each other, out-of-range ids as
// a device error, and Q5_K weights (no quantizer exists for them: random blocks, own runner).
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/ref/ref_backend.h"
#include "base/error.h"
#include "base/fp16.h"
#include "htp/abi/matmul_params.h"
#include "htp/ops/matmul_impl.h"
#include "op_harness.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/quantize.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// docs/DESIGN.md §9: matmul thresholds as ggml's test-backend-ops. The device quantizes activations to
// 8 bits per block (quantized weights), which is what the threshold allows for.
constexpr double kNmse = 5e-4;

// Every weight type with a quantizer (Q5_K: see Q5KWeights below).
const Type kTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0, Type::Q4_1,   Type::Q5_0,
                       Type::Q5_1, Type::Q8_0, Type::Q4_K, Type::Q6_K, Type::IQ4_NL, Type::MXFP4};

bool is_kquant(Type t) { return t == Type::Q4_K || t == Type::Q5_K || t == Type::Q6_K; }
bool is_float(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }

// K values per type: block multiples for quantized types; odd sizes (padded in the tiles) for floats.
std::vector<int64_t> small_ks(Type t) {
  if (is_kquant(t)) return {256, 512};
  if (is_float(t)) return {40, 96, 512};
  return {32, 96, 512};
}

std::string label(Type t, int64_t k, int64_t m, int64_t n) {
  return std::string(type_name(t)) + " K=" + std::to_string(k) + " M=" + std::to_string(m) + " N=" + std::to_string(n);
}

class HtpMatmulTypes : public ::testing::TestWithParam<Type> {};

// M rows not a multiple of 8 (partial last tile, fewer tiles than workers) x N act rows covering
// GEMV, the GEMM register blocks and their remainders.
TEST_P(HtpMatmulTypes, SmallShapes) {
  const Type type = GetParam();
  for (int64_t k : small_ks(type))
    for (int64_t m : {13, 67})
      for (int64_t n : {1, 2, 7, 8, 33, 128})
        expect_op_matches(label(type, k, m, n), [&](OpTester& t) {
          return graph::mul_mat(t.ctx(), t.weight(type, {k, m}), t.input(Type::F32, {k, n}));
        }, kNmse);
}

// Long rows (K = 4096: the 256 KiB VTCM config must split a float row tile over several units)
// and many rows (M = 4096: several units and chunks per worker).
TEST_P(HtpMatmulTypes, LargeShapes) {
  const Type type = GetParam();
  for (int64_t n : {1, 33})
    expect_op_matches(label(type, 4096, 67, n), [&](OpTester& t) {
      return graph::mul_mat(t.ctx(), t.weight(type, {4096, 67}), t.input(Type::F32, {4096, n}));
    }, kNmse);
  const int64_t k = is_kquant(type) ? 256 : 96;
  for (int64_t n : {1, 8})
    expect_op_matches(label(type, k, 4096, n), [&](OpTester& t) {
      return graph::mul_mat(t.ctx(), t.weight(type, {k, 4096}), t.input(Type::F32, {k, n}));
    }, kNmse);
}

// Activations that are views: a permuted 3-D tensor (rows strided by 3 rows) and a column window
// of a wider matrix; and batches broadcast over a 2-D weight and over a 3-D weight.
TEST_P(HtpMatmulTypes, ViewsAndBroadcasts) {
  const Type type = GetParam();
  const int64_t k = is_kquant(type) ? 256 : 64;
  expect_op_matches(std::string(type_name(type)) + " permuted", [&](OpTester& t) {
    Tensor* x = graph::permute(t.ctx(), t.input(Type::F32, {k, 3, 9}), 0, 2, 1, 3);  // [k, 9, 3]
    return graph::mul_mat(t.ctx(), t.weight(type, {k, 21}), x);
  }, kNmse);
  expect_op_matches(std::string(type_name(type)) + " column window", [&](OpTester& t) {
    Tensor* wide = t.input(Type::F32, {3 * k, 5});
    Tensor* x = graph::view_2d(t.ctx(), wide, k, 5, wide->nb[1], static_cast<size_t>(k) * sizeof(float));
    return graph::mul_mat(t.ctx(), t.weight(type, {k, 19}), x);
  }, kNmse);
  for (int64_t n : {1, 4})
    expect_op_matches(std::string(type_name(type)) + " batches over a 2-D weight", [&](OpTester& t) {
      return graph::mul_mat(t.ctx(), t.weight(type, {k, 27}), t.input(Type::F32, {k, n, 3}));
    }, kNmse);
  expect_op_matches(std::string(type_name(type)) + " 3-D weight broadcast", [&](OpTester& t) {
    // a [k, 17, 2, 1] against b [k, 3, 4, 2]: output batch (i2, i3) uses slice i2 / 2.
    return graph::mul_mat(t.ctx(), t.weight(type, {k, 17, 2, 1}), t.input(Type::F32, {k, 3, 4, 2}));
  }, kNmse);
  expect_op_matches(std::string(type_name(type)) + " permuted batches", [&](OpTester& t) {
    Tensor* x = graph::permute(t.ctx(), t.input(Type::F32, {k, 4, 2, 3}), 0, 2, 1, 3);  // [k, 2, 4, 3]
    return graph::mul_mat(t.ctx(), t.weight(type, {k, 11, 2, 3}), x);
  }, kNmse);
}

// Decode on 3 and 4 workers: each takes its own range's units, then steals units from the back
// of the others' ranges; a tile no worker computed would keep the output's sentinel and fail the
// comparison with the reference. (One computed twice gives the same values: the plan test below
// checks that the units cover each range once.)
TEST_P(HtpMatmulTypes, DecodeOnThreeAndFourWorkers) {
  const Type type = GetParam();
  const int64_t k = is_kquant(type) ? 256 : 96;
  const std::vector<DeviceConfig> configs = {
      {3, 8u << 20, HTP_DMA_ZERO_COPY}, {4, 8u << 20, HTP_DMA_ASYNC}, {3, 256u << 10, HTP_DMA_INLINE}};
  for (int64_t m : {67, 1003, 4100})
    expect_op_matches(label(type, k, m, 1), [&](OpTester& t) {
      return graph::mul_mat(t.ctx(), t.weight(type, {k, m}), t.input(Type::F32, {k, 1}));
    }, kNmse, configs);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, HtpMatmulTypes, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<Type>& i) { return std::string(type_name(i.param)); });

// A large square case: every worker streams many units and, at 256 KiB, many chunks of act rows.
TEST(HtpMatmulOps, LargeSquare) {
  const std::pair<Type, int64_t> cases[] = {{Type::Q4_0, 1}, {Type::Q4_0, 8}, {Type::F16, 8}};
  for (const auto& [type, n] : cases)
    expect_op_matches(label(type, 4096, 4096, n), [&](OpTester& t) {
      return graph::mul_mat(t.ctx(), t.weight(type, {4096, 4096}), t.input(Type::F32, {4096, n}));
    }, kNmse);
}

// ---- MUL_MAT_ID -------------------------------------------------------------------------------

const Type kIdTypes[] = {Type::Q4_0, Type::Q8_0, Type::Q4_K, Type::MXFP4, Type::F16, Type::Q6_K};

TEST(HtpMatmulIdOps, RandomRouting) {
  for (Type type : kIdTypes) {
    const int64_t k = is_kquant(type) ? 256 : 96;
    for (int64_t n_expert : {4, 8})
      for (int64_t n_used : {1, 2, 4})
        for (int64_t n_b : {int64_t{1}, n_used})
          for (int64_t n_tok : {1, 2, 7, 33}) {
            const std::string name = std::string(type_name(type)) + " experts " + std::to_string(n_expert) +
                                     " used " + std::to_string(n_used) + " n_b " + std::to_string(n_b) +
                                     " tokens " + std::to_string(n_tok);
            expect_op_matches(name, [&](OpTester& t) {
              Tensor* as = t.weight(type, {k, 21, n_expert});
              Tensor* b = t.input(Type::F32, {k, n_b, n_tok});
              return graph::mul_mat_id(t.ctx(), as, b, t.ids({n_used, n_tok}, static_cast<int32_t>(n_expert)));
            }, kNmse);
          }
  }
}

// Every pair on one expert (the others idle), and tokens choosing the same expert twice.
TEST(HtpMatmulIdOps, SkewedRouting) {
  for (Type type : {Type::Q4_0, Type::Q4_K}) {
    const int64_t k = is_kquant(type) ? 256 : 64;
    for (int64_t n_tok : {1, 33}) {
      expect_op_matches(std::string(type_name(type)) + " all to expert 5", [&](OpTester& t) {
        Tensor* as = t.weight(type, {k, 67, 8});
        Tensor* b = t.input(Type::F32, {k, 1, n_tok});
        return graph::mul_mat_id(t.ctx(), as, b, t.ids_from({4, n_tok}, std::vector<int32_t>(4 * n_tok, 5)));
      }, kNmse);
      expect_op_matches(std::string(type_name(type)) + " repeated experts", [&](OpTester& t) {
        std::vector<int32_t> ids(2 * n_tok);
        for (int64_t i = 0; i < 2 * n_tok; ++i) ids[i] = static_cast<int32_t>(i / 2 % 3);  // (0,0), (1,1), ...
        Tensor* as = t.weight(type, {k, 67, 4});
        Tensor* b = t.input(Type::F32, {k, 2, n_tok});
        return graph::mul_mat_id(t.ctx(), as, b, t.ids_from({2, n_tok}, ids));
      }, kNmse);
    }
  }
}

// Prefill-sized routing: many pairs per expert (GEMM per expert), several chunks at 256 KiB.
TEST(HtpMatmulIdOps, ManyTokens) {
  expect_op_matches("Q4_0 experts 8 used 2 tokens 128", [&](OpTester& t) {
    Tensor* as = t.weight(Type::Q4_0, {512, 200, 8});
    Tensor* b = t.input(Type::F32, {512, 1, 128});
    return graph::mul_mat_id(t.ctx(), as, b, t.ids({2, 128}, 8));
  }, kNmse);
}

// ---- kernel params: host builder and device check --------------------------------------------

htp_tensor tensor(uint32_t type, std::initializer_list<uint32_t> ne, uint32_t elem_bytes, uint64_t size = 0) {
  htp_tensor t{};
  t.type = type;
  int d = 0;
  for (uint32_t v : ne) t.ne[d++] = v;
  for (; d < 4; ++d) t.ne[d] = 1;
  t.nb[0] = elem_bytes;
  for (d = 1; d < 4; ++d) t.nb[d] = t.nb[d - 1] * (d == 1 ? t.ne[0] : t.ne[d - 1]);
  t.size = (uint32_t)(size ? size : (uint64_t)t.nb[3] * t.ne[3]);
  return t;
}

TEST(HtpMatmulParams, BuilderAndCheckAgree) {
  using namespace hexllm::htp;
  struct Case {
    uint32_t tile, k, m, n;
    uint32_t vtcm;
  };
  const Case cases[] = {{HTP_TILE_Q4_0_X8, 2048, 8192, 1, 8u << 20},    {HTP_TILE_Q4_0_X8, 2048, 8192, 512, 8u << 20},
                        {HTP_TILE_Q6_K_X8, 2048, 128256, 1, 8u << 20},  {HTP_TILE_F32_X8, 4096, 67, 33, 256u << 10},
                        {HTP_TILE_Q8_0_X8, 14336, 4096, 512, 256u << 10}};
  for (const Case& c : cases) {
    const htp_tensor w = tensor(c.tile, {c.k, c.m}, 4, htp_tiled_size(c.tile, c.m, c.k));
    const htp_tensor x = tensor(HTP_TYPE_F32, {c.k, c.n}, 4);
    const htp_tensor y = tensor(HTP_TYPE_F32, {c.m, c.n}, 4);
    for (uint32_t threads : {1u, 2u}) {
      htp_mm_params p{};
      ASSERT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, w, x, nullptr, threads, c.vtcm, &p), HTP_OK);
      htp_mm_shape s{};
      ASSERT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
      EXPECT_EQ(htp_mm_params_check(p, s, threads, c.vtcm), HTP_OK);
      // The plan fits the arena, and a whole chunk's output fits its out slot.
      EXPECT_LE((uint64_t)p.lay.thread_offset + (uint64_t)p.lay.thread_bytes * threads, c.vtcm);
      EXPECT_GE(p.lay.out_slot_bytes, (uint64_t)p.cfg.act_rows * p.cfg.group_tiles * 8 * 4);
      EXPECT_EQ(p.cfg.n_threads, threads);
      // Any edited field is refused by the device check.
      htp_mm_params bad = p;
      bad.cfg.act_rows += 1;
      EXPECT_NE(htp_mm_params_check(bad, s, threads, c.vtcm), HTP_OK);
      bad = p;
      bad.lay.out_offset += 128;
      EXPECT_EQ(htp_mm_params_check(bad, s, threads, c.vtcm), HTP_ERR_INVALID_PARAMS);
      bad = p;
      bad.div[0].mul ^= 1;
      EXPECT_EQ(htp_mm_params_check(bad, s, threads, c.vtcm), HTP_ERR_INVALID_PARAMS);
      EXPECT_NE(htp_mm_params_check(p, s, threads, c.vtcm / 64), HTP_OK);  // a smaller arena
    }
  }
  // Segments: batches over a 2-D weight are one run of act rows when dst rows continue evenly
  // (contiguous dst), one run per batch when the planes are padded.
  {
    const htp_tensor w = tensor(HTP_TILE_Q4_0_X8, {64, 21}, 4, htp_tiled_size(HTP_TILE_Q4_0_X8, 21, 64));
    const htp_tensor x = tensor(HTP_TYPE_F32, {64, 5, 3, 2}, 4);
    htp_tensor y = tensor(HTP_TYPE_F32, {21, 5, 3, 2}, 4);
    htp_mm_shape s{};
    ASSERT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
    EXPECT_EQ(s.seg_rows, 30u);
    y.nb[2] += 64;
    y.nb[3] = y.nb[2] * 3;
    ASSERT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
    EXPECT_EQ(s.seg_rows, 5u);
  }
  // A 128 KiB (1 tile) F32 row at 256 KiB: K is split, one row tile per unit.
  const htp_tensor w = tensor(HTP_TILE_F32_X8, {8192, 64}, 4, htp_tiled_size(HTP_TILE_F32_X8, 64, 8192));
  const htp_tensor x = tensor(HTP_TYPE_F32, {8192, 4}, 4);
  const htp_tensor y = tensor(HTP_TYPE_F32, {64, 4}, 4);
  htp_mm_params p{};
  ASSERT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, w, x, nullptr, 2, 256u << 10, &p), HTP_OK);
  EXPECT_LT(p.cfg.k_blocks, 8192u / 32);
  EXPECT_EQ(p.cfg.group_tiles, 1u);
}

// A device that asks for bf16 activations (htp_hwinfo's gemm: amx) gets them for quantized
// weights from bf16_min_rows act rows on, at a stride of an odd number of 128-byte lines, in
// chunks of equal size that carry at least min_pass_rows where the arena allows (smaller weight
// units first); float weights, short batches and other devices keep the tile's own format.
TEST(HtpMatmulParams, Bf16ActivationsWhereTheDeviceAsks) {
  using namespace hexllm::htp;
  const htp_gemm_prefs amx{384, 16, 0, 0};
  auto build = [&](uint32_t tile, uint32_t k, uint32_t m, uint32_t n, uint32_t vtcm, const htp_gemm_prefs& g,
                   htp_mm_params* p) {
    const htp_tensor w = tensor(tile, {k, m}, 4, htp_tiled_size(tile, m, k));
    const htp_tensor x = tensor(HTP_TYPE_F32, {k, n}, 4);
    const htp_tensor y = tensor(HTP_TYPE_F32, {m, n}, 4);
    const htp_status st = htp_mm_params_build(HTP_OP_MUL_MAT, y, w, x, nullptr, 2, vtcm, p, g);
    htp_mm_shape s{};
    EXPECT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
    if (st == HTP_OK) {
      EXPECT_EQ(htp_mm_params_check(*p, s, 2, vtcm), HTP_OK);
    }
    return st;
  };
  htp_mm_params p{};
  // llama-3.2-1b's gate: 512 rows of 4 KiB of bf16 fit one chunk once the units shrink.
  ASSERT_EQ(build(HTP_TILE_Q4_0_X8, 2048, 8192, 512, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_BF16);
  EXPECT_EQ(p.cfg.act_rows, 512u);
  EXPECT_GE(p.lay.act_stride, 2048u * 2);
  EXPECT_EQ(p.lay.act_stride % 128, 0u);
  EXPECT_EQ(p.lay.act_stride / 128 % 2, 1u);
  // Without the preferences: Q8 blocks, and the largest units.
  htp_mm_params q{};
  ASSERT_EQ(build(HTP_TILE_Q4_0_X8, 2048, 8192, 512, 8u << 20, {}, &q), HTP_OK);
  EXPECT_EQ(q.cfg.act, HTP_ACT_Q8_32);
  EXPECT_EQ(q.lay.act_stride, 2048u / 32 * sizeof(htp_act_q8_32));
  EXPECT_GE(q.cfg.group_tiles, p.cfg.group_tiles);
  // Its down projection: 512 rows of 16 KiB do not fit 8 MiB, so two equal chunks.
  ASSERT_EQ(build(HTP_TILE_Q4_0_X8, 8192, 2048, 512, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_BF16);
  EXPECT_EQ(p.cfg.act_rows, 256u);
  // K-quants too; short batches, decode and float weights keep their own format.
  ASSERT_EQ(build(HTP_TILE_Q6_K_X8, 2048, 512, 16, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_BF16);
  ASSERT_EQ(build(HTP_TILE_Q6_K_X8, 2048, 512, 15, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_Q8_256);
  ASSERT_EQ(build(HTP_TILE_Q4_0_X8, 2048, 512, 1, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_Q8_32);
  ASSERT_EQ(build(HTP_TILE_F16_X8, 2048, 512, 64, 8u << 20, amx, &p), HTP_OK);
  EXPECT_EQ(p.cfg.act, HTP_ACT_F32);
  // The device check refuses an act format the weights cannot take.
  const htp_tensor w = tensor(HTP_TILE_F16_X8, {2048, 512}, 4, htp_tiled_size(HTP_TILE_F16_X8, 512, 2048));
  const htp_tensor x = tensor(HTP_TYPE_F32, {2048, 64}, 4);
  const htp_tensor y = tensor(HTP_TYPE_F32, {512, 64}, 4);
  htp_mm_shape s{};
  ASSERT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
  htp_mm_params bad = p;
  bad.cfg.act = HTP_ACT_BF16;
  EXPECT_EQ(htp_mm_params_check(bad, s, 2, 8u << 20), HTP_ERR_INVALID_PARAMS);
  ASSERT_EQ(build(HTP_TILE_Q4_0_X8, 2048, 512, 64, 8u << 20, {}, &p), HTP_OK);
  const htp_tensor w4 = tensor(HTP_TILE_Q4_0_X8, {2048, 512}, 4, htp_tiled_size(HTP_TILE_Q4_0_X8, 512, 2048));
  ASSERT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w4, x, nullptr, &s), HTP_OK);
  bad = p;
  bad.cfg.act = HTP_ACT_Q8_256;
  EXPECT_EQ(htp_mm_params_check(bad, s, 2, 8u << 20), HTP_ERR_INVALID_PARAMS);
}

// A device that asks for other decode units (htp_hwinfo's gemm.gemv_unit_bytes: the avx512
// ymm GEMV's two weight streams run half a unit apart) gets units up to that size for one act
// row, still a quarter of a worker's range at most when workers share the op; batches keep the
// GEMM's units.
TEST(HtpMatmulParams, GemvUnitsOfTheDevicesSize) {
  using namespace hexllm::htp;
  const htp_gemm_prefs big{0, 0, 1u << 20, 0};
  const uint64_t row_bytes = htp_tile_row_bytes(HTP_TILE_Q4_0_X8, 2048);
  // Q4_0 [2048 x m]: row tiles of 9 KiB.
  auto unit_bytes = [&](uint32_t n, uint32_t threads, const htp_gemm_prefs& g, uint32_t m = 8192) {
    const htp_tensor w = tensor(HTP_TILE_Q4_0_X8, {2048, m}, 4, htp_tiled_size(HTP_TILE_Q4_0_X8, m, 2048));
    const htp_tensor x = tensor(HTP_TYPE_F32, {2048, n}, 4);
    const htp_tensor y = tensor(HTP_TYPE_F32, {m, n}, 4);
    htp_mm_params p{};
    EXPECT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, w, x, nullptr, threads, 8u << 20, &p, g), HTP_OK);
    htp_mm_shape s{};
    EXPECT_EQ(htp_mm_shape_build(HTP_OP_MUL_MAT, y, w, x, nullptr, &s), HTP_OK);
    EXPECT_EQ(htp_mm_params_check(p, s, threads, 8u << 20), HTP_OK);
    return p.cfg.group_tiles * row_bytes;
  };
  EXPECT_LE(unit_bytes(1, 1, {}), HTP_MM_GEMV_UNIT_BYTES);
  EXPECT_GT(unit_bytes(1, 1, {}), HTP_MM_GEMV_UNIT_BYTES / 2);
  EXPECT_LE(unit_bytes(1, 1, big), 1u << 20);
  EXPECT_GT(unit_bytes(1, 1, big), 1u << 19);
  // 2 workers on 4096 rows: a quarter of each one's 2.25 MiB (576 KiB) caps the 1 MiB.
  const uint64_t quarter = 4096 / 8 / 2 / HTP_MM_GEMV_UNITS_PER_THREAD * row_bytes;
  EXPECT_LE(unit_bytes(1, 2, big, 4096), quarter);
  EXPECT_GT(unit_bytes(1, 2, big, 4096), quarter / 2);
  EXPECT_GT(unit_bytes(1, 2, big), unit_bytes(1, 2, {}));
  EXPECT_EQ(unit_bytes(64, 2, big), unit_bytes(64, 2, {}));
}

// The dynamic split's plan: worker w's units cover its range of row tiles once, front to back,
// none larger than a group, and the range's last group's worth of tiles (the units others
// steal first) in units of at most tail_tiles.
TEST(HtpMatmulParams, DynamicSplitUnitsCoverEachRangeInOrder) {
  for (uint32_t tiles : {1u, 7u, 100u, 513u, 16032u})
    for (uint32_t n : {2u, 3u, 4u})
      for (uint32_t g : {1u, 4u, 14u})
        for (uint32_t tail : {1u, 3u, 14u}) {
          if (tail > g) continue;
          htp::mm_job j{};
          j.p.cfg.n_threads = static_cast<uint16_t>(n);
          j.p.cfg.group_tiles = g;
          j.tail_tiles = tail;
          j.tile0 = 5;
          j.tile_end = 5 + tiles;
          const std::string what = "tiles " + std::to_string(tiles) + " workers " + std::to_string(n) + " group " +
                                   std::to_string(g) + " tail " + std::to_string(tail);
          uint32_t at = j.tile0;
          for (unsigned w = 0; w < n; ++w) {
            const htp_mdev_range r = htp::mm_dynamic_range(j, w);
            ASSERT_EQ(r.start, at) << what;
            const uint32_t end = r.start + r.count, last_group = end - std::min(g, r.count);
            const uint32_t units = htp::mm_dynamic_units(j, w);
            for (uint32_t u = 0; u < units; ++u) {
              const htp_mdev_range x = htp::mm_dynamic_unit(j, w, u);
              ASSERT_EQ(x.start, at) << what << " worker " << w << " unit " << u;
              ASSERT_GE(x.count, 1u) << what;
              ASSERT_LE(x.count, x.start >= last_group ? tail : g) << what << " worker " << w << " unit " << u;
              at += x.count;
            }
            ASSERT_EQ(at, end) << what << " worker " << w;
          }
          EXPECT_EQ(at, j.tile_end) << what;
        }
}

TEST(HtpMatmulParams, RefusesWhatItCannotRun) {
  using namespace hexllm::htp;
  const htp_tensor x = tensor(HTP_TYPE_F32, {256, 4}, 4);
  const htp_tensor y = tensor(HTP_TYPE_F32, {64, 4}, 4);
  htp_mm_params p{};
  // A plain (not repacked) src0: the reference backend runs it.
  EXPECT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, tensor(HTP_TYPE_F32, {256, 64}, 4), x, nullptr, 2, 8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
  // A tiled tensor smaller than its tiles.
  const htp_tensor w = tensor(HTP_TILE_Q4_0_X8, {256, 64}, 4, htp_tiled_size(HTP_TILE_Q4_0_X8, 64, 256) - 1);
  EXPECT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, w, x, nullptr, 2, 8u << 20, &p), HTP_ERR_INVALID_PARAMS);
  // K not a multiple of the quant block.
  const htp_tensor w2 = tensor(HTP_TILE_Q4_K_X8, {96, 64}, 4, 1u << 20);
  EXPECT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, tensor(HTP_TYPE_F32, {64, 4}, 4), w2,
                                tensor(HTP_TYPE_F32, {96, 4}, 4), nullptr, 2, 8u << 20, &p),
            HTP_ERR_INVALID_PARAMS);
  // Far too little VTCM.
  const htp_tensor w3 = tensor(HTP_TILE_Q4_0_X8, {256, 64}, 4, htp_tiled_size(HTP_TILE_Q4_0_X8, 64, 256));
  EXPECT_EQ(htp_mm_params_build(HTP_OP_MUL_MAT, y, w3, x, nullptr, 2, 1024, &p), HTP_ERR_VTCM_TOO_SMALL);
}

// ---- direct runs through the HTP backend ------------------------------------------------------

// A graph run by hand: weights repacked by the backend, other leaves in pool buffers.
struct DirectRun {
  htp_host::HtpBackend htp;
  graph::Context ctx;
  std::vector<std::vector<uint8_t>> host;  // leaf contents (weights stay here, like an mmapped file)
  std::vector<Tensor*> weights;
  std::vector<std::unique_ptr<backend::Buffer>> buffers;

  explicit DirectRun(const DeviceConfig& c) : htp(options(c)) {}

  static htp_host::HtpOptions options(const DeviceConfig& c) {
    htp_host::HtpOptions o;
    o.n_threads = c.n_threads;
    o.vtcm_bytes = c.vtcm_bytes;
    o.dma_mode = c.dma_mode;
    return o;
  }

  Tensor* leaf(Type type, std::initializer_list<int64_t> ne, std::vector<uint8_t> bytes, bool weight) {
    Tensor* t = ctx.new_tensor(type, ne);
    EXPECT_EQ(bytes.size(), t->n_bytes());
    host.push_back(std::move(bytes));
    if (weight) {
      t->flags |= graph::kFlagWeight;
      t->data = host.back().data();
      weights.push_back(t);
    } else {
      buffers.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
      t->data = buffers.back()->data();
      std::memcpy(t->data, host.back().data(), t->n_bytes());
    }
    return t;
  }

  // Gives every computed node a buffer and loads the weights.
  std::vector<Tensor*> prepare(Tensor* out) {
    graph::Graph gf;
    gf.expand(out);
    htp.load_weights(weights, nullptr, nullptr);
    std::vector<Tensor*> nodes(gf.nodes().begin(), gf.nodes().end());
    for (Tensor* n : nodes) {
      if (n->data != nullptr) continue;
      buffers.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, n->n_bytes()));
      n->data = buffers.back()->data();
    }
    return nodes;
  }
};

std::vector<uint8_t> random_f32(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint8_t> bytes(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float v = u(rng);
    std::memcpy(bytes.data() + 4 * i, &v, 4);
  }
  return bytes;
}

std::vector<uint8_t> i32_bytes(const std::vector<int32_t>& v) {
  std::vector<uint8_t> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  return den > 0 ? num / den : num;
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.n_elements()));
  std::memcpy(v.data(), t.data, v.size() * 4);
  return v;
}

// ids out of range: the device refuses the op with a status, the backend throws an error that
// names the op, and the same backend then runs a correct batch.
// The expert ids sit in memory the host shares with the device and may change while the op
// runs. The device validates and routes one private copy, so an id that turns out of range after
// validation never indexes VTCM: every run either succeeds or fails the op, none crashes.
// (Reading the shared ids twice, validate then route, crashed here within a few runs.)
TEST(HtpMatmulIdOps, IdsChangedDuringTheOpNeverEscapeValidation) {
  std::mt19937 rng(11);
  DirectRun r({1, 8u << 20, HTP_DMA_ZERO_COPY});
  const int64_t k = 32, m = 8, n_exp = 8, n_used = 8, n_tok = 2048;
  std::vector<float> wf(static_cast<size_t>(k * m * n_exp));
  for (float& v : wf) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<uint8_t> wq(row_size(Type::Q8_0, k) * m * n_exp);
  quant::quantize_rows(Type::Q8_0, wf.data(), wq.data(), m * n_exp, k, 1);
  Tensor* as = r.leaf(Type::Q8_0, {k, m, n_exp}, wq, true);
  Tensor* b = r.leaf(Type::F32, {k, 1, n_tok}, random_f32(k * n_tok, rng), false);
  std::vector<int32_t> ids(static_cast<size_t>(n_used * n_tok));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i % n_exp);
  Tensor* idt = r.leaf(Type::I32, {n_used, n_tok}, i32_bytes(ids), false);
  Tensor* out = graph::mul_mat_id(r.ctx, as, b, idt);
  std::vector<Tensor*> nodes = r.prepare(out);
  ASSERT_TRUE(r.htp.supports(*out));

  // One id flips between a valid expert and one far outside the table, as fast as it can.
  int32_t* racing = static_cast<int32_t*>(idt->data) + 1;
  bool stop = false;
  std::thread racer([&] {
    for (uint32_t i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); ++i)
      __atomic_store_n(racing, (i & 1) != 0 ? 1 : 0x3fffffff, __ATOMIC_RELAXED);
  });
  int ok = 0, refused = 0;
  for (int run = 0; run < 500; ++run) {
    try {
      r.htp.compute(nodes);
      ++ok;
    } catch (const Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("INVALID_PARAMS"), std::string::npos) << e.what();
    }
  }
  __atomic_store_n(&stop, true, __ATOMIC_RELAXED);
  racer.join();
  EXPECT_EQ(ok + refused, 500);
}

TEST(HtpMatmulIdOps, IdsOutOfRangeFailTheOp) {
  for (const DeviceConfig& c : standard_configs())
    for (int32_t bad : {8, -1, 1000}) {
      std::mt19937 rng(7);
      DirectRun r(c);
      const int64_t k = 64, m = 24, n_exp = 8, n_used = 2, n_tok = 3;
      std::vector<float> wf(static_cast<size_t>(k * m * n_exp));
      for (float& v : wf) v = std::uniform_real_distribution<float>(-1, 1)(rng);
      std::vector<uint8_t> wq(row_size(Type::Q8_0, k) * m * n_exp);
      quant::quantize_rows(Type::Q8_0, wf.data(), wq.data(), m * n_exp, k, 1);
      Tensor* as = r.leaf(Type::Q8_0, {k, m, n_exp}, wq, true);
      Tensor* b = r.leaf(Type::F32, {k, 1, n_tok}, random_f32(k * n_tok, rng), false);
      std::vector<int32_t> ids = {0, 1, 2, 3, 4, 5};
      ids[3] = bad;
      Tensor* idt = r.leaf(Type::I32, {n_used, n_tok}, i32_bytes(ids), false);
      Tensor* out = graph::mul_mat_id(r.ctx, as, b, idt);
      out->set_name("moe_gate");
      std::vector<Tensor*> nodes = r.prepare(out);
      ASSERT_TRUE(r.htp.supports(*out)) << c.label();
      try {
        r.htp.compute(nodes);
        ADD_FAILURE() << "ids[1, 1] = " << bad << " was accepted (" << c.label() << ")";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("MUL_MAT_ID"), std::string::npos) << what;
        EXPECT_NE(what.find("moe_gate"), std::string::npos) << what;
        EXPECT_NE(what.find("INVALID_PARAMS"), std::string::npos) << what;
      }
      // The next call works: fix the id and compare with the reference backend.
      ids[3] = 7;
      std::memcpy(idt->data, ids.data(), ids.size() * 4);
      r.htp.compute(nodes);
      const std::vector<float> got = floats(*out);
      backend::RefBackend ref(1);
      ref.compute(nodes);
      EXPECT_LE(nmse(got, floats(*out)), kNmse) << c.label();
    }
}

// Elements of a (possibly strided) F32 tensor in (i0, i1, i2, i3) order.
std::vector<float> strided_floats(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        const auto* row = static_cast<const uint8_t*>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
        for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
          float x;
          std::memcpy(&x, row + 4 * i0, 4);
          v.push_back(x);
        }
      }
  return v;
}

// A dst whose rows and planes are padded: batches whose dst rows are not evenly strided are
// separate segments (and separate write-backs); bytes between the elements stay untouched.
TEST(HtpMatmulOps, PaddedOutputStrides) {
  struct Pad {
    size_t row, plane, cube;  // bytes added to nb1, nb2, nb3
  };
  const Pad pads[] = {{16, 0, 0}, {0, 64, 0}, {0, 0, 128}, {32, 64, 128}};
  for (const DeviceConfig& c : standard_configs())
    for (const Pad& pad : pads)
      for (const auto& [c2, b2] : {std::pair<int64_t, int64_t>{1, 1}, {3, 1}, {3, 3}}) {
        std::mt19937 rng(5);
        DirectRun r(c);
        const int64_t k = 64, m = 21, n = 5, c3 = 2;
        std::vector<float> wf(static_cast<size_t>(k * m * b2));
        for (float& v : wf) v = std::uniform_real_distribution<float>(-1, 1)(rng);
        std::vector<uint8_t> wq(row_size(Type::Q4_0, k) * m * b2);
        quant::quantize_rows(Type::Q4_0, wf.data(), wq.data(), m * b2, k, 1);
        Tensor* w = r.leaf(Type::Q4_0, {k, m, b2}, wq, true);
        Tensor* x = r.leaf(Type::F32, {k, n, c2, c3}, random_f32(k * n * c2 * c3, rng), false);
        Tensor* out = graph::mul_mat(r.ctx, w, x);
        out->nb[1] += pad.row;
        out->nb[2] = out->nb[1] * n + pad.plane;
        out->nb[3] = out->nb[2] * c2 + pad.cube;
        std::vector<Tensor*> nodes = r.prepare(out);
        ASSERT_TRUE(r.htp.supports(*out)) << c.label();
        auto* bytes = static_cast<uint8_t*>(out->data);
        std::memset(bytes, 0x5a, out->n_bytes());
        r.htp.compute(nodes);
        const std::vector<float> got = strided_floats(*out);
        // Every byte outside the elements still holds the fill.
        std::vector<uint8_t> mask(out->n_bytes(), 1);
        for (int64_t i3 = 0; i3 < c3; ++i3)
          for (int64_t i2 = 0; i2 < c2; ++i2)
            for (int64_t i1 = 0; i1 < n; ++i1)
              std::memset(mask.data() + i1 * out->nb[1] + i2 * out->nb[2] + i3 * out->nb[3], 0, m * 4);
        size_t touched = 0;
        for (size_t i = 0; i < mask.size(); ++i) touched += mask[i] && bytes[i] != 0x5a;
        EXPECT_EQ(touched, 0u) << "padding bytes written (" << c.label() << ")";
        backend::RefBackend ref(1);
        ref.compute(nodes);
        EXPECT_LE(nmse(got, strided_floats(*out)), kNmse)
            << "pad " << pad.row << "/" << pad.plane << "/" << pad.cube << " c2 " << c2 << " b2 " << b2 << " ("
            << c.label() << ")";
      }
}

// Q5_K has no quantizer: weights are random blocks with realistic scales, run by hand.
std::vector<uint8_t> random_q5k(int64_t k, int64_t rows, std::mt19937& rng) {
  std::vector<uint8_t> bytes(row_size(Type::Q5_K, k) * rows);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (size_t off = 0; off < bytes.size(); off += sizeof(quant::block_q5_K)) {
    auto* blk = reinterpret_cast<quant::block_q5_K*>(bytes.data() + off);
    blk->d = fp32_to_fp16(0.003f * u(rng));
    blk->dmin = fp32_to_fp16(0.01f * u(rng));
  }
  return bytes;
}

TEST(HtpMatmulOps, Q5KWeights) {
  struct Shape {
    int64_t k, m, n, n_exp;  // n_exp 0: MUL_MAT
  };
  const Shape shapes[] = {{256, 13, 1, 0}, {512, 67, 7, 0}, {256, 67, 33, 0}, {4096, 67, 2, 0},
                          {256, 4096, 1, 0}, {512, 21, 33, 0}, {256, 21, 7, 4}};
  for (const DeviceConfig& c : standard_configs())
    for (const Shape& s : shapes) {
      std::mt19937 rng(11);
      DirectRun r(c);
      const int64_t slices = s.n_exp ? s.n_exp : 1;
      Tensor* w = r.leaf(Type::Q5_K, {s.k, s.m, slices}, random_q5k(s.k, s.m * slices, rng), true);
      Tensor* out;
      if (s.n_exp == 0) {
        out = graph::mul_mat(r.ctx, w, r.leaf(Type::F32, {s.k, s.n}, random_f32(s.k * s.n, rng), false));
      } else {
        std::vector<int32_t> ids(static_cast<size_t>(2 * s.n));
        for (auto& v : ids) v = static_cast<int32_t>(rng() % s.n_exp);
        Tensor* b = r.leaf(Type::F32, {s.k, 1, s.n}, random_f32(s.k * s.n, rng), false);
        out = graph::mul_mat_id(r.ctx, w, b, r.leaf(Type::I32, {2, s.n}, i32_bytes(ids), false));
      }
      std::vector<Tensor*> nodes = r.prepare(out);
      ASSERT_TRUE(r.htp.supports(*out)) << c.label();
      r.htp.compute(nodes);
      const std::vector<float> got = floats(*out);
      backend::RefBackend ref(1);
      ref.compute(nodes);
      EXPECT_LE(nmse(got, floats(*out)), kNmse)
          << "Q5_K K=" << s.k << " M=" << s.m << " N=" << s.n << " experts " << s.n_exp << " (" << c.label() << ")";
    }
}

}  // namespace
}  // namespace hexllm::test
