// A 128-bit digest of a stream of word blocks, for telling "the same content as last time"
// without keeping or re-reading that content. Four multiply-accumulate lanes take the words; the
// lanes are scrambled after every block, so the order of blocks counts; a final mix spreads every
// lane into both halves. Not cryptographic: for inputs no adversary chooses.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace hexllm {

class WordDigest {
 public:
  void add_block(const uint64_t* w, size_t n) {
    uint64_t a[4] = {acc_[0], acc_[1], acc_[2], acc_[3]};  // in registers across the loop
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (size_t l = 0; l < 4; ++l) take(a, l, w[i + l], kSecret[(i + l) & 7]);
    for (; i < n; ++i) take(a, i & 3, w[i], kSecret[i & 7]);
    for (size_t l = 0; l < 4; ++l) acc_[l] = (a[l] ^ (a[l] >> 47) ^ kSecret[l + 4]) * kPrime;
    words_ += n;
  }

  std::array<uint64_t, 2> finish() const {
    return {mix(acc_[0] + acc_[1] * kSecret[0] + acc_[2] * kSecret[1] + acc_[3] * kSecret[2] + words_),
            mix(acc_[3] + acc_[2] * kSecret[3] + acc_[1] * kSecret[4] + acc_[0] * kSecret[5] + ~words_)};
  }

 private:
  static void take(uint64_t* a, size_t lane, uint64_t word, uint64_t secret) {
    const uint64_t x = word ^ secret;
    a[lane] += (x & 0xffffffffull) * (x >> 32);
    a[lane ^ 1] += word;  // the word itself too: a product may lose it (a zero half)
  }
  static uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
  }
  static constexpr uint64_t kPrime = 0x9e3779b185ebca87ull;
  static constexpr uint64_t kSecret[8] = {0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull,
                                          0x1f67b3b7a4a44072ull, 0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull,
                                          0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull};
  std::array<uint64_t, 4> acc_ = {kSecret[6], kSecret[7], kPrime, ~kPrime};
  uint64_t words_ = 0;
};

}  // namespace hexllm
