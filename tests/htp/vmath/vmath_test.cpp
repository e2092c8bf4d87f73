// vmath against <cmath> evaluated in double (the truth), and every SIMD table against the
// generic one bit for bit (vmath.h: all tables perform the same IEEE operations).
//
// Accuracy bounds asserted here (ulp of the float-rounded true result; measured maxima over a
// sweep of every 997th float in brackets):
//   exp 1 (0.87)   log 1 (0.88)   tanh 1.5 (1.04)   sigmoid 3 (2.4)   silu 3.5 (2.9)
//   softplus 2.5 (1.93)   sqrt 0.5 (correctly rounded; software sqrt 1)
//   gelu, gelu_quick: 3 + 2.5 |v| where v is the sigmoid argument (2u resp. 1.702 x): in the
//   negative tail the float rounding of v itself dominates (|v| = 10 -> 28 ulp = 3e-6 relative
//   on values below 1e-3); for x >= -1 both stay under 3 ulp.
// Results in the subnormal range (or computed from a subnormal e^-|v|, the silu family below
// x = -87.3) are checked absolutely: |error| <= (1 + |x|) 2^-149.
#include "htp/vmath/vmath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/fp16.h"
#include "htp/vec/vec.h"
#include "htp/vmath/vmath_scalar.h"

namespace hexllm::htp {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool cpu_has_avx512() {
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

// Every table this build has and this CPU runs, best last.
std::vector<const vmath_ops*> tables() {
  std::vector<const vmath_ops*> t = {&vmath_generic()};
  if (vmath_avx2() != nullptr && cpu_has_avx2()) t.push_back(vmath_avx2());
  if (vmath_avx512() != nullptr && cpu_has_avx512()) t.push_back(vmath_avx512());
  return t;
}

// The other tests cover the tables in tables(): say when one of them is left out.
TEST(Vmath, EveryBuiltTableIsTested) {
  std::string untested;
  if (vmath_avx2() != nullptr && !cpu_has_avx2()) untested += " avx2 (needs AVX2+FMA+F16C)";
  if (vmath_avx512() != nullptr && !cpu_has_avx512()) untested += " avx512 (needs AVX-512 F/BW/VL/DQ)";
  if (!untested.empty()) GTEST_SKIP() << "tables this CPU cannot run, untested:" << untested;
  EXPECT_EQ(tables().size(), 1u + (vmath_avx2() != nullptr) + (vmath_avx512() != nullptr));
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Error of y in ulps of the float-rounded truth; subnormal truths are measured in 2^-149.
double ulp_error(float y, double truth) {
  const float t = static_cast<float>(truth);
  if (std::isnan(truth)) return std::isnan(y) ? 0.0 : 1e30;
  if (std::isinf(t)) return static_cast<double>(y) == static_cast<double>(t) ? 0.0 : 1e30;
  const double a = std::fabs(truth);
  const double ulp = a < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(static_cast<double>(y) - truth) / ulp;
}

double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu_v(double x) { return 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }

struct Unary {
  const char* name;
  void (*vmath_ops::*fn)(const float*, float*, uint32_t);
  double (*truth)(double);
  double lo, hi;            // swept input range
  double ulps;              // bound for normal results
  double (*slope)(double);  // extra ulps per |sigmoid argument| (gelu family), or nullptr
};

const Unary kUnary[] = {
    {"exp", &vmath_ops::exp, [](double x) { return std::exp(x); }, -110, 90, 1.0, nullptr},
    {"log", &vmath_ops::log, [](double x) { return std::log(x); }, 0, 3.4e38, 1.0, nullptr},
    {"tanh", &vmath_ops::tanh, [](double x) { return std::tanh(x); }, -12, 12, 1.5, nullptr},
    {"sigmoid", &vmath_ops::sigmoid, sigmoid_d, -110, 110, 3.0, nullptr},
    {"silu", &vmath_ops::silu, [](double x) { return x * sigmoid_d(x); }, -110, 110, 3.5, nullptr},
    {"gelu", &vmath_ops::gelu, [](double x) { return x * sigmoid_d(gelu_v(x)); }, -12, 12, 3.0,
     [](double x) { return 2.5 * std::fabs(gelu_v(x)); }},
    {"gelu_quick", &vmath_ops::gelu_quick, [](double x) { return x * sigmoid_d(1.702 * x); }, -70, 70, 3.0,
     [](double x) { return 2.5 * std::fabs(1.702 * x); }},
    {"softplus", &vmath_ops::softplus,
     [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }, -110, 110, 2.5,
     nullptr},
    {"sqrt", &vmath_ops::sqrt, [](double x) { return std::sqrt(x); }, 0, 3.4e38, 0.5, nullptr},
};

// Every 997th float pattern in [lo, hi] (a few million values over all exponents).
std::vector<float> sweep(double lo, double hi) {
  std::vector<float> xs;
  for (uint64_t b = 0; b < (1ull << 32); b += 997) {
    const float x = from_bits(static_cast<uint32_t>(b));
    if (x >= lo && x <= hi) xs.push_back(x);
  }
  return xs;
}

TEST(Vmath, UnaryAccuracyAgainstDoubleLibm) {
  for (const Unary& u : kUnary) {
    const std::vector<float> xs = sweep(u.lo, u.hi);
    ASSERT_GT(xs.size(), 100000u) << u.name;
    std::vector<float> ys(xs.size());
    for (const vmath_ops* t : tables()) {
      (t->*u.fn)(xs.data(), ys.data(), static_cast<uint32_t>(xs.size()));
      double worst = 0;
      int failures = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double truth = u.truth(xs[i]);
        const double err = ulp_error(ys[i], truth);
        worst = std::max(worst, err);
        const double bound = u.ulps + (u.slope != nullptr ? u.slope(xs[i]) : 0.0);
        // Subnormal results, or a subnormal e^-|v| inside x e^-|v| / (1 + e^-|v|): absolute.
        const bool ok = err <= bound || std::fabs(ys[i] - truth) <= (1.0 + std::fabs(xs[i])) * 0x1p-149;
        if (!ok && failures++ < 5)
          ADD_FAILURE() << t->name << " " << u.name << "(" << xs[i] << ") = " << ys[i] << ", truth " << truth
                        << ": " << err << " ulp > " << bound;
      }
      RecordProperty(std::string(t->name) + "_" + u.name + "_max_ulp", std::to_string(worst));
    }
  }
}

// The same sweeps, every SIMD table against the generic one bit for bit: all exponents,
// including the subnormal results and the overflow edge that random inputs rarely reach.
TEST(Vmath, SimdUnaryMatchesGenericOverTheSweep) {
  const std::vector<const vmath_ops*> ts = tables();
  if (ts.size() < 2) GTEST_SKIP() << "no SIMD table on this CPU";
  for (const Unary& u : kUnary) {
    const std::vector<float> xs = sweep(u.lo, u.hi);
    const uint32_t n = static_cast<uint32_t>(xs.size());
    std::vector<float> want(n), got(n);
    (vmath_generic().*u.fn)(xs.data(), want.data(), n);
    for (const vmath_ops* t : std::vector<const vmath_ops*>(ts.begin() + 1, ts.end())) {
      (t->*u.fn)(xs.data(), got.data(), n);
      int failures = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (bits(got[i]) != bits(want[i]) && !(std::isnan(got[i]) && std::isnan(want[i])) && failures++ < 5)
          ADD_FAILURE() << t->name << " " << u.name << "(" << xs[i] << ") = " << got[i] << ", generic " << want[i];
    }
  }
}

TEST(Vmath, SoftwareSqrtIsWithinOneUlp) {
  int failures = 0;
  for (uint64_t b = 0; b < 0x7f800000ull; b += 1009) {
    const float x = from_bits(static_cast<uint32_t>(b));
    const double err = ulp_error(vm_sqrt_soft(x), std::sqrt(static_cast<double>(x)));
    if (err > 1.0 && failures++ < 5) ADD_FAILURE() << "sqrt_soft(" << x << "): " << err << " ulp";
  }
  EXPECT_EQ(vm_sqrt_soft(kInf), kInf);
  EXPECT_EQ(bits(vm_sqrt_soft(-0.0f)), bits(-0.0f));
  EXPECT_TRUE(std::isnan(vm_sqrt_soft(-1.0f)));
  EXPECT_TRUE(std::isnan(vm_sqrt_soft(kNan)));
  EXPECT_EQ(vm_sqrt_soft(4.0f), 2.0f);
}

// Limits and IEEE special values (hand-derived from the definitions in vmath_scalar.h).
TEST(Vmath, SpecialValues) {
  struct Case {
    void (*vmath_ops::*fn)(const float*, float*, uint32_t);
    float x, want;  // want nan: expect nan
  };
  const Case cases[] = {
      {&vmath_ops::exp, kInf, kInf},
      {&vmath_ops::exp, -kInf, 0.0f},
      {&vmath_ops::exp, 0.0f, 1.0f},
      {&vmath_ops::exp, -0.0f, 1.0f},
      {&vmath_ops::exp, 89.0f, kInf},
      {&vmath_ops::exp, -104.0f, 0.0f},
      {&vmath_ops::exp, 88.72f, std::exp(88.72f)},
      {&vmath_ops::exp, kNan, kNan},
      {&vmath_ops::log, 0.0f, -kInf},
      {&vmath_ops::log, -1.0f, kNan},
      {&vmath_ops::log, kInf, kInf},
      {&vmath_ops::log, 1.0f, 0.0f},
      {&vmath_ops::log, kNan, kNan},
      {&vmath_ops::log, 0x1p-149f, -149 * 0.69314718f},
      {&vmath_ops::tanh, kInf, 1.0f},
      {&vmath_ops::tanh, -kInf, -1.0f},
      {&vmath_ops::tanh, 30.0f, 1.0f},
      {&vmath_ops::tanh, -30.0f, -1.0f},
      {&vmath_ops::tanh, kNan, kNan},
      {&vmath_ops::sigmoid, kInf, 1.0f},
      {&vmath_ops::sigmoid, -kInf, 0.0f},
      {&vmath_ops::sigmoid, 0.0f, 0.5f},
      {&vmath_ops::sigmoid, kNan, kNan},
      {&vmath_ops::silu, kInf, kInf},
      {&vmath_ops::silu, -kInf, kNan},
      {&vmath_ops::silu, -200.0f, -0.0f},
      {&vmath_ops::gelu, kInf, kInf},
      {&vmath_ops::gelu, -kInf, kNan},
      {&vmath_ops::gelu, 1e20f, 1e20f},
      {&vmath_ops::gelu, -1e20f, -0.0f},
      {&vmath_ops::gelu_quick, kInf, kInf},
      {&vmath_ops::gelu_quick, -100.0f, -0.0f},
      {&vmath_ops::softplus, kInf, kInf},
      {&vmath_ops::softplus, -kInf, 0.0f},
      {&vmath_ops::softplus, 100.0f, 100.0f},
      {&vmath_ops::softplus, kNan, kNan},
      {&vmath_ops::sqrt, -1.0f, kNan},
      {&vmath_ops::sqrt, kInf, kInf},
  };
  for (const vmath_ops* t : tables())
    for (const Case& c : cases) {
      // Also through the vector paths: the value at every position of a 17-element array (the
      // 8- and 16-lane bodies and their tails).
      std::vector<float> x(17, c.x), y(17);
      (t->*c.fn)(x.data(), y.data(), 17);
      for (float v : y) {
        if (std::isnan(c.want))
          EXPECT_TRUE(std::isnan(v)) << t->name << " f(" << c.x << ") = " << v;
        else if (c.want == 0.0f || std::isinf(c.want))
          EXPECT_EQ(v, c.want) << t->name << " f(" << c.x << ")";
        else
          EXPECT_NEAR(v, c.want, 2e-7 * std::fabs(c.want)) << t->name << " f(" << c.x << ")";
      }
    }
  // tanh keeps the sign of zero.
  for (const vmath_ops* t : tables()) {
    float x = -0.0f, y = 1.0f;
    t->tanh(&x, &y, 1);
    EXPECT_EQ(bits(y), bits(-0.0f)) << t->name;
  }
}

// Random inputs spanning the interesting ranges, with or without specials (a reduction over
// specials is mostly nan or inf, which would hide its summation order); lengths and offsets
// cover the 8- and 16-wide bodies, the 32-lane reductions and every tail length.
std::vector<float> random_inputs(size_t n, std::mt19937& rng, float scale, bool with_specials) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  if (!with_specials) return x;
  // -104 (exp rounds to 0; the SIMD tables return 0 without computing) and -103.97 (2^-149).
  const float specials[] = {kInf, -kInf, kNan, 0.0f, -0.0f, 100.0f, -100.0f, 1e-40f, -104.0f, -103.97f};
  constexpr size_t kSpecials = sizeof specials / sizeof specials[0];
  for (size_t i = 0; i < n; i += 13) x[i] = specials[(i / 13) % kSpecials];
  return x;
}

bool same_bits(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

TEST(Vmath, SimdTablesMatchGenericBitForBit) {
  const std::vector<const vmath_ops*> ts = tables();
  if (ts.size() < 2) GTEST_SKIP() << "no SIMD table on this CPU";
  const vmath_ops& g = *ts[0];
  std::mt19937 rng(7);
  for (const vmath_ops* t : std::vector<const vmath_ops*>(ts.begin() + 1, ts.end())) {
    std::vector<uint32_t> lengths;
    for (uint32_t n = 0; n <= 70; ++n) lengths.push_back(n);  // every tail after 0..2 blocks of 32
    for (uint32_t n : {100u, 127u, 1000u, 1031u, 4099u}) lengths.push_back(n);
    for (uint32_t n : lengths) {
      for (const auto& [scale, specials] : {std::pair(3.0f, true), std::pair(40.0f, true), std::pair(3.0f, false)}) {
        const std::vector<float> a = random_inputs(n + 1, rng, scale, specials);
        const std::vector<float> b = random_inputs(n + 1, rng, scale, specials);
        std::vector<uint16_t> h(n + 1);
        vmath_generic().f32_to_f16(b.data(), h.data(), n + 1);
        const float* x = a.data() + 1;  // misaligned by one float
        const float* w = b.data() + 1;
        auto check = [&](const char* what, auto run) {
          std::vector<float> y0(n + 2, 7.0f), y1(n + 2, 7.0f);
          const float r0 = run(g, y0.data()), r1 = run(*t, y1.data());
          EXPECT_TRUE(same_bits(r0, r1)) << what << " n=" << n << (specials ? "" : " (finite)") << ": " << r0
                                         << " vs " << r1;
          for (uint32_t i = 0; i < n; ++i)
            if (!same_bits(y0[i], y1[i])) {
              ADD_FAILURE() << what << " n=" << n << " i=" << i << " x=" << x[i] << ": " << y0[i] << " vs "
                            << y1[i];
              break;
            }
          EXPECT_EQ(y1[n], 7.0f) << what << " wrote past n";
        };
        for (const Unary& u : kUnary)
          check(u.name, [&](const vmath_ops& o, float* y) {
            (o.*u.fn)(x, y, n);
            return 0.0f;
          });
        check("scale_bias", [&](const vmath_ops& o, float* y) {
          o.scale_bias(x, y, n, 1.5f, -0.25f);
          return 0.0f;
        });
        check("mul", [&](const vmath_ops& o, float* y) {
          o.mul(x, w, y, n);
          return 0.0f;
        });
        check("axpy", [&](const vmath_ops& o, float* y) {
          std::copy(w, w + n, y);
          o.axpy(0.3f, x, y, n);
          return 0.0f;
        });
        check("clamp", [&](const vmath_ops& o, float* y) {
          o.clamp(x, y, n, -1.0f, 2.0f);
          return 0.0f;
        });
        check("sub_scale", [&](const vmath_ops& o, float* y) {
          o.sub_scale(x, y, n, 0.7f, 3.0f);
          return 0.0f;
        });
        check("scale_mul", [&](const vmath_ops& o, float* y) {
          o.scale_mul(x, w, y, n, 0.7f);
          return 0.0f;
        });
        check("swiglu", [&](const vmath_ops& o, float* y) {
          o.swiglu(x, w, y, n);
          return 0.0f;
        });
        check("geglu", [&](const vmath_ops& o, float* y) {
          o.geglu(x, w, y, n);
          return 0.0f;
        });
        check("swiglu_oai", [&](const vmath_ops& o, float* y) {
          o.swiglu_oai(x, w, y, n, 1.702f, 7.0f);
          return 0.0f;
        });
        check("sum", [&](const vmath_ops& o, float*) { return o.sum(x, n); });
        check("sum_sq", [&](const vmath_ops& o, float*) { return o.sum_sq(x, n); });
        check("max", [&](const vmath_ops& o, float*) { return o.max(x, n); });
        check("dot", [&](const vmath_ops& o, float*) { return o.dot(x, w, n); });
        check("sum_sq_dev", [&](const vmath_ops& o, float*) { return o.sum_sq_dev(x, n, 0.1f); });
        check("exp_sub_sum", [&](const vmath_ops& o, float* y) { return o.exp_sub_sum(x, y, n, scale); });
        check("dot_f16", [&](const vmath_ops& o, float*) { return o.dot_f16(x, h.data(), n); });
        check("axpy_f16", [&](const vmath_ops& o, float* y) {
          std::copy(x, x + n, y);
          o.axpy_f16(0.3f, h.data(), y, n);
          return 0.0f;
        });
        check("f16_to_f32", [&](const vmath_ops& o, float* y) {
          o.f16_to_f32(h.data(), y, n);
          return 0.0f;
        });
        check("scale_add_max",
              [&](const vmath_ops& o, float* y) { return o.scale_add_max(x, w, y, n, 0.125f, 0.5f); });
        check("scale_add_max(no mask)",
              [&](const vmath_ops& o, float* y) { return o.scale_add_max(x, nullptr, y, n, 0.125f, 0.5f); });
        check("scale_add_max_f16", [&](const vmath_ops& o, float* y) {
          return o.scale_add_max_f16(x, h.data(), y, n, 0.125f, 0.5f);
        });
        std::vector<uint16_t> h0(n + 1, 0x1234), h1(n + 1, 0x1234);
        g.f32_to_f16(x, h0.data(), n);
        t->f32_to_f16(x, h1.data(), n);
        for (uint32_t i = 0; i < n; ++i)
          if (!std::isnan(x[i])) {
            ASSERT_EQ(h0[i], h1[i]) << "f32_to_f16(" << x[i] << ")";
          }
        EXPECT_EQ(h1[n], 0x1234) << "f32_to_f16 wrote past n";
      }
    }
  }
}

// Reductions against double sums; the bound is the classic n * 2^-24 * sum |terms|.
TEST(Vmath, ReductionsAgainstDoubleSums) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (const vmath_ops* t : tables())
    for (uint32_t n : {0u, 1u, 5u, 32u, 77u, 4097u, 131072u}) {
      std::vector<float> x(n), w(n), y(n);
      for (uint32_t i = 0; i < n; ++i) x[i] = u(rng), w[i] = u(rng);
      double s = 0, sa = 0, sq = 0, d = 0, da = 0, dev = 0, mx = -INFINITY, es = 0;
      for (uint32_t i = 0; i < n; ++i) {
        s += x[i], sa += std::fabs(x[i]), sq += (double)x[i] * x[i];
        d += (double)x[i] * w[i], da += std::fabs((double)x[i] * w[i]);
        dev += ((double)x[i] - 0.5) * ((double)x[i] - 0.5);
        mx = std::max(mx, (double)x[i]);
        es += std::exp((double)x[i] - 2.0);
      }
      const double eps = std::max(1u, n) * 0x1p-24;
      EXPECT_NEAR(t->sum(x.data(), n), s, eps * sa + 1e-30) << t->name << " n=" << n;
      EXPECT_NEAR(t->sum_sq(x.data(), n), sq, eps * sq + 1e-30) << t->name << " n=" << n;
      EXPECT_NEAR(t->dot(x.data(), w.data(), n), d, eps * da + 1e-30) << t->name << " n=" << n;
      EXPECT_NEAR(t->sum_sq_dev(x.data(), n, 0.5f), dev, eps * dev * 2 + 1e-30) << t->name << " n=" << n;
      EXPECT_EQ(t->max(x.data(), n), n == 0 ? -INFINITY : mx) << t->name << " n=" << n;
      // exp_sub_sum: elements within 1 ulp of e^(x - 2) (of the float difference), sum within
      // the bound plus the 2 ulp that rounding x - 2 may cost.
      const float es_got = t->exp_sub_sum(x.data(), y.data(), n, 2.0f);
      EXPECT_NEAR(es_got, es, (eps + 5e-7) * es + 1e-30) << t->name << " n=" << n;
      for (uint32_t i = 0; i < n; ++i)
        ASSERT_LE(ulp_error(y[i], std::exp((double)(x[i] - 2.0f))), 1.0) << t->name << " i=" << i;
    }
}

TEST(Vmath, ElementwiseHelpersAgainstDouble) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  const uint32_t n = 1001;
  std::vector<float> x(n), w(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = u(rng), w[i] = u(rng);
  auto near = [](float got, double want, double ulps) { return ulp_error(got, want) <= ulps; };
  for (const vmath_ops* t : tables()) {
    t->scale_bias(x.data(), y.data(), n, 1.5f, -0.25f);
    for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(near(y[i], 1.5 * x[i] - 0.25, 0.5)) << t->name;
    t->clamp(x.data(), y.data(), n, -1.0f, 2.0f);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], std::clamp(x[i], -1.0f, 2.0f)) << t->name;
    t->sub_scale(x.data(), y.data(), n, 0.3f, 2.5f);
    for (uint32_t i = 0; i < n; ++i)  // x - m rounds once: 2^-24 (|x| + |m|) |s|
      ASSERT_NEAR(y[i], ((double)x[i] - 0.3f) * 2.5, (std::fabs(x[i]) + 0.3) * 2.5 * 0x1p-23) << t->name;
    t->scale_mul(x.data(), w.data(), y.data(), n, 0.7f);
    for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(near(y[i], (double)x[i] * 0.7f * w[i], 1.5)) << t->name;
    t->swiglu(x.data(), w.data(), y.data(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(near(y[i], x[i] * sigmoid_d(x[i]) * w[i], 4.0)) << t->name;
    t->geglu(x.data(), w.data(), y.data(), n);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_TRUE(near(y[i], x[i] * sigmoid_d(gelu_v(x[i])) * w[i], 4.0 + 2.5 * std::fabs(gelu_v(x[i]))))
          << t->name << " x=" << x[i];
    const double alpha = 1.702, limit = 3.0;
    t->swiglu_oai(x.data(), w.data(), y.data(), n, 1.702f, 3.0f);
    for (uint32_t i = 0; i < n; ++i) {
      const double g = std::min((double)x[i], limit), v = std::clamp((double)w[i], -limit, limit);
      ASSERT_TRUE(near(y[i], g * sigmoid_d(1.702f * g) * (v + 1), 4.0 + 2.5 * alpha * std::fabs(g)))
          << t->name << " " << x[i] << " " << w[i];
    }
    const float m = t->scale_add_max(x.data(), w.data(), y.data(), n, 0.125f, 0.5f);
    double mx = -INFINITY;
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_NEAR(y[i], 0.125 * x[i] + 0.5 * w[i],
                  (0.125 * std::fabs(x[i]) + 0.5 * std::fabs(w[i])) * 0x1p-23)
          << t->name;
      mx = std::max(mx, (double)y[i]);
    }
    EXPECT_EQ(m, mx) << t->name;
    EXPECT_EQ(t->scale_add_max(x.data(), nullptr, y.data(), 0, 1.0f, 1.0f), -kInf) << t->name;
  }
}

// Halves: f16 -> f32 against the IEEE formula; f32 -> f16 round trip, ties to even, overflow.
TEST(Vmath, HalfConversions) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> f(65536);
  for (const vmath_ops* t : tables()) {
    t->f16_to_f32(all.data(), f.data(), 65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      const int e = (h >> 10) & 31, m = h & 1023;
      const double mag = e == 31  ? (m ? NAN : INFINITY)
                         : e == 0 ? std::ldexp(m, -24)
                                  : std::ldexp(1024 + m, e - 25);
      const double want = (h & 0x8000) ? -mag : mag;
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(f[h])) << t->name << " " << h;
      else
        ASSERT_EQ((double)f[h], want) << t->name << " half " << h;
    }
    std::vector<uint16_t> back(65536);
    t->f32_to_f16(f.data(), back.data(), 65536);
    for (uint32_t h = 0; h < 65536; ++h)
      if (!std::isnan(f[h])) {
        ASSERT_EQ(back[h], h) << t->name;
      }
    // Midpoints between neighbours go to the even one; past the largest finite half, inf.
    const float x[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65519.0f, 65520.0f,
                       0x1p-25f,        0x1.000002p-25f,     -kInf};
    const uint16_t want[] = {0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0000, 0x0001, 0xfc00};
    uint16_t got[7];
    t->f32_to_f16(x, got, 7);
    for (int i = 0; i < 7; ++i) EXPECT_EQ(got[i], want[i]) << t->name << " " << x[i];
    std::vector<float> xs(17, 1.0f + 0x1p-11f);
    std::vector<uint16_t> hs(17);
    t->f32_to_f16(xs.data(), hs.data(), 17);  // through the vector paths too
    for (uint16_t v : hs) EXPECT_EQ(v, 0x3c00) << t->name;
  }
}

// Transpose against its definition, bit for bit (NaN payloads too), over every shape up to
// 19 x 19 and the attention shapes, with strides past the copied area whose cells must stay.
TEST(Vmath, TransposeMovesEveryElementAndNothingElse) {
  std::mt19937 rng(9);
  std::vector<std::pair<uint32_t, uint32_t>> shapes = {{64, 128}, {64, 7}, {8, 64}, {3, 80}, {41, 128}};
  for (uint32_t r = 0; r < 20; ++r)
    for (uint32_t c = 0; c < 20; ++c) shapes.push_back({r, c});
  constexpr uint32_t kSentinel = 0x7fc0dead;
  for (const vmath_ops* t : tables())
    for (const auto& [rows, cols] : shapes) {
      const size_t xs = cols + 3, ys = rows + 5;
      std::vector<uint32_t> x(rows * xs + 1), y(cols * ys + 1, kSentinel);
      for (uint32_t& v : x) v = static_cast<uint32_t>(rng());  // any bits, NaNs included
      t->transpose(reinterpret_cast<const float*>(x.data()), xs, reinterpret_cast<float*>(y.data()), ys, rows,
                   cols);
      for (uint32_t c = 0; c < cols; ++c)
        for (uint32_t yr = 0; yr < ys; ++yr) {
          const uint32_t want = yr < rows ? x[yr * xs + c] : kSentinel;
          ASSERT_EQ(y[c * ys + yr], want) << t->name << " " << rows << " x " << cols << " at column " << c
                                          << ", row " << yr;
        }
      ASSERT_EQ(y.back(), kSentinel) << t->name << " wrote past the last column";
    }
}

TEST(Vmath, HalfDotAndAxpyAgainstDouble) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const uint32_t n = 300;
  std::vector<float> a(n), y(n), y0(n);
  std::vector<uint16_t> h(n);
  for (uint32_t i = 0; i < n; ++i) a[i] = u(rng), y0[i] = u(rng);
  for (uint32_t i = 0; i < n; ++i) h[i] = static_cast<uint16_t>(0x3000 + (rng() % 0x1000));  // 0.125 .. 1
  for (const vmath_ops* t : tables()) {
    std::vector<float> hf(n);
    t->f16_to_f32(h.data(), hf.data(), n);
    double d = 0, da = 0;
    for (uint32_t i = 0; i < n; ++i) d += (double)a[i] * hf[i], da += std::fabs((double)a[i] * hf[i]);
    EXPECT_NEAR(t->dot_f16(a.data(), h.data(), n), d, n * 0x1p-24 * da) << t->name;
    y = y0;
    t->axpy_f16(0.75f, h.data(), y.data(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_LE(ulp_error(y[i], y0[i] + 0.75 * hf[i]), 0.5) << t->name;
  }
}

// o += p . v over F16 value rows: every table gives generic's bits (one fma per value row, in
// order), and generic is within n rounding steps of the double sum. Row counts past the 8 rows
// the SIMD tables keep in registers, dims past their vector widths, strides wider than the rows,
// and nothing written outside the rows x dv block.
TEST(Vmath, PvF16AgainstDoubleAndBitForBit) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::vector<const vmath_ops*> ts = tables();
  for (uint32_t rows : {1u, 4u, 7u, 8u, 9u, 17u})
    for (uint32_t n : {0u, 1u, 5u, 64u})
      for (uint32_t dv : {1u, 7u, 8u, 16u, 31u, 32u, 40u, 64u, 80u, 128u}) {
        const size_t ps = n + 3, vs = dv + 5, os = dv + 2;
        std::vector<float> p(rows * ps), o0(rows * os + 1);
        std::vector<uint16_t> v(n * vs + 1);
        for (float& x : p) x = u(rng);
        for (float& x : o0) x = u(rng);
        for (uint16_t& h : v) h = fp32_to_fp16(u(rng));
        std::vector<float> want;
        for (const vmath_ops* t : ts) {
          std::vector<float> o = o0;
          t->pv_f16({p.data(), ps, rows, v.data(), vs, n, o.data(), os, dv});
          SCOPED_TRACE(testing::Message() << t->name << " rows " << rows << " n " << n << " dv " << dv);
          for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t d = 0; d < os && r * os + d < o.size(); ++d) {
              const size_t i = r * os + d;
              if (d >= dv) {
                ASSERT_EQ(o[i], o0[i]) << "wrote outside the block at row " << r << ", dim " << d;
                continue;
              }
              double s = o0[i], mag = std::fabs(o0[i]);
              for (uint32_t c = 0; c < n; ++c) {
                const double term = (double)p[r * ps + c] * fp16_to_fp32(v[c * vs + d]);
                s += term, mag += std::fabs(term);
              }
              ASSERT_NEAR(o[i], s, (n + 1) * 0x1p-24 * mag) << "row " << r << ", dim " << d;
            }
          ASSERT_EQ(o.back(), o0.back()) << "wrote past the last row";
          if (t == ts[0]) want = o;
          for (size_t i = 0; i < o.size(); ++i) ASSERT_TRUE(same_bits(o[i], want[i])) << "element " << i;
        }
      }
}

TEST(Vmath, SelectPicksTheBestSupportedTable) {
  const std::vector<const vmath_ops*> ts = tables();
  EXPECT_EQ(&vmath_for_isa(nullptr), ts.back());
  EXPECT_EQ(&vmath_select(), &vmath_for_isa(vec_isa_forced()));
  EXPECT_STREQ(vmath_generic().name, "generic");
  if (vmath_avx2() != nullptr) {
    EXPECT_STREQ(vmath_avx2()->name, "avx2");
  }
  if (vmath_avx512() != nullptr) {
    EXPECT_STREQ(vmath_avx512()->name, "avx512");
  }
}

// HEXLLM_ISA names a matmul kernel path; vmath takes its widest table not beyond it.
TEST(Vmath, ForcedIsaPicksItsTable) {
  const vmath_ops* best = tables().back();
  const vmath_ops* avx2 = cpu_has_avx2() && vmath_avx2() != nullptr ? vmath_avx2() : &vmath_generic();
  EXPECT_EQ(&vmath_for_isa("generic"), &vmath_generic());
  EXPECT_EQ(&vmath_for_isa("avx2"), avx2);
  EXPECT_EQ(&vmath_for_isa("avxvnni"), avx2);
  for (const char* isa : {"avx512", "amx", "exact"}) EXPECT_EQ(&vmath_for_isa(isa), best) << isa;
}

}  // namespace
}  // namespace hexllm::htp
