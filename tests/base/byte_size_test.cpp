// parse_byte_size against hand-derived byte counts, and every way a size can be malformed.
#include "base/byte_size.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace hexllm {
namespace {

constexpr uint64_t kAny = UINT64_MAX;

TEST(ByteSize, PlainAndSuffixed) {
  EXPECT_EQ(parse_byte_size("8388608", "--f", 1, kAny), 8388608u);
  EXPECT_EQ(parse_byte_size("256K", "--f", 1, kAny), 256u << 10);
  EXPECT_EQ(parse_byte_size("256k", "--f", 1, kAny), 256u << 10);
  EXPECT_EQ(parse_byte_size("8M", "--f", 1, kAny), 8u << 20);
  EXPECT_EQ(parse_byte_size("8MiB", "--f", 1, kAny), 8u << 20);
  EXPECT_EQ(parse_byte_size("8mb", "--f", 1, kAny), 8u << 20);
  EXPECT_EQ(parse_byte_size("3.5G", "--f", 1, kAny), 3584ull << 20);
  EXPECT_EQ(parse_byte_size("0.75G", "--f", 1, kAny), 768ull << 20);
  EXPECT_EQ(parse_byte_size("1T", "--f", 1, kAny), 1ull << 40);
  EXPECT_EQ(parse_byte_size("100B", "--f", 1, kAny), 100u);
}

std::string error_of(const std::string& text, uint64_t min = 1, uint64_t max = kAny) {
  try {
    parse_byte_size(text, "--htp-vtcm", min, max);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ByteSize, MalformedTextNamesFlagAndText) {
  for (const char* bad : {"", "lots", "8X", "K", "8M8", "-1", ".", "1.5"}) {
    const std::string msg = error_of(bad);
    EXPECT_NE(msg.find("--htp-vtcm"), std::string::npos) << bad;
    EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
  }
}

TEST(ByteSize, OverflowIsRefusedNotWrapped) {
  // 2^64 and more: the old parser multiplied without a check and wrapped to a small size.
  EXPECT_NE(error_of("18446744073709551616").find("too large"), std::string::npos);
  EXPECT_NE(error_of("17179869184G").find("too large"), std::string::npos);  // 2^34 G = 2^64
  EXPECT_NE(error_of("16777216T").find("too large"), std::string::npos);     // 2^24 T = 2^64
  EXPECT_EQ(parse_byte_size("16777215T", "--f", 1, kAny), 16777215ull << 40);
}

TEST(ByteSize, RangeIsInclusiveAndNamed) {
  EXPECT_EQ(parse_byte_size("64K", "--f", 64 << 10, 1ull << 40), 64u << 10);
  EXPECT_EQ(parse_byte_size("1T", "--f", 64 << 10, 1ull << 40), 1ull << 40);
  const std::string low = error_of("63K", 64 << 10, 1ull << 40);
  EXPECT_NE(low.find("out of range"), std::string::npos) << low;
  EXPECT_NE(low.find("between 64K and 1T"), std::string::npos) << low;
  EXPECT_NE(error_of("0").find("out of range"), std::string::npos);
  EXPECT_NE(error_of("4G", 1, UINT32_MAX).find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace hexllm
