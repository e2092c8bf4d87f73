// Token sampling: greedy, temperature, top-k, top-p, min-p, repetition penalty, seeded RNG.
// Order of the chain (llama.cpp's default): penalties -> top-k -> top-p -> min-p -> temperature
// -> draw. Temperature <= 0 means greedy (argmax, ties to the lowest id).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sampling/rng.h"

namespace hexllm::sampling {

struct SamplerParams {
  float temperature = 0.8f;
  int32_t top_k = 40;           // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int32_t repeat_last_n = 64;   // how many recent tokens the penalty looks at
  uint64_t seed = 0;
};

// Throws hexllm::Error naming the field when a value is out of range.
void validate(const SamplerParams& p);

class Sampler {
 public:
  Sampler(const SamplerParams& params, int32_t n_vocab);

  // Picks the next token from one row of logits (n_vocab values). Does not record it.
  int32_t sample(std::span<const float> logits);
  // The same pick from the ids of the best logits of the row, best first, ties by lower id (a
  // device's TOP_K), reading only those and the penalized ones: the row, just written by the
  // device, is not pulled through the host's caches. Falls back to the whole row when `best`
  // is shorter than this call needs or holds a NaN.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> best);
  // How many best ids sample(logits, best) may need: 0 when these params need the whole row
  // (top-k off).
  size_t best_ids_wanted() const;
  // Records a token (prompt or generated) for the repetition penalty.
  void accept(int32_t token);
  void reset();

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  // Sorted by logit descending, ties by lower id: every cut keeps a prefix.
  static bool by_logit(const Candidate& a, const Candidate& b);
  void penalize(std::span<const float> logits);
  // Candidates the cuts start from (1 greedy, else top-k; the whole vocabulary when off).
  size_t keep(size_t n_vocab) const;
  // Offers x to the best keep() so far (a heap whose front is the worst kept); `entry` is the
  // logit a newcomer must reach once it is full.
  void offer(Candidate x, size_t keep, float* entry);
  // Fills scratch_ with the first n_keep of `best` when the whole list is in by_logit order.
  bool take_in_order(std::span<const float> logits, std::span<const int32_t> best, size_t n_keep);
  // The pick from the best candidates in scratch_, sorted by_logit.
  int32_t draw();

  SamplerParams params_;
  int32_t n_vocab_;
  Rng rng_;
  std::deque<int32_t> recent_;
  // Reused across calls: no allocation per token once warmed up.
  std::vector<Candidate> scratch_;
  std::vector<double> probs_;
  std::vector<int32_t> penalized_;  // recent ids, sorted and distinct
  std::vector<float> penalized_logits_;
};

// Index of the largest value, the lowest index on ties.
int32_t argmax(std::span<const float> values);

}  // namespace hexllm::sampling
