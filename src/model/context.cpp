#include "model/context.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/fp16.h"
#include "model/graph_builder.h"

namespace hexllm::model {

namespace {

constexpr int64_t kKvPadding = 256;
constexpr uint16_t kF16Zero = 0x0000;
constexpr uint16_t kF16NegInf = 0xfc00;

// Query at position p sees cell j (holding position j) when j <= p and, for sliding-window
// layers, p - j < window.
void fill_mask(graph::Tensor* mask, int64_t pos0, int64_t window) {
  const int64_t n_kv = mask->ne[0], n = mask->ne[1];
  for (int64_t i = 0; i < n; ++i) {
    auto* row = static_cast<uint16_t*>(mask->at(0, i));
    const int64_t p = pos0 + i;
    for (int64_t j = 0; j < n_kv; ++j) {
      const bool visible = j <= p && (window <= 0 || p - j < window);
      row[j] = visible ? kF16Zero : kF16NegInf;
    }
  }
}

}  // namespace

int64_t padded_kv_length(int64_t n_past, int64_t n_ctx) {
  return std::min(n_ctx, (n_past + kKvPadding - 1) / kKvPadding * kKvPadding);
}

Context::Context(const Model& model, backend::Scheduler& scheduler, const ContextParams& params)
    : model_(model), scheduler_(scheduler), params_(params), kv_(model.hparams(), params.n_ctx, scheduler.primary()) {
  if (params.n_batch <= 0) fail("batch size must be positive (got %lld)", static_cast<long long>(params.n_batch));
}

std::span<const float> Context::last_logits() const {
  const size_t n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  if (logits_.size() < n_vocab) fail("no logits: nothing has been evaluated");
  return std::span<const float>(logits_).subspan(logits_.size() - n_vocab);
}

void Context::decode(std::span<const int32_t> tokens, bool all_logits) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) fail("cannot evaluate an empty batch of tokens");
  if (n_past_ + n > params_.n_ctx)
    fail("the context is full: %lld tokens already, %lld more requested, context size %lld (use -c to enlarge it)",
         static_cast<long long>(n_past_), static_cast<long long>(n), static_cast<long long>(params_.n_ctx));
  const int64_t n_vocab = model_.hparams().n_vocab;
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab)
      fail("token %lld has id %d, outside the vocabulary [0, %lld)", static_cast<long long>(i), tokens[i],
           static_cast<long long>(n_vocab));

  logits_.clear();
  for (int64_t start = 0; start < n; start += params_.n_batch) {
    const int64_t len = std::min(params_.n_batch, n - start);
    decode_chunk(tokens.subspan(static_cast<size_t>(start), static_cast<size_t>(len)), n_past_ + start, all_logits,
                 start + len == n);
  }
  n_past_ += n;
}

void Context::decode_chunk(std::span<const int32_t> tokens, int64_t pos0, bool all_logits, bool is_last_chunk) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  BatchShape shape;
  shape.n_tokens = n;
  shape.pos0 = pos0;
  shape.n_kv = padded_kv_length(pos0 + n, params_.n_ctx);
  shape.n_outputs = all_logits ? n : 1;  // a chunk before the last only fills the cache

  graph::Context ctx;
  graph::Graph gf;
  GraphBuilder builder(model_, kv_, shape, ctx, gf);
  graph::Tensor* out = build_forward(builder);

  scheduler_.primary().schedule(gf);
  const graph::MemoryPlan plan(gf);
  if (!compute_ || compute_->size() < plan.size())
    compute_ = scheduler_.primary().alloc_buffer(backend::MemoryKind::Compute, plan.size());
  plan.bind(compute_->data());

  const GraphInputs& in = builder.inputs();
  std::memcpy(in.tokens->data, tokens.data(), static_cast<size_t>(n) * sizeof(int32_t));
  auto* pos = static_cast<int32_t*>(in.positions->data);
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(pos0 + i);
  fill_mask(in.mask, pos0, 0);
  if (in.mask_swa != nullptr) fill_mask(in.mask_swa, pos0, model_.hparams().n_swa);
  if (in.out_ids != nullptr) *static_cast<int32_t*>(in.out_ids->data) = static_cast<int32_t>(n - 1);

  scheduler_.compute(gf);

  if (all_logits || is_last_chunk) {
    const auto* data = static_cast<const float*>(out->data);
    if (!all_logits) logits_.clear();
    logits_.insert(logits_.end(), data, data + out->n_elements());
  }
}

}  // namespace hexllm::model
