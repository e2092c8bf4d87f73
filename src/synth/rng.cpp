#include "synth/rng.h"

#include <cmath>

namespace hexllm::synth {

namespace {

constexpr int kLayers = NormalSampler::kLayers;
// Right edge of the base layer and the common area of every layer for 128 layers
// (Marsaglia & Tsang, "The Ziggurat Method for Generating Random Variables", 2000).
constexpr double kR = 3.442619855899;
constexpr double kV = 9.91256303526217e-3;

double density(double x) { return std::exp(-0.5 * x * x); }

struct Tables {
  double xd[kLayers + 1];
  float x[kLayers + 1];
  float ratio[kLayers];
  Tables() {
    // Layer 0 is the base strip plus the tail: its "width" V / f(R) makes its area V too.
    xd[0] = kV / density(kR);
    xd[1] = kR;
    for (int i = 1; i < kLayers - 1; ++i) xd[i + 1] = std::sqrt(-2.0 * std::log(kV / xd[i] + density(xd[i])));
    xd[kLayers] = 0.0;
    for (int i = 0; i <= kLayers; ++i) x[i] = static_cast<float>(xd[i]);
    for (int i = 0; i < kLayers; ++i) ratio[i] = static_cast<float>(xd[i + 1] / xd[i]);
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

NormalSampler::NormalSampler(uint64_t seed) : rng_(seed), x_(tables().x), ratio_(tables().ratio) {}

// Rejected by the rectangle test: the tail (layer 0) or the wedge under the curve.
// Returns false when the sample is rejected.
bool NormalSampler::slow_path(int layer, float u, float* out) {
  if (layer == 0) {
    double a, b;
    do {
      a = -std::log(rng_.uniform_pos()) / kR;
      b = -std::log(rng_.uniform_pos());
    } while (2.0 * b < a * a);
    *out = static_cast<float>(u < 0 ? -(kR + a) : kR + a);
    return true;
  }
  const Tables& t = tables();
  const double xx = static_cast<double>(u) * t.xd[layer];
  const double f_outer = density(t.xd[layer]), f_inner = density(t.xd[layer + 1]);
  const double y = f_outer + (1.0 - rng_.uniform_pos()) * (f_inner - f_outer);
  *out = static_cast<float>(xx);
  return y < density(xx);
}

}  // namespace hexllm::synth
