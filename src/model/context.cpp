#include "model/context.h"

#include <algorithm>
#include <cstring>

#include "base/clock.h"
#include "base/error.h"
#include "base/fp16.h"
#include "graph/ops.h"
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

// The batch position does not enter the graph (it reaches the device as input data), so the
// shape is the token count, the visible KV length and the rows of logits wanted.
struct Context::ShapedGraph {
  int64_t n_tokens = 0, n_kv = 0, n_outputs = 0;
  graph::Context ctx;
  graph::Graph gf;
  GraphInputs inputs;
  graph::Tensor* out = nullptr;
  graph::Tensor* best = nullptr;  // TOP_K of the last row, when wanted

  bool has_shape(const BatchShape& s) const {
    return n_tokens == s.n_tokens && n_kv == s.n_kv && n_outputs == s.n_outputs;
  }
};

int64_t padded_kv_length(int64_t n_past, int64_t n_ctx) {
  return std::min(n_ctx, (n_past + kKvPadding - 1) / kKvPadding * kKvPadding);
}

Context::Context(const Model& model, backend::Scheduler& scheduler, const ContextParams& params)
    : model_(model), scheduler_(scheduler), params_(params), kv_(model.hparams(), params.n_ctx, scheduler.primary()) {
  if (params.n_batch <= 0) fail("batch size must be positive (got %lld)", static_cast<long long>(params.n_batch));
}

Context::~Context() = default;

std::span<const float> Context::last_logits() const {
  const size_t n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  if (logits_view_.size() < n_vocab) fail("no logits: nothing has been evaluated");
  return logits_view_.subspan(logits_view_.size() - n_vocab);
}

void Context::rebuild_graph() { graph_.reset(); }

void Context::want_best_ids(int64_t n) {
  if (n < 0 || n > kMaxBestIds || n > model_.hparams().n_vocab) n = 0;
  if (n == n_best_) return;
  n_best_ = n;
  graph_.reset();  // the kept graph has the old TOP_K (or none)
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
  logits_view_ = {};
  best_view_ = {};
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

  const uint64_t t_build = now_ns();
  const bool reuse = graph_ != nullptr && graph_->has_shape(shape);
  if (!reuse) {
    graph_.reset();  // its tensors point into compute_, which may be replaced below
    auto g = std::make_unique<ShapedGraph>();
    g->n_tokens = shape.n_tokens, g->n_kv = shape.n_kv, g->n_outputs = shape.n_outputs;
    GraphBuilder builder(model_, kv_, shape, g->ctx, g->gf);
    g->out = build_forward(builder);
    g->inputs = builder.inputs();
    if (n_best_ > 0 && shape.n_outputs == 1) {
      g->best = graph::top_k(g->ctx, g->out, static_cast<int>(n_best_));
      g->best->flags |= graph::kFlagOutput;
      g->gf.expand(g->best);
    }
    scheduler_.primary().schedule(g->gf);  // its order decides what memory the plan may share
    const graph::MemoryPlan plan(g->gf);
    if (!compute_ || compute_->size() < plan.size())
      compute_ = scheduler_.primary().alloc_buffer(backend::MemoryKind::Compute, plan.size());
    plan.bind(compute_->data());
    g->gf.seal();  // from here on only the inputs' data changes (below)
    graph_ = std::move(g);
  }
  graph::Graph& gf = graph_->gf;
  gf.set_build_ns(reuse ? 0 : now_ns() - t_build);

  const GraphInputs& in = graph_->inputs;
  std::memcpy(in.tokens->data, tokens.data(), static_cast<size_t>(n) * sizeof(int32_t));
  auto* pos = static_cast<int32_t*>(in.positions->data);
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(pos0 + i);
  fill_mask(in.mask, pos0, 0);
  if (in.mask_swa != nullptr) fill_mask(in.mask_swa, pos0, model_.hparams().n_swa);
  if (in.out_ids != nullptr) *static_cast<int32_t*>(in.out_ids->data) = static_cast<int32_t>(n - 1);

  scheduler_.compute(gf);

  if (all_logits || is_last_chunk) {
    const graph::Tensor* out = graph_->out;
    const auto* data = static_cast<const float*>(out->data);
    const size_t count = static_cast<size_t>(out->n_elements());
    if (all_logits) {
      logits_.insert(logits_.end(), data, data + count);
      logits_view_ = logits_;
    } else {
      logits_view_ = std::span<const float>(data, count);  // read in place: a vocabulary row is large
      if (graph_->best != nullptr)
        best_view_ = std::span<const int32_t>(static_cast<const int32_t*>(graph_->best->data),
                                              static_cast<size_t>(graph_->best->n_elements()));
    }
  }
}

}  // namespace hexllm::model
