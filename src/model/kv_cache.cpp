#include "model/kv_cache.h"

#include "base/error.h"

namespace hexllm::model {

KvCache::KvCache(const HParams& hp, int64_t n_ctx, backend::Backend& backend) : n_ctx_(n_ctx) {
  if (n_ctx <= 0) fail("context size must be positive (got %lld)", static_cast<long long>(n_ctx));
  const size_t k_bytes = row_size(Type::F16, hp.n_embd_k_gqa()) * static_cast<size_t>(n_ctx);
  const size_t v_bytes = row_size(Type::F16, hp.n_embd_v_gqa()) * static_cast<size_t>(n_ctx);
  auto align = [](size_t n) { return (n + 127) / 128 * 128; };
  const size_t per_layer = align(k_bytes) + align(v_bytes);
  buffer_ = backend.alloc_buffer(backend::MemoryKind::Cache, per_layer * static_cast<size_t>(hp.n_layer));

  auto* base = static_cast<uint8_t*>(buffer_->data());
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    uint8_t* layer = base + per_layer * static_cast<size_t>(il);
    graph::Tensor* k = ctx_.new_tensor(Type::F16, {hp.n_embd_k_gqa(), n_ctx});
    graph::Tensor* v = ctx_.new_tensor(Type::F16, {hp.n_embd_v_gqa(), n_ctx});
    k->data = layer;
    v->data = layer + align(k_bytes);
    k->flags |= graph::kFlagCache;
    v->flags |= graph::kFlagCache;
    k->set_name("cache_k_l%lld", static_cast<long long>(il));
    v->set_name("cache_v_l%lld", static_cast<long long>(il));
    k_.push_back(k);
    v_.push_back(v);
  }
}

}  // namespace hexllm::model
