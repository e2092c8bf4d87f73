// What the reference backend claims to support, and the errors it gives for what it does not.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

TEST(RefDispatch, SupportsBuilderNodesAndLayoutOps) {
  Harness h;
  RefBackend ref;
  EXPECT_STREQ(ref.name(), "ref");
  Tensor* a = h.f32({4, 2}, std::vector<float>(8, 1.0f));
  EXPECT_TRUE(ref.supports(*a));
  EXPECT_TRUE(ref.supports(*transpose(h.ctx, a)));
  EXPECT_TRUE(ref.supports(*reshape_2d(h.ctx, a, 8, 1)));
  EXPECT_TRUE(ref.supports(
      *mul_mat(h.ctx, h.ctx.new_tensor(Type::Q4_K, {256, 3}), h.ctx.new_tensor(Type::F32, {256, 2}))));
  EXPECT_TRUE(ref.supports(*rope(h.ctx, h.ctx.new_tensor(Type::F32, {8, 2, 3}),
                                 h.ctx.new_tensor(Type::I32, {3}), nullptr, RopeParams{8, kRopeNeox})));
}

TEST(RefDispatch, UnsupportedCombinationThrowsNamingTheOp) {
  Harness h;
  // A hand-made MUL_MAT with an I32 right side: no builder would make it.
  Tensor* a = h.f32({2, 2}, {1, 2, 3, 4});
  Tensor* b = h.i32({2, 2}, {1, 2, 3, 4});
  const int64_t ne[] = {2, 2};
  Tensor* node = h.ctx.new_node(Op::MUL_MAT, Type::F32, ne);
  node->src[0] = a;
  node->src[1] = b;
  std::vector<float> out(4);
  node->data = out.data();
  EXPECT_FALSE(RefBackend().supports(*node));
  try {
    ref::compute_node(*node);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MUL_MAT"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("I32"), std::string::npos) << e.what();
  }
  Tensor* odd = h.ctx.new_node(Op::COUNT, Type::F32, ne);
  odd->data = out.data();
  EXPECT_FALSE(RefBackend().supports(*odd));
  EXPECT_THROW(ref::compute_node(*odd), Error);
}

TEST(RefDispatch, UnboundDataThrows) {
  Harness h;
  Tensor* y = silu(h.ctx, h.ctx.new_tensor(Type::F32, {4}));
  std::vector<float> out(4);
  y->data = out.data();
  EXPECT_THROW(ref::compute_node(*y), Error);  // the source has no data
}

}  // namespace
}  // namespace hexllm::backend::test
