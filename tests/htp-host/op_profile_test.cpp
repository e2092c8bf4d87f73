// The profile's weight rate (op_weight_bytes, OpProfile::print): which ops count their weights,
// hand-derived byte counts, and the GB/s printed for them.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../htp/test_batch.h"
#include "htp-host/op_profile.h"

namespace hexllm::htp_host {
namespace {

TEST(HtpOpProfile, DenseMatmulsCountEachWeightSourceOnce) {
  htp::test::BatchBuilder b;
  const uint16_t q4 = b.tensor(0, 0, HTP_TYPE_Q4_0, {64, 16, 1, 1}, 0, HTP_TENSOR_WEIGHT);  // 16 x 2 x 18 B = 576
  const uint16_t q8 = b.tensor(0, 0, HTP_TYPE_Q8_0, {64, 8, 1, 1}, 0, HTP_TENSOR_WEIGHT);   // 8 x 2 x 34 = 544
  const uint16_t bias = b.tensor(0, 0, HTP_TYPE_F32, {16, 1, 1, 1}, 0, HTP_TENSOR_WEIGHT);  // 64
  const uint16_t act = b.tensor(0, 0, HTP_TYPE_F32, {64, 3, 1, 1});                         // not a weight
  const uint16_t table = b.tensor(0, 0, HTP_TYPE_F32, {64, 100, 1, 1}, 0, HTP_TENSOR_WEIGHT);
  constexpr uint16_t none = HTP_NO_TENSOR;
  auto bytes = [&b](uint32_t opcode, std::initializer_list<uint16_t> srcs) {
    return op_weight_bytes(b.op(opcode, none, srcs), b.tensors);
  };
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT, {q4, act}), 576u);
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT_ADD, {act, q4, none, none, bias}), 576u + 64u);
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT_QKV, {act, q4, q8, q8}), 576u + 2 * 544u);
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT_FFN, {act, q4, q8}), 576u + 544u);
  // Reads a few rows of its table, or only the routed experts: no rate to hold against memory.
  EXPECT_EQ(bytes(HTP_OP_GET_ROWS, {table, act}), 0u);
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT_ID, {q4, act, act}), 0u);
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT_ID_FFN, {act, q4, q8}), 0u);
  EXPECT_EQ(bytes(HTP_OP_ADD, {act, bias}), 0u);
  // An index past the table (not a batch the builder makes) counts nothing.
  EXPECT_EQ(bytes(HTP_OP_MUL_MAT, {9, act}), 0u);
}

TEST(HtpOpProfile, PrintsTheWeightRateOfKindsThatReadWeights) {
  OpProfile p;
  p.add_op(HTP_OP_MUL_MAT, 1000, 3000);  // 6000 bytes in 2000 ns: 3.0 GB/s
  p.add_op(HTP_OP_MUL_MAT, 1000, 3000);
  p.add_op(HTP_OP_ROPE, 500);
  p.add_call(4000, 2500);
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  ASSERT_NE(f, nullptr);
  p.print(f);
  std::fclose(f);
  const std::string out(text, len);
  std::free(text);
  auto line = [&out](const std::string& op) {
    const size_t at = out.find("\n  " + op + " ");
    return at == std::string::npos ? std::string() : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  auto last_field = [](const std::string& l) { return l.substr(l.find_last_of(' ') + 1); };
  EXPECT_NE(out.find("weights GB/s"), std::string::npos) << out;
  const std::string mm = line("MUL_MAT"), rope = line("ROPE");
  ASSERT_FALSE(mm.empty()) << out;
  ASSERT_FALSE(rope.empty()) << out;
  EXPECT_EQ(last_field(mm), "3.0") << mm;
  EXPECT_EQ(last_field(rope), "-") << rope;
  EXPECT_NE(mm.find(" 80.0%"), std::string::npos) << mm;  // 2000 of the calls' 2500 ns in ops
}

}  // namespace
}  // namespace hexllm::htp_host
