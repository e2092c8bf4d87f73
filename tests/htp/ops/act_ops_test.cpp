// Gated activations (SWIGLU, GEGLU, SWIGLU_OAI) on the device against the reference backend,
// in the two-source and the split form, with and without swapped halves.
// Threshold 1e-7 (docs/DESIGN.md §9): the fused vmath gates are within 4 ulp of the rounded truth.
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
constexpr double kNmse = 1e-7;

struct ActOp {
  const char* name;
  Tensor* (*fn)(graph::Context&, Tensor*, Tensor*);
};

Tensor* oai(graph::Context& c, Tensor* a, Tensor* b) { return graph::swiglu_oai(c, a, b, 1.702f, 7.0f); }

const ActOp kOps[] = {{"swiglu", graph::swiglu}, {"geglu", graph::geglu}, {"swiglu_oai", oai}};

// op(a, b) with params[0] = swapped; b == nullptr: the split form over a's rows.
Tensor* gated(const ActOp& op, graph::Context& c, Tensor* a, Tensor* b, bool swapped) {
  Tensor* t = op.fn(c, a, b);
  t->params[0] = swapped ? 1 : 0;
  return t;
}

TEST(HtpActOps, TwoSourcesOddRowLengths) {
  for (const ActOp& op : kOps)
    for (int64_t ne0 : {1, 7, 33, 65, 4097})
      for (bool swapped : {false, true})
        expect_op_matches(
            std::string(op.name) + " ne0=" + std::to_string(ne0),
            [&](OpTester& t) {
              Tensor* a = t.input(Type::F32, {ne0, 5, 3, 2}, -10, 10);
              Tensor* b = t.input(Type::F32, {ne0, 5, 3, 2}, -10, 10);
              return gated(op, t.ctx(), a, b, swapped);
            },
            kNmse);
}

TEST(HtpActOps, SplitRowsOddLengths) {
  for (const ActOp& op : kOps)
    for (int64_t ne0 : {1, 7, 33, 65, 4097})
      for (bool swapped : {false, true})
        expect_op_matches(
            std::string(op.name) + " split ne0=" + std::to_string(ne0),
            [&](OpTester& t) {
              return gated(op, t.ctx(), t.input(Type::F32, {2 * ne0, 9, 2, 1}, -10, 10), nullptr, swapped);
            },
            kNmse);
}

TEST(HtpActOps, ManyRowsPermutedAndViewSources) {
  for (const ActOp& op : kOps) {
    expect_op_matches(
        std::string(op.name) + " 96x600",
        [&](OpTester& t) {
          return gated(op, t.ctx(), t.input(Type::F32, {96, 600}, -6, 6),
                       t.input(Type::F32, {96, 600}, -6, 6), false);
        },
        kNmse);
    expect_op_matches(
        std::string(op.name) + " permuted + view",
        [&](OpTester& t) {
          Tensor* a =
              graph::permute(t.ctx(), t.input(Type::F32, {33, 6, 5, 1}, -6, 6), 0, 2, 1, 3);  // [33, 5, 6]
          Tensor* wide = t.input(Type::F32, {50, 5, 6, 1}, -6, 6);
          Tensor* b = graph::view_3d(t.ctx(), wide, 33, 5, 6, wide->nb[1], wide->nb[2], 7 * sizeof(float));
          return gated(op, t.ctx(), a, b, true);
        },
        kNmse);
    expect_op_matches(
        std::string(op.name) + " split view",
        [&](OpTester& t) {
          Tensor* wide = t.input(Type::F32, {80, 7, 1, 1}, -6, 6);
          return gated(op, t.ctx(), graph::view_2d(t.ctx(), wide, 66, 7, wide->nb[1], 3 * sizeof(float)),
                       nullptr, false);
        },
        kNmse);
  }
}

// FFN-sized rows: chunked (and a single decode row split over the workers); with 256 KiB of
// VTCM every config streams several chunks per row.
TEST(HtpActOps, LongRowsAreChunked) {
  for (const ActOp& op : kOps) {
    expect_op_matches(
        std::string(op.name) + " 32768x2",
        [&](OpTester& t) {
          return gated(op, t.ctx(), t.input(Type::F32, {32768, 2}, -6, 6),
                       t.input(Type::F32, {32768, 2}, -6, 6), false);
        },
        kNmse);
    expect_op_matches(
        std::string(op.name) + " split decode row 2x14336",
        [&](OpTester& t) {
          return gated(op, t.ctx(), t.input(Type::F32, {2 * 14336, 1}, -6, 6), nullptr, true);
        },
        kNmse);
  }
}

}  // namespace
}  // namespace hexllm::test
