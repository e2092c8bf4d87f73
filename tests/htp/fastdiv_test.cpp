// fastdiv against the hardware's division (the truth) for edge and random divisors/numerators.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "htp/abi/fastdiv.h"

namespace {

std::vector<uint32_t> edge_values() {
  std::vector<uint32_t> v = {0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 25, 100, 125, 641, 1000, 6700417, 1000000000,
                             0x7fffffff, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu};
  for (uint32_t b = 0; b < 32; ++b) {
    const uint32_t p = 1u << b;
    v.push_back(p);
    v.push_back(p - 1);
    v.push_back(p + 1);
  }
  return v;
}

void check(uint32_t d, const std::vector<uint32_t>& numerators) {
  const htp_divisor fd = htp_fastdiv_init(d);
  ASSERT_TRUE(htp_fastdiv_valid(fd, d)) << d;
  for (uint32_t n : numerators) {
    ASSERT_EQ(htp_fastdiv(n, fd), n / d) << n << " / " << d;
    ASSERT_EQ(htp_fastmod(n, fd), n % d) << n << " % " << d;
  }
}

TEST(HtpFastdiv, EdgeDivisorsAndNumerators) {
  std::vector<uint32_t> numerators = edge_values();
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000; ++i) numerators.push_back(rng());
  for (uint32_t d : edge_values())
    if (d != 0) check(d, numerators);
}

TEST(HtpFastdiv, RandomDivisors) {
  std::mt19937 rng(42);
  std::vector<uint32_t> numerators = edge_values();
  for (int i = 0; i < 200; ++i) numerators.push_back(rng());
  for (int i = 0; i < 3000; ++i) {
    const uint32_t d = rng() >> (rng() % 32);  // spread over all magnitudes
    if (d == 0) continue;
    std::vector<uint32_t> ns = numerators;
    for (uint32_t k : {1u, 2u, 3u, 1000u}) {  // multiples of d and their neighbours
      const uint64_t m = (uint64_t)d * k;
      if (m <= 0xffffffffu) {
        ns.push_back((uint32_t)m);
        ns.push_back((uint32_t)m - 1);
        if (m < 0xffffffffu) ns.push_back((uint32_t)m + 1);
      }
    }
    check(d, ns);
  }
}

TEST(HtpFastdiv, SmallDivisorsOverLowAndHighNumerators) {
  // Every numerator in the lowest and highest 20000 for divisors up to 200 (row/column counts).
  uint64_t mismatches = 0;
  for (uint32_t d = 1; d <= 200; ++d) {
    const htp_divisor fd = htp_fastdiv_init(d);
    for (uint32_t n = 0; n < 20000; ++n) mismatches += htp_fastdiv(n, fd) != n / d;
    for (uint32_t n = 0xffffffffu - 20000; n != 0; ++n) mismatches += htp_fastdiv(n, fd) != n / d;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(HtpFastdiv, ValidityCheckRejectsForgedConstants) {
  EXPECT_FALSE(htp_fastdiv_valid(htp_fastdiv_init(0), 0));
  htp_divisor fd = htp_fastdiv_init(7);
  EXPECT_FALSE(htp_fastdiv_valid(fd, 6));
  fd.mul += 1;
  EXPECT_FALSE(htp_fastdiv_valid(fd, 7));
  fd = htp_fastdiv_init(7);
  fd.shift = 0;
  EXPECT_FALSE(htp_fastdiv_valid(fd, 7));
}

}  // namespace
