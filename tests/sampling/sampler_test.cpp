// Sampler behaviour against hand-derived distributions and cuts.
#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"

namespace hexllm::sampling {
namespace {

SamplerParams plain(float temp) {
  SamplerParams p;
  p.temperature = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  p.seed = 42;
  return p;
}

// Logits whose softmax is exactly the given probabilities.
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

std::vector<double> frequencies(Sampler& s, const std::vector<float>& logits, int n) {
  std::vector<double> f(logits.size(), 0.0);
  for (int i = 0; i < n; ++i) f[static_cast<size_t>(s.sample(logits))] += 1.0 / n;
  return f;
}

TEST(Sampler, GreedyPicksArgmaxAndLowestIdOnTies) {
  Sampler s(plain(0.0f), 5);
  EXPECT_EQ(s.sample(std::vector<float>{0.1f, 3.0f, -1.0f, 3.0f, 2.9f}), 1);
  EXPECT_EQ(argmax(std::vector<float>{2.0f, 2.0f}), 0);
}

TEST(Sampler, ArgmaxOverManyValuesFindsTheFirstMaximumAnywhere) {
  for (size_t at : {size_t{0}, size_t{31}, size_t{32}, size_t{640}, size_t{999}}) {
    std::vector<float> v(1000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) * 0.01f;
    v[at] = 5.0f;
    if (at + 40 < v.size()) v[at + 40] = 5.0f;  // a later tie loses
    EXPECT_EQ(argmax(v), static_cast<int32_t>(at));
  }
}

TEST(Sampler, AllNaNLogitsAreAnError) {
  Sampler s(plain(1.0f), 64);
  EXPECT_THROW(s.sample(std::vector<float>(64, std::nanf(""))), Error);
}

TEST(Sampler, TemperatureOneFollowsSoftmax) {
  Sampler s(plain(1.0f), 3);
  const auto f = frequencies(s, logits_of({0.5, 0.3, 0.2}), 200000);
  EXPECT_NEAR(f[0], 0.5, 0.01);
  EXPECT_NEAR(f[1], 0.3, 0.01);
  EXPECT_NEAR(f[2], 0.2, 0.01);
}

TEST(Sampler, TemperatureHalfSquaresTheOdds) {
  // p_i^(1/T) normalized with T = 0.5: 0.25, 0.09, 0.04 over 0.38.
  Sampler s(plain(0.5f), 3);
  const auto f = frequencies(s, logits_of({0.5, 0.3, 0.2}), 200000);
  EXPECT_NEAR(f[0], 0.25 / 0.38, 0.01);
  EXPECT_NEAR(f[1], 0.09 / 0.38, 0.01);
  EXPECT_NEAR(f[2], 0.04 / 0.38, 0.01);
}

TEST(Sampler, TopKKeepsTheLargest) {
  SamplerParams p = plain(1.0f);
  p.top_k = 2;
  Sampler s(p, 3);
  const auto f = frequencies(s, logits_of({0.5, 0.3, 0.2}), 100000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 0.5 / 0.8, 0.01);
}

// Over a large vocabulary with ties and a penalized favourite: exactly the k best survive,
// ties going to the lower ids, and penalized values are the ones compared.
TEST(Sampler, TopKOverALargeVocabularyWithTiesAndPenalties) {
  std::vector<float> logits(5000, -4.0f);
  logits[4000] = 9.0f;                             // the favourite, penalized to 9 / 3 = 3
  for (int id : {4999, 3000, 17, 2500}) logits[static_cast<size_t>(id)] = 2.0f;  // four tied
  logits[1234] = 2.5f;
  SamplerParams p = plain(1.0f);
  p.top_k = 4;
  p.repeat_penalty = 3.0f;
  Sampler s(p, 5000);
  s.accept(4000);
  const auto f = frequencies(s, logits, 40000);
  // Kept: 4000 (3.0), 1234 (2.5), and of the ties at 2.0 the two lowest ids, 17 and 2500.
  const double z = std::exp(3.0) + std::exp(2.5) + 2 * std::exp(2.0);
  EXPECT_NEAR(f[4000], std::exp(3.0) / z, 0.01);
  EXPECT_NEAR(f[1234], std::exp(2.5) / z, 0.01);
  EXPECT_NEAR(f[17], std::exp(2.0) / z, 0.01);
  EXPECT_NEAR(f[2500], std::exp(2.0) / z, 0.01);
  EXPECT_EQ(f[3000] + f[4999], 0.0);
}

// The ids of the best logits, best first, ties by lower id, by a full sort (a device's TOP_K).
std::vector<int32_t> best_ids(const std::vector<float>& logits, size_t k) {
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  ids.resize(std::min(k, ids.size()));
  return ids;
}

TEST(Sampler, BestIdsWantedFollowTheParams) {
  SamplerParams p = plain(0.0f);
  EXPECT_EQ(Sampler(p, 1000).best_ids_wanted(), 1u);
  p = plain(0.8f);
  EXPECT_EQ(Sampler(p, 1000).best_ids_wanted(), 0u);  // top-k off: the whole row
  p.top_k = 40;
  EXPECT_EQ(Sampler(p, 1000).best_ids_wanted(), 40u);
  p.repeat_penalty = 1.1f;
  p.repeat_last_n = 64;
  EXPECT_EQ(Sampler(p, 1000).best_ids_wanted(), 104u);
  p.top_k = 5000;
  EXPECT_EQ(Sampler(p, 1000).best_ids_wanted(), 1064u);  // top-k clipped to the vocabulary
}

// Picking from the best ids gives the token the whole row gives, step after step (same seeds),
// with ties, negative logits, penalties above and below 1, and the penalized tokens among the
// best.
TEST(Sampler, BestIdsGiveThePicksOfTheWholeRow) {
  struct Case {
    float temp;
    int32_t top_k;
    float top_p, min_p, penalty;
    int32_t last_n;
  };
  const Case cases[] = {{0.0f, 0, 1.0f, 0.0f, 1.0f, 64},  {0.0f, 0, 1.0f, 0.0f, 1.5f, 8},
                        {0.8f, 40, 0.95f, 0.05f, 1.0f, 64}, {1.0f, 5, 1.0f, 0.0f, 1.3f, 8},
                        {1.2f, 12, 0.9f, 0.0f, 0.7f, 4},    {0.5f, 1, 1.0f, 0.0f, 2.0f, 16}};
  const int32_t n_vocab = 20000;
  uint64_t state = 7;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  for (const Case& c : cases) {
    SamplerParams p = plain(c.temp);
    p.top_k = c.top_k, p.top_p = c.top_p, p.min_p = c.min_p, p.repeat_penalty = c.penalty, p.repeat_last_n = c.last_n;
    Sampler whole(p, n_vocab), from_best(p, n_vocab);
    const size_t k = from_best.best_ids_wanted();
    ASSERT_GT(k, 0u);
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    for (int step = 0; step < 120; ++step) {
      for (float& l : logits) l = static_cast<float>(next() % 4000) / 400.0f - 6.0f;  // ties: 4000 levels
      for (int i = 0; i < 6; ++i) logits[next() % n_vocab] = 12.0f;                    // a few at the top
      const int32_t want = whole.sample(logits);
      const int32_t got = from_best.sample(logits, best_ids(logits, k));
      ASSERT_EQ(got, want) << "temp " << c.temp << " top_k " << c.top_k << " penalty " << c.penalty << " step " << step;
      whole.accept(want);
      from_best.accept(want);
      if (step % 3 == 0) {  // put recent tokens at the top, where the penalty reorders the best
        const int32_t recent = best_ids(logits, 1).front();
        whole.accept(recent);
        from_best.accept(recent);
      }
    }
  }
}

// A device lists its best ids best first, which lets the sampler skip its heap; a list in any
// other order (here reversed, or two neighbours swapped) still gives the whole row's pick.
TEST(Sampler, BestIdsInAnyOrderGiveThePicksOfTheWholeRow) {
  SamplerParams p = plain(0.8f);
  p.top_k = 40, p.top_p = 0.95f, p.min_p = 0.05f;
  const int32_t n_vocab = 3000;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  for (int32_t i = 0; i < n_vocab; ++i) logits[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000) / 150.0f;
  for (int order = 0; order < 3; ++order) {
    Sampler whole(p, n_vocab), from_best(p, n_vocab);
    for (int step = 0; step < 50; ++step) {
      std::vector<int32_t> best = best_ids(logits, from_best.best_ids_wanted());
      if (order == 1) std::reverse(best.begin(), best.end());
      if (order == 2) std::swap(best[10], best[11]);
      ASSERT_EQ(from_best.sample(logits, best), whole.sample(logits)) << "order " << order << " step " << step;
    }
  }
}

// Too few best ids, or a NaN among them: the whole row decides, never the list.
TEST(Sampler, BestIdsThatCannotDecideFallBackToTheWholeRow) {
  std::vector<float> logits(5000, 0.0f);
  logits[4321] = 5.0f;
  logits[10] = 4.0f;
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p, 5000);
  s.accept(4321);  // penalized to 2.5: 10 wins, which a list of 1 id cannot know
  EXPECT_EQ(s.sample(logits, std::vector<int32_t>{4321}), 10);
  Sampler greedy(plain(0.0f), 5000);
  logits[7] = NAN;  // ranks first on the device; the host's argmax never picks a NaN
  EXPECT_EQ(greedy.sample(logits, std::vector<int32_t>{7}), 4321);
  EXPECT_THROW(greedy.sample(logits, std::vector<int32_t>{5000}), Error);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  // Cumulative 0.5, 0.8, 1.0: top-p 0.6 keeps the first two.
  SamplerParams p = plain(1.0f);
  p.top_p = 0.6f;
  Sampler s(p, 3);
  const auto f = frequencies(s, logits_of({0.5, 0.3, 0.2}), 100000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.3 / 0.8, 0.01);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheBest) {
  // min-p 0.5: keep p >= 0.25, i.e. tokens 0 and 1.
  SamplerParams p = plain(1.0f);
  p.min_p = 0.5f;
  Sampler s(p, 3);
  const auto f = frequencies(s, logits_of({0.5, 0.3, 0.2}), 100000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.3);
}

TEST(Sampler, RepeatPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p, 3);
  // Token 0 (4.0) is recent: 4 / 2 = 2 < 3, so token 1 wins.
  s.accept(0);
  EXPECT_EQ(s.sample(std::vector<float>{4.0f, 3.0f, -1.0f}), 1);
  // Token 2 (-1) recent too: -2, still last; token 1 still best.
  s.accept(2);
  EXPECT_EQ(s.sample(std::vector<float>{4.0f, 3.0f, -1.0f}), 1);
}

TEST(Sampler, PenaltyForgetsTokensOlderThanTheWindow) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 1;
  Sampler s(p, 3);
  s.accept(0);
  s.accept(2);  // pushes 0 out of the one-token window
  EXPECT_EQ(s.sample(std::vector<float>{4.0f, 3.0f, -1.0f}), 0);
}

TEST(Sampler, SameSeedSameTokens) {
  const std::vector<float> l = logits_of({0.25, 0.25, 0.25, 0.25});
  Sampler a(plain(1.0f), 4), b(plain(1.0f), 4);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.sample(l), b.sample(l));
  a.reset();
  Sampler c(plain(1.0f), 4);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.sample(l), c.sample(l));
}

TEST(Sampler, RejectsInvalidParametersByName) {
  SamplerParams p = plain(1.0f);
  p.top_p = 1.5f;
  try {
    Sampler s(p, 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--top-p"), std::string::npos);
  }
  p = plain(-1.0f);
  EXPECT_THROW(Sampler(p, 3), Error);
  p = plain(1.0f);
  p.repeat_penalty = 0.0f;
  EXPECT_THROW(Sampler(p, 3), Error);
}

TEST(Sampler, RejectsWrongLogitCount) {
  Sampler s(plain(0.0f), 3);
  EXPECT_THROW(s.sample(std::vector<float>{1.0f, 2.0f}), Error);
}

}  // namespace
}  // namespace hexllm::sampling
