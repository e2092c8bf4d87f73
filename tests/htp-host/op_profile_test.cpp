// The profile's weight rate (op_weight_bytes, OpProfile::print): which ops count their weights,
// hand-derived byte counts, and the GB/s printed for them.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "htp-host/op_profile.h"

namespace hexllm::htp_host {
namespace {

// A contiguous 2-D tensor of `type` with `rows` rows of `cols` elements.
htp_tensor matrix(uint32_t type, uint32_t cols, uint32_t rows, uint16_t flags) {
  const htp_type_info ti = htp_type_geometry(type);
  htp_tensor t{};
  t.type = type;
  t.flags = flags;
  t.ne[0] = cols;
  t.ne[1] = rows;
  t.ne[2] = t.ne[3] = 1;
  t.nb[0] = ti.type_size;
  t.nb[1] = cols / ti.block_size * ti.type_size;
  t.nb[2] = t.nb[3] = t.nb[1] * rows;
  t.size = t.nb[2];
  return t;
}

htp_op_desc op(uint32_t opcode, std::initializer_list<uint16_t> srcs) {
  htp_op_desc o{};
  o.opcode = opcode;
  for (uint16_t& s : o.src) s = HTP_NO_TENSOR;
  for (uint16_t& d : o.dst_ext) d = HTP_NO_TENSOR;
  uint32_t k = 0;
  for (uint16_t s : srcs) o.src[k++] = s;
  return o;
}

TEST(HtpOpProfile, DenseMatmulsCountEachWeightSourceOnce) {
  const std::vector<htp_tensor> t = {
      matrix(HTP_TYPE_Q4_0, 64, 16, HTP_TENSOR_WEIGHT),    // 0: 16 rows x 2 blocks x 18 B = 576
      matrix(HTP_TYPE_Q8_0, 64, 8, HTP_TENSOR_WEIGHT),     // 1: 8 x 2 x 34 = 544
      matrix(HTP_TYPE_F32, 16, 1, HTP_TENSOR_WEIGHT),      // 2: a bias, 64
      matrix(HTP_TYPE_F32, 64, 3, HTP_TENSOR_COMPUTE),     // 3: activations, not weights
      matrix(HTP_TYPE_F32, 64, 100, HTP_TENSOR_WEIGHT),    // 4: an embedding table, 25600
  };
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT, {0, 3}), t), 576u);
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT_ADD, {3, 0, HTP_NO_TENSOR, HTP_NO_TENSOR, 2}), t), 576u + 64u);
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT_QKV, {3, 0, 1, 1}), t), 576u + 2 * 544u);
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT_FFN, {3, 0, 1}), t), 576u + 544u);
  // Reads a few rows of its table, or only the routed experts: no rate to hold against memory.
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_GET_ROWS, {4, 3}), t), 0u);
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT_ID, {0, 3, 3}), t), 0u);
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_ADD, {3, 2}), t), 0u);
  // An index past the table (not a batch the builder makes) counts nothing.
  EXPECT_EQ(op_weight_bytes(op(HTP_OP_MUL_MAT, {9, 3}), t), 0u);
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
