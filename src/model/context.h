// An inference context: the KV cache of one sequence, the compute memory, and evaluation of
// token batches on a scheduler's backends.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "backend/scheduler.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace hexllm::model {

struct ContextParams {
  int64_t n_ctx = 4096;   // KV cells (positions) available
  int64_t n_batch = 512;  // tokens per graph; longer inputs are evaluated in chunks
};

class Context {
 public:
  Context(const Model& model, backend::Scheduler& scheduler, const ContextParams& params);
  ~Context();

  // Evaluates `tokens` at the next positions. With all_logits, keeps one row of logits per
  // token, else only the last token's. Throws hexllm::Error (context full, bad token id,
  // backend failure); on error the context keeps its previous state.
  void decode(std::span<const int32_t> tokens, bool all_logits);

  // Logits of the last decode: rows of n_vocab values, valid until the next decode.
  std::span<const float> logits() const { return logits_view_; }
  std::span<const float> last_logits() const;
  // With n > 0, a decode that keeps only the last row also finds the ids of its n largest
  // logits, largest first, ties by lower id (a TOP_K in the graph: on the device, next to the
  // lm-head), for a sampler that needs no more than those (sampling::Sampler::best_ids_wanted).
  // Above kMaxBestIds, or 0: none. Takes effect from the next decode.
  void want_best_ids(int64_t n);
  // The ids of the last decode, or empty (none wanted, or all rows kept).
  std::span<const int32_t> last_best_ids() const { return best_view_; }
  // The device selects up to this many in one streaming pass (htp/abi/reduce_params.h).
  static constexpr int64_t kMaxBestIds = 64;
  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return params_.n_ctx; }
  void reset() { n_past_ = 0; }
  // The next decode builds its graph anew, as a backend schedules it now (after a change of the
  // backend's scheduling; otherwise the kept graph serves every batch of its shape).
  void rebuild_graph();
  const KvCache& kv_cache() const { return kv_; }

 private:
  void decode_chunk(std::span<const int32_t> tokens, int64_t pos0, bool all_logits, bool is_last_chunk);

  // The graph of the last batch shape, bound to compute_. Every decode step within one KV
  // padding step has the same shape, so it is built and planned once and only its inputs change.
  struct ShapedGraph;
  std::unique_ptr<ShapedGraph> graph_;

  const Model& model_;
  backend::Scheduler& scheduler_;
  ContextParams params_;
  KvCache kv_;
  std::unique_ptr<backend::Buffer> compute_;
  std::vector<float> logits_;           // every row, when all were wanted
  std::span<const float> logits_view_;  // logits_, or the last row in the compute memory
  int64_t n_best_ = 0;
  std::span<const int32_t> best_view_;  // the last row's best ids, in the compute memory
  int64_t n_past_ = 0;
};

// KV cells an attention over positions [0, n_past) must see, rounded up so that consecutive
// decode steps build identical graphs (the mask hides the padding).
int64_t padded_kv_length(int64_t n_past, int64_t n_ctx);

}  // namespace hexllm::model
