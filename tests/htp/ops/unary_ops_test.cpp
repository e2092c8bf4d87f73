// Unary family (SCALE, CLAMP, SQR, SQRT, SILU, GELU, GELU_QUICK, SIGMOID, EXP, NEG, SOFTPLUS,
// TANH) on the device against the reference backend (double math, rounded once).
// Threshold 1e-7 (docs/DESIGN.md §9): vmath is within 3.5 ulp (4e-7 relative) of the rounded truth on
// these inputs (gelu's negative tail more, on values too small to move the NMSE), so the NMSE
// is ~1e-13.
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 1e-7;

struct UnaryOp {
  const char* name;
  std::function<Tensor*(graph::Context&, Tensor*)> fn;
  float lo, hi;  // input range
};

const std::vector<UnaryOp>& ops() {
  static const std::vector<UnaryOp> kOps = {
      {"scale", [](graph::Context& c, Tensor* a) { return graph::scale(c, a, 1.75f, -0.5f); }, -4, 4},
      {"clamp", [](graph::Context& c, Tensor* a) { return graph::clamp(c, a, -0.5f, 0.25f); }, -1, 1},
      {"sqr", graph::sqr, -3, 3},
      {"sqrt", graph::sqrt, 0, 9},
      {"silu", graph::silu, -20, 20},
      {"gelu", graph::gelu, -8, 8},
      {"gelu_quick", graph::gelu_quick, -8, 8},
      {"sigmoid", graph::sigmoid, -30, 30},
      {"exp", graph::exp, -30, 30},
      {"neg", graph::neg, -2, 2},
      {"softplus", graph::softplus, -30, 30},
      {"tanh", graph::tanh, -6, 6},
  };
  return kOps;
}

std::string named(const UnaryOp& op, const std::string& what) { return std::string(op.name) + " " + what; }

TEST(HtpUnaryOps, OddRowLengthsAndManyRows) {
  for (const UnaryOp& op : ops())
    for (int64_t ne0 : {1, 7, 33, 65, 4097})
      expect_op_matches(
          named(op, "ne0=" + std::to_string(ne0)),
          [&](OpTester& t) {
            return op.fn(t.ctx(), t.input(Type::F32, {ne0, 5, 3, 2}, op.lo, op.hi));
          },
          kNmse);
}

TEST(HtpUnaryOps, ManyShortRows) {
  for (const UnaryOp& op : ops())
    expect_op_matches(
        named(op, "40x700"),
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {40, 700, 1, 1}, op.lo, op.hi));
        },
        kNmse);
}

TEST(HtpUnaryOps, PermutedAndViewSources) {
  for (const UnaryOp& op : ops()) {
    expect_op_matches(
        named(op, "permuted"),
        [&](OpTester& t) {
          Tensor* a = t.input(Type::F32, {33, 6, 5, 2}, op.lo, op.hi);
          return op.fn(t.ctx(), graph::permute(t.ctx(), a, 0, 2, 1, 3));  // [33, 5, 6, 2], rows strided
        },
        kNmse);
    expect_op_matches(
        named(op, "view"),
        [&](OpTester& t) {
          Tensor* wide = t.input(Type::F32, {100, 9, 1, 1}, op.lo, op.hi);
          return op.fn(t.ctx(), graph::view_2d(t.ctx(), wide, 37, 9, wide->nb[1], 5 * sizeof(float)));
        },
        kNmse);
  }
}

// Long rows: 128 KiB rows are cut into column chunks (and, with fewer rows than workers, split
// over the workers); with 256 KiB of VTCM every config streams several chunks per row.
TEST(HtpUnaryOps, LongRowsAreChunked) {
  for (const UnaryOp& op : ops()) {
    expect_op_matches(
        named(op, "32768x3"),
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {32768, 3, 1, 1}, op.lo, op.hi));
        },
        kNmse);
    expect_op_matches(
        named(op, "one row of 14337"),
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {14337, 1, 1, 1}, op.lo, op.hi));
        },
        kNmse);
  }
}

// Overflow and saturation: exp to inf and to 0, sigmoid/tanh to their limits, softplus to x.
TEST(HtpUnaryOps, LargeMagnitudes) {
  expect_op_matches(
      "exp overflow",
      [](OpTester& t) {
        return graph::exp(t.ctx(), t.input(Type::F32, {77, 4}, 80, 95));
      },
      kNmse);
  expect_op_matches(
      "exp underflow",
      [](OpTester& t) {
        return graph::exp(t.ctx(), t.input(Type::F32, {77, 4}, -110, -80));
      },
      kNmse);
  for (const UnaryOp& op : ops()) {
    if (op.name == std::string("exp")) continue;  // every value would be inf or 0
    const float lo = op.name == std::string("sqrt") ? 0.0f : -1e4f;
    expect_op_matches(
        named(op, "large"),
        [&](OpTester& t) {
          return op.fn(t.ctx(), t.input(Type::F32, {65, 4}, lo, 1e4f));
        },
        kNmse);
  }
}

}  // namespace
}  // namespace hexllm::test
