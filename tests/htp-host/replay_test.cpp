// The undo log for retrying a batch: what it saves is derived by hand from the op order (bytes
// read before any op of the batch wrote them, that some op then writes), and restore puts
// exactly those bytes back.
#include <gtest/gtest.h>

#include <cstring>

#include "htp-host/batch_builder.h"
#include "htp-host/transport_replay.h"

namespace hexllm::htp_host {
namespace {

class HtpReplay : public ::testing::Test {
 protected:
  HtpReplay() {
    Pool::BankSizes s;
    s.compute = s.cache = s.messages = 64u << 10;
    pool_ = std::make_unique<Pool>(s);
    compute_ = pool_->allocate(Region::Compute, 8192);
    weight_ = pool_->allocate_packed(Region::Weights, 256, 64u << 10);
    EXPECT_TRUE(pool_->locate(compute_->data(), 1, &cbank_, &coff_));
    EXPECT_TRUE(pool_->locate(weight_->data(), 1, &wbank_, &woff_));
  }

  // F32 rows of `n` floats in the compute buffer at `at`; `row_stride` 0 is dense.
  htp_tensor f32(uint32_t at, uint32_t n, uint32_t rows = 1, uint32_t row_stride = 0) {
    htp_tensor t{};
    t.bank = static_cast<uint16_t>(cbank_);
    t.flags = HTP_TENSOR_COMPUTE;
    t.type = HTP_TYPE_F32;
    t.offset = coff_ + at;
    t.ne[0] = n, t.ne[1] = rows, t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4, t.nb[1] = row_stride != 0 ? row_stride : 4 * n, t.nb[2] = t.nb[3] = t.nb[1] * rows;
    t.size = static_cast<uint32_t>(htp_tensor_extent(t));
    return t;
  }
  void op(uint32_t opcode, const htp_tensor& dst, std::initializer_list<htp_tensor> srcs) {
    htp_op_desc& o = b_.add_op();
    o.opcode = opcode;
    int k = 0;
    for (const htp_tensor& s : srcs) o.src[k++] = b_.add_tensor(s);
    o.dst = b_.add_tensor(dst);
  }
  std::vector<uint64_t> message() {
    htp_message_layout l{};
    EXPECT_TRUE(b_.layout(&l));
    std::vector<uint64_t> msg(l.message_size / 8);
    b_.write(msg.data(), 1, l);
    return msg;
  }
  uint8_t* at(uint32_t offset) { return static_cast<uint8_t*>(compute_->data()) + offset; }

  std::unique_ptr<Pool> pool_;
  std::unique_ptr<backend::Buffer> compute_, weight_;
  uint32_t cbank_ = 0, coff_ = 0, wbank_ = 0, woff_ = 0;
  BatchBuilder b_;
};

TEST_F(HtpReplay, SavesTheInputsTheBatchOverwrites) {
  htp_tensor w{};
  w.bank = static_cast<uint16_t>(wbank_), w.flags = HTP_TENSOR_WEIGHT, w.type = HTP_TYPE_F32, w.offset = woff_;
  w.ne[0] = 64, w.ne[1] = w.ne[2] = w.ne[3] = 1, w.nb[0] = 4, w.nb[1] = w.nb[2] = w.nb[3] = 256, w.size = 256;
  const htp_tensor A = f32(0, 64), B = f32(256, 64), C = f32(512, 64, 2), D = f32(1024, 64, 2);
  const htp_tensor E = f32(2048, 32, 2, 256);  // two 128-byte rows 256 apart: a gap in the middle
  op(HTP_OP_MUL, B, {A, w});     // A is an input (and the weight, never written)
  op(HTP_OP_SILU, A, {B});       // A's slot reused: A must be saved; B was produced here
  op(HTP_OP_SET_ROWS, C, {B});   // writes some rows of C: C is not "produced"
  op(HTP_OP_ADD, D, {C, B});     // so C read here is an input, overwritten by SET_ROWS: saved
  op(HTP_OP_CPY, E, {f32(2048, 32, 2, 256)});  // E read (input) and written by a strided copy: saved
  op(HTP_OP_SILU, f32(3072, 16), {f32(2176, 16)});  // E's gap: still an input (a strided write covers nothing)
  std::vector<uint64_t> msg = message();

  for (uint32_t i = 0; i < 4096; ++i) *at(i) = static_cast<uint8_t>(i * 7 + 1);
  ReplayLog log;
  log.capture(*pool_, msg.data(), msg.size() * 8);
  // A (256) + C (512) + E (128 + 128 + the 128-byte gap between its rows, as one extent).
  EXPECT_EQ(log.saved_bytes(), 256u + 512u + 384u);

  std::vector<uint8_t> before(at(0), at(4096));
  std::memset(at(0), 0xee, 4096);  // a device that died after writing everything
  log.restore(*pool_);
  for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(*at(i), before[i]) << "A byte " << i;
  for (uint32_t i = 256; i < 512; ++i) ASSERT_EQ(*at(i), 0xee) << "B is rewritten by the retry, not saved";
  for (uint32_t i = 512; i < 1024; ++i) ASSERT_EQ(*at(i), before[i]) << "C byte " << i;
  for (uint32_t i = 1024; i < 2048; ++i) ASSERT_EQ(*at(i), 0xee) << "D is only written";
  for (uint32_t i = 2048; i < 2432; ++i) ASSERT_EQ(*at(i), before[i]) << "E byte " << i;
}

TEST_F(HtpReplay, AMessageTheDeviceWouldRefuseSavesNothing) {
  op(HTP_OP_SILU, f32(256, 64), {f32(0, 64)});
  std::vector<uint64_t> msg = message();
  auto* h = reinterpret_cast<htp_batch_header*>(msg.data());
  h->n_ops = 1000;
  ReplayLog log;
  log.capture(*pool_, msg.data(), msg.size() * 8);
  EXPECT_EQ(log.saved_bytes(), 0u);
}

}  // namespace
}  // namespace hexllm::htp_host
