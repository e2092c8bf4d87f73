// TOP_K by selection: the k largest values of a stream, largest first, ties by lower index, in
// one pass that keeps the best k sorted. Used for whole rows (the MoE router) and for the
// workers' pieces of one long row (decode's logits), whose lists merge into the row's.
#pragma once

#include <stdint.h>

#include "htp/abi/reduce_params.h"

namespace hexllm::htp {

// Unsigned key with the order of the float: negatives flipped whole, positives above them.
inline uint32_t order_key(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u << 1) == 0) u = 0;  // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// The float of a key (the inverse of order_key; -0 comes back as +0).
inline float key_value(uint32_t key) {
  const uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// The best k so far: ascending keys (complemented: largest value first) and their indices.
struct topk_selection {
  uint32_t k = 0, have = 0;
  uint32_t key[HTP_TOPK_SELECT_MAX];
  int32_t at[HTP_TOPK_SELECT_MAX];

  // Offers x[0..n), whose indices are first, first + 1, ...: later than every index offered
  // before. An element enters only when strictly better than the k-th, so ties keep the lower
  // index. Once the list is full, blocks of 32 with nothing better are passed over by a
  // branch-free float test that vectorizes (a vocabulary row is mostly such blocks): better is
  // greater than the k-th value, or NaN, which orders above every number.
  void offer(const float* x, uint32_t n, uint32_t first) {
    constexpr uint32_t kBlock = 32;
    uint32_t i = 0;
    while (i < n) {
      const float worst = have == k ? key_value(~key[k - 1]) : 0.0f;
      if (have == k && worst == worst && i + kBlock <= n) {
        // The row was written by the lm-head while it streamed its weights: mostly out of the
        // caches by now. 2 KiB ahead took a piece from 77 to 51 us (76k logits, this VM).
        __builtin_prefetch(x + i + 512);
        __builtin_prefetch(x + i + 512 + 16);
        uint32_t any = 0;
        for (uint32_t j = 0; j < kBlock; ++j) any |= (uint32_t)!(x[i + j] <= worst);  // NaN: true
        if (any == 0) {
          i += kBlock;
          continue;
        }
      }
      const uint32_t end = i + kBlock < n ? i + kBlock : n;
      for (; i < end; ++i) insert(~order_key(x[i]), (int32_t)(first + i));
    }
  }

  void insert(uint32_t kk, int32_t index) {
    if (have == k && kk >= key[k - 1]) return;
    uint32_t j = have < k ? have++ : k - 1;
    for (; j > 0 && key[j - 1] > kk; --j) key[j] = key[j - 1], at[j] = at[j - 1];
    key[j] = kk, at[j] = index;
  }
};

}  // namespace hexllm::htp
