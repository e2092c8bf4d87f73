// Deterministic random streams for weight generation: xoshiro256** seeded through splitmix64,
// and a ziggurat normal sampler (Marsaglia & Tsang, 128 layers). Integer streams are the same
// everywhere; the rare slow-path samples call exp/log, so bit-identical models across machines
// also assume the same libm (glibc here).
#pragma once

#include <cstdint>
#include <string_view>

namespace hexllm::synth {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Order-sensitive combination of two 64-bit keys.
inline uint64_t mix_keys(uint64_t a, uint64_t b) {
  return splitmix64(a ^ splitmix64(b ^ 0x6a09e667f3bcc909ull));
}

// FNV-1a: stable across platforms and standard libraries (std::hash is not).
inline uint64_t hash_name(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& s : s_) {
      seed = splitmix64(seed);
      s = seed;
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in (0, 1]: never 0, so log() is safe.
  double uniform_pos() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Standard normal samples. Each 32-bit half of a 64-bit draw gives a layer (low 7 bits) and a
// signed 24-bit uniform (high bits); about 99% of samples need nothing more. Float precision is
// all the weights need.
class NormalSampler {
 public:
  explicit NormalSampler(uint64_t seed);

  // n samples of N(mean, std^2).
  void fill(float* dst, int64_t n, float mean, float std) {
    int64_t i = 0;
    while (i < n) {
      const uint64_t r = rng_.next();
      for (int half = 0; half < 2 && i < n; ++half) {
        const uint32_t h = static_cast<uint32_t>(r >> (32 * half));
        const int layer = static_cast<int>(h & (kLayers - 1));
        const float u = static_cast<float>(static_cast<int32_t>(h) >> 8) * 0x1.0p-23f;  // [-1, 1)
        float v;
        if (u < ratio_[layer] && u > -ratio_[layer]) {
          v = u * x_[layer];
        } else if (!slow_path(layer, u, &v)) {
          continue;  // rejected: this half yields no sample
        }
        dst[i++] = mean + std * v;
      }
    }
  }

  static constexpr int kLayers = 128;

 private:
  bool slow_path(int layer, float u, float* out);
  Xoshiro256 rng_;
  const float* x_;      // layer edges, x_[0] = V / f(R) ... x_[128] = 0
  const float* ratio_;  // x_[i+1] / x_[i]: the fast-accept bound of layer i
};

}  // namespace hexllm::synth
