// Random streams: reference values of splitmix64 / xoshiro256** / FNV-1a computed with an
// independent Python implementation of the published algorithms, and the normal sampler's
// moments and CDF against the exact normal distribution.
#include "synth/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace hexllm::synth {
namespace {

TEST(SynthRng, SplitMix64KnownValue) {
  // The first output of splitmix64 seeded with 0, as published with the algorithm.
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull);
}

TEST(SynthRng, XoshiroMatchesReference) {
  // State = splitmix64 applied repeatedly to 42; outputs from a Python transcription of
  // xoshiro256** (Blackman & Vigna).
  Xoshiro256 r(42);
  EXPECT_EQ(r.next(), 0x5c8961e1f2055d33ull);
  EXPECT_EQ(r.next(), 0xe182e8e848466886ull);
  EXPECT_EQ(r.next(), 0x9f7313650e290a18ull);
  EXPECT_EQ(r.next(), 0xe6c0f551804ef0bbull);
}

TEST(SynthRng, Fnv1aName) { EXPECT_EQ(hash_name("token_embd.weight"), 0x2d85b88e70e67727ull); }

TEST(SynthRng, SameSeedSameSamplesDifferentSeedDifferent) {
  std::vector<float> a(1000), b(1000), c(1000);
  NormalSampler(7).fill(a.data(), 1000, 0.0f, 1.0f);
  NormalSampler(7).fill(b.data(), 1000, 0.0f, 1.0f);
  NormalSampler(8).fill(c.data(), 1000, 0.0f, 1.0f);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(SynthRng, NormalMomentsTailsAndCdf) {
  const int64_t n = 4 << 20;
  std::vector<float> x(n);
  NormalSampler(123).fill(x.data(), n, 0.0f, 1.0f);
  double m1 = 0, m2 = 0, m4 = 0;
  int64_t beyond_r = 0, beyond_4 = 0;
  const double points[] = {-2.5, -1.5, -1.0, -0.5, 0.0, 0.3, 1.0, 2.0, 3.0};
  int64_t below[9] = {};
  for (const float v : x) {
    m1 += v;
    m2 += static_cast<double>(v) * v;
    m4 += static_cast<double>(v) * v * v * v;
    beyond_r += std::fabs(v) > 3.442619855899;  // the ziggurat's tail boundary
    beyond_4 += std::fabs(v) > 4.0;
    for (int k = 0; k < 9; ++k) below[k] += v < points[k];
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  EXPECT_NEAR(m1, 0.0, 0.002);  // sd of the mean: 1/sqrt(n) = 5e-4
  EXPECT_NEAR(m2, 1.0, 0.004);  // sd: sqrt(2/n) = 7e-4
  EXPECT_NEAR(m4, 3.0, 0.03);   // sd: sqrt(96/n) = 5e-3
  // P(|x| > R) = erfc(R / sqrt 2) = 5.761e-4, P(|x| > 4) = 6.334e-5.
  EXPECT_NEAR(static_cast<double>(beyond_r) / n, 5.761e-4, 0.15 * 5.761e-4);
  EXPECT_NEAR(static_cast<double>(beyond_4) / n, 6.334e-5, 0.3 * 6.334e-5);
  for (int k = 0; k < 9; ++k)
    EXPECT_NEAR(static_cast<double>(below[k]) / n, normal_cdf(points[k]), 0.0015) << "at x = " << points[k];
}

TEST(SynthRng, FillScalesAndShifts) {
  const int64_t n = 1 << 20;
  std::vector<float> x(n);
  NormalSampler(5).fill(x.data(), n, 5.0f, 2.0f);
  double s = 0, ss = 0;
  for (const float v : x) {
    s += v;
    ss += static_cast<double>(v) * v;
  }
  const double mean = s / n, var = ss / n - mean * mean;
  EXPECT_NEAR(mean, 5.0, 0.01);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.01);
}

}  // namespace
}  // namespace hexllm::synth
