// Malformed batches: each returns its own status (and names the op or tensor when there is
// one), runs no op, and the session serves a valid batch right after.
#include <gtest/gtest.h>

#include <functional>

#include "test_batch.h"

namespace hexllm::htp::test {
namespace {

class HtpBatchErrors : public ::testing::Test {
 protected:
  HtpBatchErrors() : bank_(64 << 10), sess_(bank_, 2, HTP_DMA_ASYNC, 8192) {}

  // dst = a + b on 8x4 F32 tensors, params filled for this session.
  BatchBuilder valid() {
    BatchBuilder b;
    const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {8, 4, 1, 1});
    const uint16_t s1 = b.tensor(0, 4096, HTP_TYPE_F32, {8, 4, 1, 1});
    const uint16_t d = b.tensor(0, 8192, HTP_TYPE_F32, {8, 4, 1, 1});
    b.op(HTP_OP_ADD, d, {a, s1});
    EXPECT_EQ(b.set_binary_params(0, sess_.hw), HTP_OK);
    return b;
  }

  void SetUp() override {
    for (int i = 0; i < 32; ++i) {
      bank_.f32(0)[i] = (float)i;
      bank_.f32(4096)[i] = 1000.0f;
    }
  }

  // The session still works: a valid batch computes a + b.
  void expect_session_healthy() {
    memset(bank_.base + 8192, 0, 128);
    std::vector<uint64_t> msg = valid().build();
    ASSERT_EQ(process(sess_.s, msg), HTP_OK);
    for (int i = 0; i < 32; ++i) ASSERT_EQ(bank_.f32(8192)[i], 1000.0f + i);
  }

  // Runs a batch that must fail with `want` and must not have run any op.
  void expect_rejected(std::vector<uint64_t>& msg, htp_status want, size_t bytes = 0) {
    bank_.f32(8192)[0] = -5.0f;
    EXPECT_EQ(htp_session_process(sess_.s, msg.data(), bytes != 0 ? bytes : msg.size() * 8), want)
        << htp_status_name(want);
    EXPECT_EQ(bank_.f32(8192)[0], -5.0f) << "no op may run";
    expect_session_healthy();
  }

  Bank bank_;
  Session sess_;
};

TEST_F(HtpBatchErrors, BadMagic) {
  std::vector<uint64_t> msg = valid().build();
  header(msg).magic ^= 1;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
}

TEST_F(HtpBatchErrors, WrongAbiVersion) {
  std::vector<uint64_t> msg = valid().build();
  header(msg).abi_version = HTP_ABI_VERSION + 1;
  expect_rejected(msg, HTP_ERR_ABI_VERSION);
}

TEST_F(HtpBatchErrors, MessageShorterThanHeader) {
  std::vector<uint64_t> msg = valid().build();
  expect_rejected(msg, HTP_ERR_BAD_BATCH, sizeof(htp_batch_header) - 8);
}

TEST_F(HtpBatchErrors, OpCountBeyondMessageSize) {
  std::vector<uint64_t> msg = valid().build();
  header(msg).n_ops = 1000;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
  EXPECT_EQ(response(msg).status, HTP_ERR_BAD_BATCH);  // the response head was in bounds
}

TEST_F(HtpBatchErrors, DeclaredSizeBeyondBuffer) {
  std::vector<uint64_t> msg = valid().build();
  header(msg).message_size += 8;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
}

TEST_F(HtpBatchErrors, MisalignedOrOutOfBoundsAreas) {
  std::vector<uint64_t> msg = valid().build();
  header(msg).ops_offset += 4;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
  msg = valid().build();
  header(msg).response_offset = header(msg).message_size;  // no room for the response at all
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
  msg = valid().build();
  header(msg).flags = HTP_BATCH_TRACE;
  header(msg).trace_threads = 2;
  header(msg).trace_capacity = 1 << 20;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
  msg = valid().build();
  header(msg).flags = 0x80;
  expect_rejected(msg, HTP_ERR_BAD_BATCH);
}

TEST_F(HtpBatchErrors, TensorOffsetBeyondBank) {
  BatchBuilder b = valid();
  b.tensors[1].offset = (64 << 10) - 64;  // 128 bytes from 64 before the end
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_tensor, 1u);
  EXPECT_EQ(response(msg).failed_op, HTP_NO_INDEX);
}

TEST_F(HtpBatchErrors, TensorSizeSmallerThanItsStrides) {
  BatchBuilder b = valid();
  b.tensors[2].size -= 4;
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_tensor, 2u);

  b = valid();
  b.tensors[0].nb[1] = 0x40000000;  // rows far apart: extent beyond size
  msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_tensor, 0u);
}

TEST_F(HtpBatchErrors, MisalignedTensor) {
  BatchBuilder b = valid();
  b.tensors[0].offset += 2;  // F32 at a 2-byte boundary
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
}

TEST_F(HtpBatchErrors, UnknownBankAndUnknownType) {
  BatchBuilder b = valid();
  b.tensors[0].bank = 3;
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);

  b = valid();
  b.tensors[1].type = 5;  // a GGUF id no type uses
  msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_tensor, 1u);

  b = valid();
  b.tensors[1].type = 150;
  msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
}

TEST_F(HtpBatchErrors, BadSourceIndex) {
  BatchBuilder b = valid();
  b.op(HTP_OP_ADD, 2, {0, 1});
  b.ops[1].src[1] = 3;  // only tensors 0..2 exist
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_op, 1u);  // op 0 is valid but ran not: validation comes first
}

TEST_F(HtpBatchErrors, MissingOrWeightDestination) {
  BatchBuilder b = valid();
  b.ops[0].dst = HTP_NO_TENSOR;
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);

  b = valid();
  b.tensors[2].flags = HTP_TENSOR_WEIGHT;
  msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);
  EXPECT_EQ(response(msg).failed_op, 0u);
}

// A fused op's further outputs are checked like dst: in the table, never a weight; the
// descriptor's padding must be zero.
TEST_F(HtpBatchErrors, BadExtraDestinationOrPadding) {
  BatchBuilder b = valid();
  b.ops[0].dst_ext[1] = 3;  // only tensors 0..2 exist
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);

  b = valid();
  b.tensors[0].flags = HTP_TENSOR_WEIGHT;
  b.ops[0].dst_ext[0] = 0;
  msg = b.build();
  expect_rejected(msg, HTP_ERR_BAD_TENSOR);

  b = valid();
  b.ops[0].pad = 1;
  msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);
}

TEST_F(HtpBatchErrors, UnknownOpcodeAndFlags) {
  BatchBuilder b = valid();
  b.ops[0].opcode = 999;
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_NO_SUPPORT);
  EXPECT_EQ(response(msg).failed_op, 0u);

  b = valid();
  b.ops[0].flags = 0x100;
  msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);
}

TEST_F(HtpBatchErrors, ForgedKernelParams) {
  BatchBuilder b = valid();
  auto p = htp_kparams_get<htp_binary_params>(b.ops[0]);
  p.ne1.mul += 1;  // fastdiv constants that would misplace rows
  htp_kparams_set(&b.ops[0], p);
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);

  b = valid();
  p = htp_kparams_get<htp_binary_params>(b.ops[0]);
  p.layout.dst_offset += 128;  // a layout the builder would not produce
  htp_kparams_set(&b.ops[0], p);
  msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);

  b = valid();
  p = htp_kparams_get<htp_binary_params>(b.ops[0]);
  p.n_threads = 3;  // the session has 2 workers
  htp_kparams_set(&b.ops[0], p);
  msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);

  b = valid();
  memset(b.ops[0].kparams, 0, sizeof b.ops[0].kparams);  // host forgot them
  msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);
}

TEST_F(HtpBatchErrors, LayoutBeyondVtcm) {
  // Params computed for an 8 MiB arena (blocks of 20 rows) do not fit this session's 8 KiB.
  // The device rebuilds the plan for its own arena, so they are refused as not this session's.
  BatchBuilder b;
  const uint16_t a = b.tensor(0, 0, HTP_TYPE_F32, {37, 40, 1, 1});
  const uint16_t d = b.tensor(0, 8192, HTP_TYPE_F32, {37, 40, 1, 1});
  b.op(HTP_OP_ADD, d, {a, a});
  htp_hwinfo big = sess_.hw;
  big.vtcm_size = 8 << 20;
  ASSERT_EQ(b.set_binary_params(0, big), HTP_OK);
  EXPECT_EQ(htp_kparams_get<htp_binary_params>(b.ops[0]).block_rows, 20u);
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);
  // Built for this session, the same op runs.
  ASSERT_EQ(b.set_binary_params(0, sess_.hw), HTP_OK);
  msg = b.build();
  EXPECT_EQ(process(sess_.s, msg), HTP_OK);

  // And the host-side builder refuses rows that fit nowhere: 2 workers x 2 slots x 3 rows of 4 KiB.
  BatchBuilder wide;
  const uint16_t w = wide.tensor(0, 0, HTP_TYPE_F32, {1024, 2, 1, 1});
  wide.op(HTP_OP_ADD, w, {w, w});
  EXPECT_EQ(wide.set_binary_params(0, sess_.hw), HTP_ERR_VTCM_TOO_SMALL);
}

TEST_F(HtpBatchErrors, ShapeMismatchIsInvalidParams) {
  BatchBuilder b = valid();
  b.tensors[1].ne[1] = 3;  // 3 does not divide 4
  b.tensors[1].size = htp_tensor_extent(b.tensors[1]);
  std::vector<uint64_t> msg = b.build();
  expect_rejected(msg, HTP_ERR_INVALID_PARAMS);
}

}  // namespace
}  // namespace hexllm::htp::test
