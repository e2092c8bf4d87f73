// ADD_ID (MoE per-expert biases) on the device: against the reference backend through the op
// harness, and the error path for an expert id out of range.
#include <cstring>

#include "base/error.h"
#include "htp/abi/binary_params.h"
#include "op_harness.h"

namespace hexllm::test {
namespace {

using graph::Tensor;

// One float add per element on both sides: exact; 1e-7 is the default bound of docs/DESIGN.md §9.
constexpr double kNmse = 1e-7;

TEST(HtpAddIdOps, MatchesReference) {
  // {ne0, n_used, n_tok, n_expert}: decode and prompt shapes, rows not a multiple of 32, large rows.
  const std::vector<std::vector<int64_t>> shapes = {
      {64, 2, 1, 8}, {67, 4, 5, 16}, {2880, 4, 3, 32}, {33, 8, 40, 64}, {4096, 2, 2, 4}};
  for (const auto& s : shapes)
    expect_op_matches("add_id", [&](OpTester& t) {
      Tensor* a = t.input(Type::F32, {s[0], s[1], s[2]});
      Tensor* b = t.input(Type::F32, {s[0], s[3]});
      return graph::add_id(t.ctx(), a, b, t.ids({s[1], s[2]}, static_cast<int32_t>(s[3])));
    }, kNmse);
}

TEST(HtpAddIdOps, ViewsAndRepeatedIds) {
  // src0 with strided rows (a permuted tensor), biases as rows of a wider tensor, every slot
  // choosing the same expert.
  expect_op_matches("add_id views", [&](OpTester& t) {
    Tensor* a = graph::permute(t.ctx(), t.input(Type::F32, {48, 6, 4}), 0, 2, 1, 3);  // [48, 4, 6]
    Tensor* wide = t.input(Type::F32, {80, 5});
    Tensor* b = graph::view_2d(t.ctx(), wide, 48, 5, wide->nb[1], 16 * sizeof(float));
    return graph::add_id(t.ctx(), a, b, t.ids_from({4, 6}, std::vector<int32_t>(24, 3)));
  }, kNmse);
  // Biases as a model weight with one expert row (not tiled: a single row).
  expect_op_matches("add_id weight biases", [&](OpTester& t) {
    Tensor* a = t.input(Type::F32, {64, 4, 3});
    return graph::add_id(t.ctx(), a, t.weight(Type::F32, {64, 1}), t.ids({4, 3}, 1));
  }, kNmse);
}

TEST(HtpAddIdOps, IdOutOfRangeFailsTheBatchThenNextBatchWorks) {
  htp_host::HtpOptions o;
  o.n_threads = 2;
  htp_host::HtpBackend htp(o);
  graph::Context ctx;
  std::vector<std::unique_ptr<backend::Buffer>> buffers;
  auto bind = [&](Tensor* t) {
    buffers.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = buffers.back()->data();
    return t;
  };
  Tensor* a = bind(ctx.new_tensor(Type::F32, {4, 2, 2}));
  Tensor* b = bind(ctx.new_tensor(Type::F32, {4, 3}));
  Tensor* ids = bind(ctx.new_tensor(Type::I32, {2, 2}));
  Tensor* out = bind(graph::add_id(ctx, a, b, ids));
  auto* x = static_cast<float*>(a->data);
  auto* y = static_cast<float*>(b->data);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  for (int i = 0; i < 12; ++i) y[i] = 100.0f * static_cast<float>(i / 4 + 1);  // expert e adds 100 (e + 1)
  auto* id = static_cast<int32_t*>(ids->data);
  ASSERT_TRUE(htp.supports(*out));
  std::vector<Tensor*> nodes = {out};
  for (int32_t bad : {3, -1}) {
    const int32_t v[4] = {0, 1, 2, bad};
    std::memcpy(id, v, sizeof v);
    try {
      htp.compute(nodes);
      ADD_FAILURE() << "expert id " << bad << " of 3 must fail the batch";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ADD_ID"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("INVALID_PARAMS"), std::string::npos) << e.what();
    }
  }
  const int32_t v[4] = {2, 0, 1, 1};
  std::memcpy(id, v, sizeof v);
  htp.compute(nodes);
  const auto* z = static_cast<const float*>(out->data);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(z[4 * r + c], static_cast<float>(4 * r + c) + 100.0f * (v[r] + 1));
}

TEST(HtpAddIdParams, KernelRejectsTamperedParams) {
  auto desc = [](uint32_t type, std::initializer_list<uint32_t> ne) {
    htp_tensor t{};
    t.type = type;
    int d = 0;
    for (uint32_t n : ne) t.ne[d++] = n;
    for (; d < 4; ++d) t.ne[d] = 1;
    t.nb[0] = 4;
    for (d = 1; d < 4; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
    t.size = static_cast<uint32_t>(htp_tensor_extent(t));
    return t;
  };
  const htp_tensor a = desc(HTP_TYPE_F32, {2880, 4, 7}), b = desc(HTP_TYPE_F32, {2880, 32});
  const htp_tensor ids = desc(HTP_TYPE_I32, {4, 7});
  htp_add_id_params p{};
  ASSERT_EQ(htp_add_id_params_build(a, a, b, ids, 2, 8u << 20, &p), HTP_OK);
  EXPECT_EQ(p.n_threads, 2u);
  EXPECT_EQ(htp_add_id_params_check(p, a, a, b, ids, 2, 8u << 20), HTP_OK);
  htp_add_id_params bad = p;
  bad.layout.src1_offset += 128;
  EXPECT_EQ(htp_add_id_params_check(bad, a, a, b, ids, 2, 8u << 20), HTP_ERR_INVALID_PARAMS);
  bad = p;
  bad.block_rows = HTP_ADD_ID_MAX_BLOCK + 1;
  EXPECT_EQ(htp_add_id_params_check(bad, a, a, b, ids, 2, 8u << 20), HTP_ERR_INVALID_PARAMS);
  // ids must be [n_used, n_tok] of dst; I32 only.
  EXPECT_EQ(htp_add_id_params_build(a, a, b, desc(HTP_TYPE_I32, {7, 4}), 2, 8u << 20, &p), HTP_ERR_INVALID_PARAMS);
  EXPECT_EQ(htp_add_id_params_build(a, a, b, desc(HTP_TYPE_F32, {4, 7}), 2, 8u << 20, &p), HTP_ERR_NO_SUPPORT);
}

}  // namespace
}  // namespace hexllm::test
