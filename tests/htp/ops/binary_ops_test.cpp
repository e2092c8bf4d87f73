// ADD, SUB, MUL, DIV on the device against the reference backend.
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;
using BinaryFn = Tensor* (*)(graph::Context&, Tensor*, Tensor*);

struct BinaryOp {
  const char* name;
  BinaryFn fn;
};

const BinaryOp kOps[] = {{"add", graph::add}, {"sub", graph::sub}, {"mul", graph::mul}, {"div", graph::div}};

// Elementwise F32 math is exact per element on both sides (same single operation).
constexpr double kNmse = 1e-7;

TEST(HtpBinaryOps, SameShape) {
  for (const BinaryOp& op : kOps)
    expect_op_matches(op.name, [&](OpTester& t) {
      return op.fn(t.ctx(), t.input(Type::F32, {67, 5, 3, 2}), t.input(Type::F32, {67, 5, 3, 2}, 0.5f, 2.0f));
    }, kNmse);
}

// A graph with more tensors than the session's table holds is cut into several batches by the
// host (each op brings up to three new tensors here), not refused by the device as BAD_BATCH.
TEST(HtpBinaryOps, GraphLargerThanTheTensorTableIsSplit) {
  std::vector<DeviceConfig> configs = standard_configs();
  for (DeviceConfig& c : configs) c.max_tensors = 16;
  expect_op_matches("add chain", [](OpTester& t) {
    Tensor* x = t.input(Type::F32, {40, 3});
    for (int i = 0; i < 24; ++i) x = graph::add(t.ctx(), x, t.input(Type::F32, {40, 3}));
    return x;
  }, kNmse, configs);
}

// A binary node without its second source is refused by the host's builder, not dereferenced.
TEST(HtpBinaryOps, ANodeWithoutASourceIsRefused) {
  htp_host::HtpBackend htp{htp_host::HtpOptions{}};
  graph::Context ctx;
  std::vector<std::unique_ptr<backend::Buffer>> buffers;
  auto bound = [&](Tensor* t) {
    buffers.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = buffers.back()->data();
    return t;
  };
  Tensor* a = bound(ctx.new_tensor(Type::F32, {8, 2}));
  Tensor* b = bound(ctx.new_tensor(Type::F32, {8, 2}));
  for (const BinaryOp& op : kOps) {
    Tensor* n = bound(op.fn(ctx, a, b));
    ASSERT_TRUE(htp.supports(*n)) << op.name;
    n->src[1] = nullptr;
    EXPECT_FALSE(htp.supports(*n)) << op.name;
  }
}

TEST(HtpBinaryOps, Broadcasts) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{64, 7, 1, 1}, {64, 1, 1, 1}},   // one row for all (bias, norm weight)
      {{10, 5, 4, 3}, {10, 5, 1, 1}},   // rows repeated over dims 2, 3
      {{10, 5, 4, 3}, {10, 1, 4, 1}},   // per-plane rows
      {{10, 5, 4, 3}, {5, 5, 2, 3}},    // within-row repetition and dims 2
      {{33, 1, 1, 1}, {33, 1, 1, 1}},   // one row, not a multiple of 32
      {{4096, 3, 1, 1}, {4096, 1, 1, 1}},  // large rows
  };
  for (const BinaryOp& op : kOps)
    for (const auto& [a, b] : shapes)
      expect_op_matches(op.name, [&](OpTester& t) {
        Tensor* x = t.input(Type::F32, {a[0], a[1], a[2], a[3]});
        Tensor* y = t.input(Type::F32, {b[0], b[1], b[2], b[3]}, 0.5f, 2.0f);
        return op.fn(t.ctx(), x, y);
      }, kNmse);
}

TEST(HtpBinaryOps, ViewsAndPermutedInputs) {
  for (const BinaryOp& op : kOps) {
    // A permuted src0 (rows strided) plus a row view of a wider tensor as src1.
    expect_op_matches(op.name, [&](OpTester& t) {
      Tensor* x = graph::permute(t.ctx(), t.input(Type::F32, {16, 6, 5, 1}), 0, 2, 1, 3);  // [16, 5, 6]
      Tensor* wide = t.input(Type::F32, {48, 5, 1, 1}, 0.5f, 2.0f);
      Tensor* y = graph::view_2d(t.ctx(), wide, 16, 5, wide->nb[1], 16 * sizeof(float));
      return op.fn(t.ctx(), x, y);
    }, kNmse);
  }
}

}  // namespace
}  // namespace hexllm::test
