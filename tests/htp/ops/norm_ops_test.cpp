// Normalizations (RMS_NORM, NORM, L2_NORM) on the device against the reference backend (sums
// in double), and the fused RMS_NORM_MUL kernel through a hand-built batch against a double
// evaluation of rms_norm(x) * w (the graph has no such node: the host fusion pass forms it).
// Threshold 1e-7 (docs/DESIGN.md §9): float-lane sums keep the scale within ~1e-6 relative.
#include <cmath>
#include <random>

#include "../test_batch.h"
#include "htp/abi/norm_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 1e-7;

struct NormOp {
  const char* name;
  Tensor* (*fn)(graph::Context&, Tensor*, float);
};

const NormOp kOps[] = {{"rms_norm", graph::rms_norm}, {"norm", graph::norm}, {"l2_norm", graph::l2_norm}};

TEST(HtpNormOps, OddRowLengthsAndEps) {
  for (const NormOp& op : kOps)
    for (int64_t ne0 : {1, 7, 33, 65, 4097})
      for (float eps : {0.0f, 1e-6f, 1e-2f}) {
        if (op.fn == graph::norm && ne0 == 1 && eps == 0.0f) continue;  // 0 / 0 on both sides
        expect_op_matches(
            std::string(op.name) + " ne0=" + std::to_string(ne0) + " eps=" + std::to_string(eps),
            [&](OpTester& t) {
              return op.fn(t.ctx(), t.input(Type::F32, {ne0, 5, 3, 2}), eps);
            },
            kNmse);
      }
}

TEST(HtpNormOps, ManyRowsOffsetDataPermutedAndViews) {
  for (const NormOp& op : kOps) {
    expect_op_matches(
        std::string(op.name) + " 4096x64",
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {4096, 64}, -3, 5), 1e-6f);
        },
        kNmse);
    // Mean far from zero: NORM must not lose the variance to cancellation.
    expect_op_matches(
        std::string(op.name) + " offset data",
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {1000, 6}, 300.0f, 301.0f), 1e-6f);
        },
        kNmse);
    expect_op_matches(
        std::string(op.name) + " permuted",
        [&](OpTester& t) {
          Tensor* a =
              graph::permute(t.ctx(), t.input(Type::F32, {128, 8, 32, 1}), 0, 2, 1, 3);  // q-norm layout
          return op.fn(t.ctx(), a, 1e-6f);
        },
        kNmse);
    expect_op_matches(
        std::string(op.name) + " view",
        [&](OpTester& t) {
          Tensor* wide = t.input(Type::F32, {70, 11, 1, 1});
          return op.fn(t.ctx(), graph::view_2d(t.ctx(), wide, 65, 11, wide->nb[1], 3 * sizeof(float)), 1e-2f);
        },
        kNmse);
  }
}

// Rows longer than VTCM allows with 256 KiB (128 KiB, 256 KiB, 512 KiB): chunked, two passes.
TEST(HtpNormOps, LargeRowsStreamInChunks) {
  for (const NormOp& op : kOps)
    for (int64_t ne0 : {32768, 65536, 131073}) {
      expect_op_matches(
          std::string(op.name) + " ne0=" + std::to_string(ne0),
          [&](OpTester& t) {
            return op.fn(t.ctx(), t.input(Type::F32, {ne0, 3}, -2, 6), 1e-6f);
          },
          kNmse);
    }
}

// ---- RMS_NORM_MUL, device level ----

struct FusedCase {
  uint32_t ne0, rows, threads, dma_mode, vtcm;
  uint32_t row_stride;  // 0: dense x
};

void run_rms_norm_mul(const FusedCase& c) {
  using namespace hexllm::htp::test;
  const uint32_t stride = c.row_stride != 0 ? c.row_stride : c.ne0 * 4;
  const uint32_t x_off = 0, w_off = (uint32_t)htp_align_up((uint64_t)stride * c.rows, 4096);
  const uint32_t y_off = (uint32_t)htp_align_up(w_off + c.ne0 * 4, 4096);
  Bank bank(htp_align_up(y_off + (uint64_t)c.ne0 * c.rows * 4 + 4096, 4096));
  std::mt19937 rng(c.ne0 + c.rows);
  std::uniform_real_distribution<float> u(-2.0f, 3.0f);
  for (uint32_t r = 0; r < c.rows; ++r)
    for (uint32_t i = 0; i < c.ne0; ++i) bank.f32(x_off + r * stride)[i] = u(rng);
  for (uint32_t i = 0; i < c.ne0; ++i) bank.f32(w_off)[i] = u(rng);
  const float y_sentinel = 12345.0f;
  bank.f32(y_off)[c.ne0 * c.rows] = y_sentinel;

  Session s(bank, c.threads, c.dma_mode, c.vtcm);
  ASSERT_NE(s.s, nullptr);
  BatchBuilder b;
  const uint16_t x = b.tensor(0, x_off, HTP_TYPE_F32, {c.ne0, c.rows, 1, 1}, c.row_stride);
  const uint16_t w = b.tensor(0, w_off, HTP_TYPE_F32, {c.ne0, 1, 1, 1});
  const uint16_t y = b.tensor(0, y_off, HTP_TYPE_F32, {c.ne0, c.rows, 1, 1});
  htp_op_desc& op = b.op(HTP_OP_RMS_NORM_MUL, y, {x, w});
  const float eps = 1e-5f;
  std::memcpy(&op.params[0], &eps, 4);
  htp_norm_params p{};
  ASSERT_EQ(htp_norm_params_build(HTP_OP_RMS_NORM_MUL, b.tensors[y], b.tensors[x], &b.tensors[w],
                                  s.hw.n_threads, s.hw.vtcm_size, &p),
            HTP_OK);
  htp_kparams_set(&op, p);
  std::vector<uint64_t> msg = b.build();
  ASSERT_EQ(process(s.s, msg), HTP_OK);

  double num = 0, den = 0;
  for (uint32_t r = 0; r < c.rows; ++r) {
    const float* xr = bank.f32(x_off + r * stride);
    double ss = 0;
    for (uint32_t i = 0; i < c.ne0; ++i) ss += (double)xr[i] * xr[i];
    const double inv = 1.0 / std::sqrt(ss / c.ne0 + eps);
    for (uint32_t i = 0; i < c.ne0; ++i) {
      const double want = xr[i] * inv * bank.f32(w_off)[i];
      const double got = bank.f32(y_off)[r * c.ne0 + i];
      num += (got - want) * (got - want);
      den += want * want;
    }
  }
  EXPECT_LE(num / den, kNmse) << "ne0 " << c.ne0 << " rows " << c.rows << " threads " << c.threads << " dma "
                              << c.dma_mode << " vtcm " << c.vtcm << " chunks " << p.plan.n_chunks;
  EXPECT_EQ(bank.f32(y_off)[c.ne0 * c.rows], y_sentinel) << "wrote past dst";
}

TEST(HtpNormOps, RmsNormMulFusedKernel) {
  for (uint32_t dma : {HTP_DMA_ASYNC, HTP_DMA_INLINE, HTP_DMA_ZERO_COPY})
    for (uint32_t vtcm : {8u << 20, 256u << 10})
      for (uint32_t threads : {1u, 2u}) {
        run_rms_norm_mul({7, 5, threads, dma, vtcm, 0});
        run_rms_norm_mul({4097, 9, threads, dma, vtcm, 0});
        run_rms_norm_mul({96, 33, threads, dma, vtcm, 1024});  // rows 1 KiB apart (a view)
        run_rms_norm_mul({65536, 3, threads, dma, vtcm, 0});   // chunked at 256 KiB
      }
}

// The kernel re-derives the plan: tampered params are refused, never followed.
TEST(HtpNormOps, KernelRefusesTamperedParams) {
  using namespace hexllm::htp::test;
  Bank bank(1 << 20);
  Session s(bank, 2, HTP_DMA_ASYNC, 256u << 10);
  ASSERT_NE(s.s, nullptr);
  for (int what = 0; what < 4; ++what) {
    BatchBuilder b;
    const uint16_t x = b.tensor(0, 0, HTP_TYPE_F32, {4096, 8, 1, 1});
    const uint16_t y = b.tensor(0, 256 << 10, HTP_TYPE_F32, {4096, 8, 1, 1});
    htp_op_desc& op = b.op(HTP_OP_RMS_NORM, y, {x});
    htp_norm_params p{};
    ASSERT_EQ(htp_norm_params_build(HTP_OP_RMS_NORM, b.tensors[y], b.tensors[x], nullptr, s.hw.n_threads,
                                    s.hw.vtcm_size, &p),
              HTP_OK);
    if (what == 0) p.plan.block_rows += 100;         // blocks larger than the VTCM slots
    if (what == 1) p.plan.layout.out_offset += 128;  // layout that disagrees with the builder
    if (what == 2) p.plan.n_threads = 17;            // more workers than the session has
    if (what == 3) p.plan.ne1.mul ^= 1;              // a wrong fastdiv constant
    htp_kparams_set(&op, p);
    std::vector<uint64_t> msg = b.build();
    const htp_status st = process(s.s, msg);
    EXPECT_TRUE(st == HTP_ERR_INVALID_PARAMS || st == HTP_ERR_VTCM_TOO_SMALL) << what << ": " << st;
  }
}

}  // namespace
}  // namespace hexllm::test
