// SUM_ROWS, ARGSORT and TOP_K on the device: against the reference backend (the oracle) through
// the op harness, and against hand-derived orders for explicit ties (-0 vs +0 included).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "htp/abi/reduce_params.h"
#include "model/context.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// SUM_ROWS: the device sums in 32 float lanes, the reference in double. For rows of up to 4096
// values in [-1, 1] the float rounding is ~1e-7 relative per row, so NMSE stays near 1e-14;
// The default bound of docs/DESIGN.md §9, 1e-7, holds with a wide margin.
constexpr double kNmse = 1e-7;

TEST(HtpReduceOps, SumRows) {
  const std::vector<std::vector<int64_t>> shapes = {
      {67, 5, 3, 2}, {4096, 3, 1, 1}, {1, 7, 1, 1}, {33, 1, 1, 1}, {256, 40, 1, 1}, {1000, 2, 2, 2}};
  for (const auto& s : shapes)
    expect_op_matches("sum_rows", [&](OpTester& t) {
      return graph::sum_rows(t.ctx(), t.input(Type::F32, {s[0], s[1], s[2], s[3]}));
    }, kNmse);
}

TEST(HtpReduceOps, SumRowsOfViews) {
  expect_op_matches("sum_rows permuted", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {45, 6, 5, 1}), 0, 2, 1, 3);  // rows strided
    return graph::sum_rows(t.ctx(), a);
  }, kNmse);
  expect_op_matches("sum_rows of a row view", [&](OpTester& t) {
    Tensor* wide = t.input(Type::F32, {100, 9});
    return graph::sum_rows(t.ctx(), graph::view_2d(t.ctx(), wide, 70, 9, wide->nb[1], 12 * sizeof(float)));
  }, kNmse);
}

// Integer outputs: the harness requires 0 mismatching indices.
TEST(HtpReduceOps, ArgsortRandomRows) {
  for (graph::SortOrder order : {graph::SortOrder::Ascending, graph::SortOrder::Descending})
    for (int64_t n : {1, 5, 31, 32, 33, 100, 1000, 4096}) {
      const std::string name =
          "argsort n=" + std::to_string(n) + (order == graph::SortOrder::Descending ? " desc" : " asc");
      expect_op_matches(name, [&](OpTester& t) {
        return graph::argsort(t.ctx(), t.input(Type::F32, {n, 3, 2}), order);
      }, 0.0);
    }
}

TEST(HtpReduceOps, ArgsortClusteredTies) {
  // 1000 + u * 0.001 rounds to ~17 distinct floats: long runs of equal values that the stable
  // order must keep in index order, on both the insertion-sort and the radix-sort paths.
  for (graph::SortOrder order : {graph::SortOrder::Ascending, graph::SortOrder::Descending})
    for (int64_t n : {20, 300, 2000})
      expect_op_matches("argsort ties n=" + std::to_string(n), [&](OpTester& t) {
        return graph::argsort(t.ctx(), t.input(Type::F32, {n, 4}, 1000.0f, 1000.001f), order);
      }, 0.0);
}

TEST(HtpReduceOps, ArgsortPermutedInput) {
  expect_op_matches("argsort permuted", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {50, 6, 5, 1}), 0, 2, 1, 3);
    return graph::argsort(t.ctx(), a, graph::SortOrder::Descending);
  }, 0.0);
}

TEST(HtpReduceOps, TopK) {
  // k up to HTP_TOPK_SELECT_MAX selects in one pass; larger k sorts the row.
  const std::vector<std::pair<int64_t, int>> cases = {{8, 2},    {64, 8},     {128, 4},     {32, 1}, {256, 64},
                                                      {256, 65}, {1000, 100}, {1000, 1000}, {7, 7}};
  for (const auto& [n, k] : cases)
    expect_op_matches("top_k n=" + std::to_string(n) + " k=" + std::to_string(k), [&](OpTester& t) {
      return graph::top_k(t.ctx(), t.input(Type::F32, {n, 5, 2}), k);
    }, 0.0);
  for (int k : {3, 80})
    expect_op_matches("top_k ties k=" + std::to_string(k), [&](OpTester& t) {
      return graph::top_k(t.ctx(), t.input(Type::F32, {500, 3}, 1000.0f, 1000.001f), k);
    }, 0.0);
  expect_op_matches("top_k permuted", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {64, 6, 5, 1}), 0, 2, 1, 3);
    return graph::top_k(t.ctx(), a, 6);
  }, 0.0);
}

// The context asks for at most what the device selects in one streaming pass: one fact, two
// layers that must not know each other (the model knows no device).
static_assert(model::Context::kMaxBestIds == HTP_TOPK_SELECT_MAX);

// One long row (decode's logits under top-k sampling) is cut into a piece per worker, whose
// lists merge: the best in the first piece, the last, across a piece's block boundary, ties.
TEST(HtpReduceOps, TopKOfOneLongRow) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int>>{{151936, 40}, {8192 * 2 + 5, 1}, {40000, 64}})
    expect_op_matches("top_k one row n=" + std::to_string(n) + " k=" + std::to_string(k), [&](OpTester& t) {
      return graph::top_k(t.ctx(), t.input(Type::F32, {n}), k);
    }, 0.0);
  expect_op_matches("top_k one row ties", [&](OpTester& t) {
    return graph::top_k(t.ctx(), t.input(Type::F32, {30000}, 1000.0f, 1000.0001f), 50);
  }, 0.0);
}

// Explicit ties, straight on the HTP backend, against orders derived by hand.
class HtpReduceTies : public ::testing::Test {
 protected:
  HtpReduceTies() : htp_(htp_host::HtpOptions{}) {}

  Tensor* bind(Tensor* t) {
    buffers_.push_back(htp_.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = buffers_.back()->data();
    return t;
  }

  std::vector<int32_t> run(Tensor* out) {
    bind(out);
    EXPECT_TRUE(htp_.supports(*out));
    std::vector<Tensor*> nodes = {out};
    htp_.compute(nodes);
    std::vector<int32_t> got(static_cast<size_t>(out->n_elements()));
    std::memcpy(got.data(), out->data, got.size() * 4);
    return got;
  }

  graph::Context ctx_;
  htp_host::HtpBackend htp_;
  std::vector<std::unique_ptr<backend::Buffer>> buffers_;
};

TEST_F(HtpReduceTies, ShortRowWithSignedZeros) {
  Tensor* a = bind(ctx_.new_tensor(Type::F32, {8}));
  const float x[8] = {0.5f, -0.0f, 0.0f, 0.5f, -1.0f, 0.0f, 2.0f, 0.5f};
  std::memcpy(a->data, x, sizeof x);
  // -0 == +0: indices 1, 2, 5 tie and stay in index order; so do the 0.5s at 0, 3, 7.
  EXPECT_EQ(run(graph::argsort(ctx_, a, graph::SortOrder::Ascending)),
            (std::vector<int32_t>{4, 1, 2, 5, 0, 3, 7, 6}));
  EXPECT_EQ(run(graph::argsort(ctx_, a, graph::SortOrder::Descending)),
            (std::vector<int32_t>{6, 0, 3, 7, 1, 2, 5, 4}));
  EXPECT_EQ(run(graph::top_k(ctx_, a, 5)), (std::vector<int32_t>{6, 0, 3, 7, 1}));
}

TEST_F(HtpReduceTies, LongRowRadixPath) {
  // 200 values cycling through 5 levels (x[i] = level[i % 5]): the radix path; the expected
  // order lists each level's indices ascending, levels by value.
  const float level[5] = {3.0f, -2.0f, 0.0f, -0.0f, 7.5f};
  Tensor* a = bind(ctx_.new_tensor(Type::F32, {200}));
  auto* x = static_cast<float*>(a->data);
  for (int i = 0; i < 200; ++i) x[i] = level[i % 5];
  auto indices_of = [](std::initializer_list<int> residues) {
    std::vector<int32_t> v;
    for (int i = 0; i < 200; ++i)
      if (std::find(residues.begin(), residues.end(), i % 5) != residues.end()) v.push_back(i);
    return v;
  };
  auto concat = [](std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> v;
    for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
    return v;
  };
  const std::vector<int32_t> zeros = indices_of({2, 3});  // +0 and -0 tie
  EXPECT_EQ(run(graph::argsort(ctx_, a, graph::SortOrder::Ascending)),
            concat({indices_of({1}), zeros, indices_of({0}), indices_of({4})}));
  EXPECT_EQ(run(graph::argsort(ctx_, a, graph::SortOrder::Descending)),
            concat({indices_of({4}), indices_of({0}), zeros, indices_of({1})}));
  std::vector<int32_t> top = concat({indices_of({4}), indices_of({0})});
  top.resize(70);
  EXPECT_EQ(run(graph::top_k(ctx_, a, 70)), top);
}

// ---- kernel params: the host builder's choices, and the device's check of untrusted params ----

htp_tensor desc(uint32_t type, std::initializer_list<uint32_t> ne) {
  htp_tensor t{};
  t.type = type;
  int d = 0;
  for (uint32_t n : ne) t.ne[d++] = n;
  for (; d < 4; ++d) t.ne[d] = 1;
  t.nb[0] = htp_type_geometry(type).type_size;
  for (d = 1; d < 4; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
  t.size = static_cast<uint32_t>(htp_tensor_extent(t));
  return t;
}

TEST(HtpReduceParams, SortScratchAndChecks) {
  htp_reduce_params p{};
  const htp_tensor x = desc(HTP_TYPE_F32, {1000, 6});
  // TOP_K up to k = 64 selects without scratch; beyond that it sorts: 16 bytes per element.
  const int32_t k8[HTP_MAX_PARAMS] = {8}, k100[HTP_MAX_PARAMS] = {100};
  ASSERT_EQ(htp_reduce_params_build(HTP_OP_TOP_K, k8, desc(HTP_TYPE_I32, {8, 6}), x, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.scratch_bytes, 0u);
  ASSERT_EQ(htp_reduce_params_build(HTP_OP_TOP_K, k100, desc(HTP_TYPE_I32, {100, 6}), x, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.scratch_bytes, 16000u);
  EXPECT_EQ(htp_reduce_params_check(p, HTP_OP_TOP_K, k100, desc(HTP_TYPE_I32, {100, 6}), x, 2, 8u << 20), HTP_OK);
  // The same params for another k, or a dst that disagrees with k, are refused.
  const int32_t k99[HTP_MAX_PARAMS] = {99};
  EXPECT_EQ(htp_reduce_params_check(p, HTP_OP_TOP_K, k99, desc(HTP_TYPE_I32, {100, 6}), x, 2, 8u << 20),
            HTP_ERR_INVALID_PARAMS);
  htp_reduce_params bad = p;
  bad.layout.scratch_offset -= 128;
  EXPECT_EQ(htp_reduce_params_check(bad, HTP_OP_TOP_K, k100, desc(HTP_TYPE_I32, {100, 6}), x, 2, 8u << 20),
            HTP_ERR_INVALID_PARAMS);
  // ARGSORT of 16384-element rows: 256 KiB of scratch alone does not fit a 256 KiB arena.
  const int32_t asc[HTP_MAX_PARAMS] = {0}, bad_order[HTP_MAX_PARAMS] = {2};
  const htp_tensor wide = desc(HTP_TYPE_F32, {16384, 2});
  EXPECT_EQ(htp_reduce_params_build(HTP_OP_ARGSORT, asc, desc(HTP_TYPE_I32, {16384, 2}), wide, 2, 256u << 10, &p),
            HTP_ERR_VTCM_TOO_SMALL);
  EXPECT_EQ(htp_reduce_params_build(HTP_OP_ARGSORT, bad_order, desc(HTP_TYPE_I32, {1000, 6}), x, 2, 8u << 20, &p),
            HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(htp_reduce_params_build(HTP_OP_SUM_ROWS, asc, desc(HTP_TYPE_F32, {1, 6}), desc(HTP_TYPE_F16, {1000, 6}), 2,
                                    8u << 20, &p),
            HTP_ERR_NO_SUPPORT);
}

}  // namespace
}  // namespace hexllm::test
