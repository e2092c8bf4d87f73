// The op cache: descriptors are found by content, the cache starts over past its bound, and
// decode steps after the first build no new op (the graph repeats token after token).
#include "htp-host/op_cache.h"

#include <gtest/gtest.h>

#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

htp_host::OpKey key_of(int op, uint32_t offset) {
  htp_host::OpKey k{};
  k.op = op;
  k.src_mask = 1;
  k.src[0].offset = offset;
  k.src[0].ne[0] = 64;
  k.dst[0].ne[0] = 64;
  return k;
}

TEST(HtpOpCache, FindsByContent) {
  htp_host::OpCache cache;
  htp_op_desc op{};
  op.opcode = 7;
  op.kparams[0] = 42;
  cache.insert(key_of(3, 128), {HTP_OK, op});
  cache.insert(key_of(3, 256), {HTP_ERR_NO_SUPPORT, {}});
  const auto* hit = cache.find(key_of(3, 128));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->status, HTP_OK);
  EXPECT_EQ(hit->op.opcode, 7u);
  EXPECT_EQ(hit->op.kparams[0], 42);
  const auto* refused = cache.find(key_of(3, 256));
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(cache.find(key_of(4, 128)), nullptr);  // another op
  EXPECT_EQ(cache.find(key_of(3, 384)), nullptr);  // another tensor
}

TEST(HtpOpCache, StartsOverPastItsBound) {
  htp_host::OpCache cache;
  for (uint32_t i = 0; i <= htp_host::OpCache::kMaxEntries; ++i) cache.insert(key_of(1, 128 * i), {HTP_OK, {}});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(key_of(1, 0)), nullptr);
  EXPECT_NE(cache.find(key_of(1, 128 * htp_host::OpCache::kMaxEntries)), nullptr);
}

TEST(HtpOpCache, DecodeStepsAfterTheFirstBuildNoOp) {
  const test::HtpEngine h = test::open_htp_engine(test::tiny_model_path());
  Engine* e = h.engine.get();
  htp_host::HtpBackend* htp = h.htp;
  ASSERT_NE(htp, nullptr);
  const std::vector<int32_t> prompt = {1, 400, 17, 902, 33};
  e->context->decode(prompt, false);
  const size_t after_prompt = htp->cached_ops();
  int32_t token = 5;
  e->context->decode(std::span<const int32_t>(&token, 1), false);
  const size_t after_first = htp->cached_ops();
  EXPECT_GT(after_first, after_prompt);  // the decode graph differs from the prompt's
  for (int32_t t : {17, 300, 42, 7}) {
    e->context->decode(std::span<const int32_t>(&t, 1), false);
    EXPECT_EQ(htp->cached_ops(), after_first) << "a decode step built new ops: its graph changed";
  }
}

}  // namespace
}  // namespace hexllm
