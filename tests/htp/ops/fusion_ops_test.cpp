// Fused ops the prepare stage forms, against the unfused sequence on the reference backend:
// RMS_NORM -> MUL by a weight row becomes one RMS_NORM_MUL op (odd rows, batches, views, small
// VTCM, 1 and 2 threads, sentinels), and does not form where the pattern does not hold.
// Threshold 1e-7 (docs/DESIGN.md §9): the fused kernel rounds as the two ops do.
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 1e-7;

// Runs `build` under every standard config; the device's call must hold `want_ops` ops.
void expect_fused(const std::string& name, const std::function<Tensor*(OpTester&)>& build, uint32_t want_ops) {
  for (const DeviceConfig& c : standard_configs()) {
    OpTester t;
    Tensor* out = build(t);
    const OpResult r = t.run(out, c);
    ASSERT_TRUE(r.supported) << name << ": the device refused " << r.unsupported << " (" << c.label() << ")";
    EXPECT_LE(r.nmse, kNmse) << name << " (" << c.label() << ")";
    EXPECT_EQ(r.device_ops, want_ops) << name << " (" << c.label() << ")";
  }
}

TEST(HtpFusion, RmsNormMulFormsOneOp) {
  for (int64_t ne0 : {7, 64, 67, 4097})
    for (int64_t rows : {1, 5})
      expect_fused("rms_norm_mul " + std::to_string(ne0) + "x" + std::to_string(rows), [&](OpTester& t) {
        Tensor* x = t.input(Type::F32, {ne0, rows, 3});
        Tensor* w = t.weight(Type::F32, {ne0});
        return graph::mul(t.ctx(), graph::rms_norm(t.ctx(), x, 1e-6f), w);
      }, 1);
}

TEST(HtpFusion, RmsNormMulOfAView) {
  expect_fused("rms_norm_mul of a strided view", [](OpTester& t) {
    Tensor* big = t.input(Type::F32, {96, 6});
    Tensor* x = graph::view_2d(t.ctx(), big, 80, 6, big->nb[1], 16 * 4);
    Tensor* w = t.input(Type::F32, {80});
    return graph::mul(t.ctx(), graph::rms_norm(t.ctx(), x, 1e-5f), w);
  }, 1);
}

// Not the pattern: the norm has a second reader, or the multiplier is not one row.
TEST(HtpFusion, DoesNotFormWhereThePatternDoesNotHold) {
  expect_fused("norm read twice", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {64, 4});
    Tensor* n = graph::rms_norm(t.ctx(), x, 1e-6f);
    Tensor* y = graph::mul(t.ctx(), n, t.input(Type::F32, {64}));
    return graph::add(t.ctx(), y, n);
  }, 3);
  expect_fused("full-shape multiplier", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {64, 4});
    return graph::mul(t.ctx(), graph::rms_norm(t.ctx(), x, 1e-6f), t.input(Type::F32, {64, 4}));
  }, 2);
}

}  // namespace
}  // namespace hexllm::test
