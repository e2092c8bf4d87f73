#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace hexllm::sampling {

void validate(const SamplerParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
    fail("--temp must be a finite value >= 0 (got %g)", p.temperature);
  if (!std::isfinite(p.top_p) || p.top_p <= 0.0f || p.top_p > 1.0f)
    fail("--top-p must be in (0, 1] (got %g)", p.top_p);
  if (!std::isfinite(p.min_p) || p.min_p < 0.0f || p.min_p > 1.0f)
    fail("--min-p must be in [0, 1] (got %g)", p.min_p);
  if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0.0f)
    fail("--repeat-penalty must be > 0 (got %g)", p.repeat_penalty);
  if (p.repeat_last_n < 0) fail("--repeat-last-n must be >= 0 (got %d)", p.repeat_last_n);
}

namespace {

// The first index in [from, end) whose value may pass `> floor` (kStrict) or `>= floor`; whole
// blocks that cannot are passed over by a branch-free test that vectorizes. `end` when none can
// (NaN never passes).
template <bool kStrict>
size_t skip_below(std::span<const float> v, size_t from, size_t end, float floor) {
  constexpr size_t kBlock = 32;
  size_t i = from;
  while (i + kBlock <= end) {
    int any = 0;
    for (size_t j = 0; j < kBlock; ++j) any |= kStrict ? v[i + j] > floor : v[i + j] >= floor;
    if (any != 0) break;
    i += kBlock;
  }
  return i;
}

}  // namespace

int32_t argmax(std::span<const float> values) {
  size_t best = 0;
  for (size_t i = 1; (i = skip_below<true>(values, i, values.size(), values[best])) < values.size(); ++i)
    if (values[i] > values[best]) best = i;
  return static_cast<int32_t>(best);
}

Sampler::Sampler(const SamplerParams& params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
  validate(params_);
  if (n_vocab_ <= 0) fail("sampler: n_vocab must be positive (got %d)", n_vocab_);
}

void Sampler::reset() {
  recent_.clear();
  rng_.reseed(params_.seed);
}

void Sampler::accept(int32_t token) {
  if (params_.repeat_last_n == 0) return;
  recent_.push_back(token);
  while (recent_.size() > static_cast<size_t>(params_.repeat_last_n)) recent_.pop_front();
}

// CTRL-style penalty, once per distinct recent token: a positive logit is divided, a negative
// one multiplied. Leaves the penalized ids sorted in penalized_ and their values beside them.
void Sampler::penalize(std::span<const float> logits) {
  penalized_.clear();
  penalized_logits_.clear();
  if (params_.repeat_penalty == 1.0f || recent_.empty()) return;
  penalized_.assign(recent_.begin(), recent_.end());
  std::sort(penalized_.begin(), penalized_.end());
  penalized_.erase(std::unique(penalized_.begin(), penalized_.end()), penalized_.end());
  std::erase_if(penalized_, [&](int32_t t) { return t < 0 || t >= n_vocab_; });
  for (int32_t t : penalized_) {
    const float l = logits[static_cast<size_t>(t)];
    penalized_logits_.push_back(l > 0.0f ? l / params_.repeat_penalty : l * params_.repeat_penalty);
  }
}

bool Sampler::by_logit(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

size_t Sampler::keep(size_t n_vocab) const {
  if (params_.temperature <= 0.0f) return 1;
  return params_.top_k > 0 ? std::min(n_vocab, static_cast<size_t>(params_.top_k)) : n_vocab;
}

// The keep() best in one pass, through a heap whose front is the worst kept: a logit below the
// front's is passed over with one comparison, and no candidate list of the whole vocabulary is
// built. Penalized ids are offered with their penalized values.
void Sampler::offer(Candidate x, size_t keep, float* entry) {
  std::vector<Candidate>& c = scratch_;
  if (c.size() < keep) {
    c.push_back(x);
    std::push_heap(c.begin(), c.end(), by_logit);
    if (c.size() == keep) *entry = c.front().logit;
  } else if (by_logit(x, c.front())) {
    std::pop_heap(c.begin(), c.end(), by_logit);
    c.back() = x;
    std::push_heap(c.begin(), c.end(), by_logit);
    *entry = c.front().logit;
  }
}

size_t Sampler::best_ids_wanted() const {
  const bool penalty = params_.repeat_penalty != 1.0f && params_.repeat_last_n > 0;
  if (params_.temperature > 0.0f && params_.top_k <= 0) return 0;
  return keep(static_cast<size_t>(n_vocab_)) + (penalty ? static_cast<size_t>(params_.repeat_last_n) : 0);
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.size() != static_cast<size_t>(n_vocab_))
    fail("sampler: got %zu logits, expected n_vocab = %d", logits.size(), n_vocab_);

  // Greedy without a penalty: the first maximum, straight from the logits.
  if (params_.temperature <= 0.0f && (params_.repeat_penalty == 1.0f || recent_.empty())) return argmax(logits);
  penalize(logits);

  const size_t n_keep = keep(logits.size());
  scratch_.clear();
  float entry = -INFINITY;  // a logit below this cannot enter the full heap
  size_t id = 0;
  for (size_t k = 0; k <= penalized_.size(); ++k) {
    const size_t end = k < penalized_.size() ? static_cast<size_t>(penalized_[k]) : logits.size();
    for (; (id = skip_below<false>(logits, id, end, entry)) < end; ++id)
      if (logits[id] >= entry) offer({static_cast<int32_t>(id), logits[id]}, n_keep, &entry);
    if (k < penalized_.size()) offer({penalized_[k], penalized_logits_[k]}, n_keep, &entry), id = end + 1;
  }
  if (scratch_.empty()) fail("sampler: every one of the %zu logits is NaN", logits.size());
  std::sort_heap(scratch_.begin(), scratch_.end(), by_logit);
  return draw();
}

// The best keep() of the penalized row are among the best keep() + |penalized| of the raw row
// (the ranks above an unpenalized id are unpenalized ids, fewer than keep(), or penalized ones),
// so offering those that are not penalized, then the penalized ones, fills the same heap.
int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> best) {
  if (logits.size() != static_cast<size_t>(n_vocab_))
    fail("sampler: got %zu logits, expected n_vocab = %d", logits.size(), n_vocab_);
  if (best_ids_wanted() == 0) return sample(logits);
  for (int32_t id : best) {
    if (id < 0 || id >= n_vocab_) fail("sampler: best id %d is outside the vocabulary [0, %d)", id, n_vocab_);
    if (std::isnan(logits[static_cast<size_t>(id)])) return sample(logits);  // NaN ranks first on the device
  }

  if (params_.temperature <= 0.0f && (params_.repeat_penalty == 1.0f || recent_.empty()))
    return best.empty() ? sample(logits) : best.front();
  penalize(logits);
  const size_t n_keep = keep(logits.size());
  if (best.size() < std::min(logits.size(), n_keep + penalized_.size())) return sample(logits);
  if (penalized_.empty() && take_in_order(logits, best, n_keep)) return draw();
  scratch_.clear();
  float entry = -INFINITY;
  for (int32_t id : best)
    if (!std::binary_search(penalized_.begin(), penalized_.end(), id))
      offer({id, logits[static_cast<size_t>(id)]}, n_keep, &entry);
  for (size_t k = 0; k < penalized_.size(); ++k) offer({penalized_[k], penalized_logits_[k]}, n_keep, &entry);
  std::sort_heap(scratch_.begin(), scratch_.end(), by_logit);
  return draw();
}

// A device's TOP_K lists its ids best first: with nothing penalized, the first n_keep are then
// the candidates in order, and no heap is built (this runs once per token, on cold caches).
// False when `best` is out of order.
bool Sampler::take_in_order(std::span<const float> logits, std::span<const int32_t> best, size_t n_keep) {
  scratch_.clear();
  Candidate prev{};
  for (size_t i = 0; i < best.size(); ++i) {
    const Candidate c{best[i], logits[static_cast<size_t>(best[i])]};
    if (i > 0 && !by_logit(prev, c)) return false;
    if (i < n_keep) scratch_.push_back(c);
    prev = c;
  }
  return true;
}

int32_t Sampler::draw() {
  std::vector<Candidate>& c = scratch_;
  if (params_.temperature <= 0.0f) return c.front().id;

  // Probabilities at temperature 1 decide the top-p and min-p cuts (as llama.cpp does).
  std::vector<double>& p = probs_;
  p.resize(c.size());
  auto softmax = [&](double inv_temp) {
    double sum = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
      p[i] = std::exp(static_cast<double>(c[i].logit - c[0].logit) * inv_temp);
      sum += p[i];
    }
    for (double& v : p) v /= sum;
  };
  softmax(1.0);

  if (params_.top_p < 1.0f) {
    double cum = 0.0;
    size_t n = 0;
    while (n < c.size()) {
      cum += p[n++];
      if (cum >= params_.top_p) break;
    }
    c.resize(n);
    p.resize(n);
  }
  if (params_.min_p > 0.0f) {
    const double floor = p[0] * params_.min_p;
    size_t n = 1;
    while (n < c.size() && p[n] >= floor) ++n;
    c.resize(n);
    p.resize(n);
  }

  softmax(1.0 / params_.temperature);
  const double r = rng_.uniform();
  double cum = 0.0;
  for (size_t i = 0; i < c.size(); ++i) {
    cum += p[i];
    if (r < cum) return c[i].id;
  }
  return c.back().id;
}

}  // namespace hexllm::sampling
