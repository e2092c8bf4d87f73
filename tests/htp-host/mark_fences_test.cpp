// Where several devices must meet (mark_fences): hand-derived op sequences, each with the ops
// that read bytes written since the last fence, or overwrite bytes read or written since then.
#include <gtest/gtest.h>

#include <vector>

#include "htp-host/batch_builder.h"

namespace hexllm::htp_host {
namespace {

class HtpMarkFences : public ::testing::Test {
 protected:
  // A tensor of `bytes` at `offset` of `bank`; returns its index.
  uint16_t tensor(uint32_t offset, uint32_t bytes, uint16_t bank = 0) {
    htp_tensor t{};
    t.bank = bank;
    t.type = HTP_TYPE_F32;
    t.offset = offset;
    t.size = bytes;
    t.ne[0] = bytes / 4;
    t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4;
    t.nb[1] = t.nb[2] = t.nb[3] = bytes;
    tensors_.push_back(t);
    return static_cast<uint16_t>(tensors_.size() - 1);
  }
  htp_op_desc& op(uint16_t dst, std::initializer_list<uint16_t> srcs) {
    htp_op_desc& o = ops_.emplace_back();
    o = htp_op_desc{};
    for (uint16_t& s : o.src) s = HTP_NO_TENSOR;
    for (uint16_t& d : o.dst_ext) d = HTP_NO_TENSOR;
    o.dst = dst;
    uint32_t k = 0;
    for (uint16_t s : srcs) o.src[k++] = s;
    return o;
  }
  // Indices of the fenced ops.
  std::vector<size_t> fenced() {
    mark_fences(ops_, tensors_);
    std::vector<size_t> out;
    for (size_t i = 0; i < ops_.size(); ++i)
      if ((ops_[i].flags & HTP_OPF_FENCE) != 0) out.push_back(i);
    return out;
  }
  std::vector<htp_tensor> tensors_;
  std::vector<htp_op_desc> ops_;
};

TEST_F(HtpMarkFences, ReadAfterWriteWaits) {
  const uint16_t x = tensor(0, 256), y = tensor(256, 256), z = tensor(512, 256);
  op(y, {x});
  op(z, {y});  // reads what op 0 wrote (rows of it may come from another device)
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
}

TEST_F(HtpMarkFences, IndependentOpsDoNotWait) {
  const uint16_t a = tensor(0, 256), b = tensor(256, 256), c = tensor(512, 256), d = tensor(768, 256);
  op(b, {a});
  op(d, {c});
  op(c, {});  // writes c, which op 1 read: a write after a read waits
  EXPECT_EQ(fenced(), (std::vector<size_t>{2}));
}

TEST_F(HtpMarkFences, WriteAfterWriteWaits) {
  const uint16_t a = tensor(0, 256), b = tensor(256, 256);
  op(b, {a});
  op(b, {a});
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
}

TEST_F(HtpMarkFences, PartialOverlapCounts) {
  const uint16_t a = tensor(0, 256), b = tensor(256, 256), tail = tensor(384, 4);  // the last row of b, say
  op(b, {a});
  op(a, {tail});
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
}

TEST_F(HtpMarkFences, OtherBanksDoNotOverlap) {
  const uint16_t a = tensor(0, 256, 0), b = tensor(256, 256, 0), b1 = tensor(256, 256, 1);
  op(b, {a});
  op(a, {b1});  // same offsets as b, another bank; but writes a, which op 0 read
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
  ops_.clear();
  op(b, {a});
  op(tensor(4096, 256), {b1});
  EXPECT_EQ(fenced(), (std::vector<size_t>{}));
}

TEST_F(HtpMarkFences, AFenceStartsAFreshInterval) {
  const uint16_t a = tensor(0, 256), b = tensor(256, 256), c = tensor(512, 256), d = tensor(768, 256);
  op(b, {a});
  op(c, {b});  // fence: b is complete on every device from here on
  op(d, {b});  // reads b again: nothing since the fence wrote it
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
}

// MUL_MAT_QKV writes Q, K and V: a later op reading K (say the SET_ROWS of the KV cache) waits,
// as does one overwriting V.
TEST_F(HtpMarkFences, FurtherOutputsOfAFusedOpCount) {
  const uint16_t x = tensor(0, 256), q = tensor(256, 256), k = tensor(512, 256), v = tensor(768, 256);
  const uint16_t out = tensor(1024, 256);
  htp_op_desc& qkv = op(q, {x});
  qkv.dst_ext[0] = k;
  qkv.dst_ext[1] = v;
  op(out, {k});
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
  ops_.clear();
  htp_op_desc& qkv2 = op(q, {x});
  qkv2.dst_ext[0] = k;
  qkv2.dst_ext[1] = v;
  op(v, {tensor(2048, 256)});
  EXPECT_EQ(fenced(), (std::vector<size_t>{1}));
}

}  // namespace
}  // namespace hexllm::htp_host
