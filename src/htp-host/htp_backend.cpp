#include "htp-host/htp_backend.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "graph/graph.h"
#include "htp-host/op_builders.h"
#include "htp/abi/tiles.h"
#include "htp/vec/repack.h"

namespace hexllm::htp_host {

namespace {

bool fits_u32(int64_t v) { return v >= 0 && v <= static_cast<int64_t>(UINT32_MAX); }

Region region_of(backend::MemoryKind kind) {
  switch (kind) {
    case backend::MemoryKind::Weights: return Region::Weights;
    case backend::MemoryKind::Cache: return Region::Cache;
    case backend::MemoryKind::Compute: return Region::Compute;
  }
  return Region::Compute;
}

// ne/nb/type of a graph tensor as device fields; false when a value exceeds 32 bits.
bool shape_of(const graph::Tensor& t, htp_tensor* out) {
  for (int d = 0; d < 4; ++d) {
    if (!fits_u32(t.ne[d]) || t.nb[d] > UINT32_MAX) return false;
    out->ne[d] = static_cast<uint32_t>(t.ne[d]);
    out->nb[d] = static_cast<uint32_t>(t.nb[d]);
  }
  out->type = static_cast<uint32_t>(t.type);
  return true;
}

// Banks a small window can hold: each pinned region's banks at most 1/16 of the window.
Pool::BankSizes bank_sizes_for(uint64_t window) {
  auto part = [&](uint64_t cap) { return std::clamp<uint64_t>(window / 16 / (64u << 10) * (64u << 10), 64u << 10, cap); };
  Pool::BankSizes s;
  s.cache = part(64ull << 20);
  s.compute = part(64ull << 20);
  s.messages = part(4ull << 20);
  return s;
}

// Load order for the weight banks: the layer order the graph reads them in. "blk.N." tensors by
// N; tensors before the first block (embeddings, rope factors) first, "output*" (norm, head)
// last, so that one batch of layers needs few banks.
int64_t layer_key(const graph::Tensor& t, int64_t before_blocks) {
  int layer = 0;
  if (std::sscanf(t.name, "blk.%d.", &layer) == 1) return layer;
  if (std::strncmp(t.name, "output", 6) == 0) return INT64_MAX;
  return before_blocks;
}

}  // namespace

uint64_t parse_window(const std::string& text, const char* flag) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  double mult = 1;
  if (end != nullptr && (*end == 'K' || *end == 'k')) mult = 1ull << 10, ++end;
  else if (end != nullptr && (*end == 'M' || *end == 'm')) mult = 1ull << 20, ++end;
  else if (end != nullptr && (*end == 'G' || *end == 'g')) mult = 1ull << 30, ++end;
  else if (end != nullptr && (*end == 'T' || *end == 't')) mult = 1ull << 40, ++end;
  if (end != nullptr && (*end == 'i' || *end == 'B')) ++end;
  if (end != nullptr && *end == 'B') ++end;
  const double bytes = v * mult;
  if (text.empty() || end == text.c_str() || *end != '\0' || !(bytes >= (64u << 10)) || bytes > (1ull << 40))
    fail("%s: '%s' is not a window size (e.g. 3.5G, 512M; between 64K and 1T)", flag, text.c_str());
  return static_cast<uint64_t>(bytes) / Pool::kAlign * Pool::kAlign;
}

uint32_t parse_size(const std::string& text, const char* flag) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  uint64_t mult = 1;
  if (end != nullptr && (*end == 'K' || *end == 'k')) mult = 1ull << 10, ++end;
  else if (end != nullptr && (*end == 'M' || *end == 'm')) mult = 1ull << 20, ++end;
  else if (end != nullptr && (*end == 'G' || *end == 'g')) mult = 1ull << 30, ++end;
  if (end != nullptr && (*end == 'i' || *end == 'B')) ++end;
  if (end != nullptr && *end == 'B') ++end;
  if (text.empty() || end == text.c_str() || *end != '\0' || v == 0 || v * mult > UINT32_MAX)
    fail("%s: '%s' is not a size (e.g. 8M, 256K or a byte count below 4 GiB)", flag, text.c_str());
  return static_cast<uint32_t>(v * mult);
}

uint32_t parse_dma_mode(const std::string& text) {
  if (text == "async") return HTP_DMA_ASYNC;
  if (text == "inline") return HTP_DMA_INLINE;
  if (text == "zero-copy") return HTP_DMA_ZERO_COPY;
  fail("--htp-dma: '%s' is not a DMA mode (async, inline, zero-copy)", text.c_str());
}

HtpBackend::HtpBackend(const HtpOptions& opts) : opts_(opts), pool_(bank_sizes_for(opts.window_bytes)) {
  SessionOptions so;
  so.n_threads = std::clamp<uint32_t>(opts.n_threads, 1, HTP_MAX_THREADS);
  so.vtcm_bytes = opts.vtcm_bytes;
  so.dma_mode = opts.dma_mode;
  so.window_bytes = opts.window_bytes;
  so.device_path = opts.device_path;
  so.target = opts.target;
  if (opts.target != "host" && opts.transport != "process")
    fail("--htp-target %s runs the device as its own process: it needs --htp-transport process", opts.target.c_str());
  so.timeout_s = opts.timeout_s;
  if (opts.transport == "inproc") transport_ = make_inproc_transport(pool_, so);
  else if (opts.transport == "process") transport_ = make_process_transport(pool_, so);
  else fail("--htp-transport: '%s' is not a transport (inproc, process)", opts.transport.c_str());
  // Up front, so that the window's pinned bytes stay put while batches are cut.
  message_ = pool_.allocate(Region::Messages, bank_sizes_for(opts.window_bytes).messages / 2);
}

HtpBackend::~HtpBackend() {
  if (opts_.profile && !profile_.empty()) profile_.print(stderr);
}

std::unique_ptr<backend::Buffer> HtpBackend::alloc_buffer(backend::MemoryKind kind, size_t bytes) {
  return pool_.allocate(region_of(kind), bytes);
}

void HtpBackend::load_weights(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
                               const backend::WeightCopied& copied) {
  struct Plan {
    graph::Tensor* t;
    htp_tensor d;
    uint32_t tile;  // HTP_TILE_INVALID: copied as is
    size_t slice_bytes, bytes;
    int64_t key;
  };
  std::vector<Plan> plans;
  size_t total = 0, done = 0, device_total = 0;
  int64_t before_blocks = -1;
  for (graph::Tensor* t : weights) {
    if (weights_.count(t) != 0) continue;
    Plan p{t, {}, htp::HTP_TILE_INVALID, 0, 0, 0};
    if (!shape_of(*t, &p.d)) fail("HTP: weight '%s' has a dimension or stride beyond 32 bits", t->name);
    const bool matrix = t->ne[1] > 1 && t->is_contiguous();
    const uint32_t tile = opts_.repack && matrix ? htp::htp_tile_for(t->type) : htp::HTP_TILE_INVALID;
    if (tile != htp::HTP_TILE_INVALID && htp::htp_tile_k_ok(tile, p.d.ne[0])) p.tile = tile;
    const uint64_t slices = static_cast<uint64_t>(t->ne[2] * t->ne[3]);
    p.slice_bytes = p.tile != htp::HTP_TILE_INVALID ? htp::htp_tiled_size(p.tile, p.d.ne[1], p.d.ne[0]) : t->nb[2];
    p.bytes = p.tile != htp::HTP_TILE_INVALID ? p.slice_bytes * slices : t->n_bytes();
    if (p.bytes > opts_.window_bytes)
      fail("HTP: weight '%s' (%s, %lld x %lld x %lld x %lld) needs %llu bytes on the device, more than the device window "
           "of %llu bytes (--htp-window): the window must hold the largest tensor",
           t->name, type_name(t->type), static_cast<long long>(t->ne[0]), static_cast<long long>(t->ne[1]),
           static_cast<long long>(t->ne[2]), static_cast<long long>(t->ne[3]), static_cast<unsigned long long>(p.bytes),
           static_cast<unsigned long long>(opts_.window_bytes));
    if (std::strncmp(t->name, "blk.", 4) == 0) before_blocks = INT64_MAX - 1;  // later strays go after the blocks
    p.key = layer_key(*t, before_blocks);
    total += t->n_bytes();
    device_total += p.bytes;
    plans.push_back(p);
  }
  std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) { return a.key < b.key; });
  // Banks a quarter of the window (a batch's layers then slide through a few of them), but
  // large enough that the model needs no more than ~10 of the pool's 16 banks.
  const uint64_t bank_bytes =
      std::max<uint64_t>(std::min<uint64_t>(opts_.window_bytes / 4, 1ull << 30), (device_total + 9) / 10);

  uint64_t left = 0;  // bytes still to place, with the padding each allocation gets
  for (const Plan& p : plans) left += (p.bytes + Pool::kAlign - 1) / Pool::kAlign * Pool::kAlign;
  for (Plan& p : plans) {
    graph::Tensor* t = p.t;
    // The last bank only as large as what is left: no pages the device would map for nothing.
    auto buffer = pool_.allocate_packed(Region::Weights, p.bytes, std::min(bank_bytes, left));
    left -= (p.bytes + Pool::kAlign - 1) / Pool::kAlign * Pool::kAlign;
    auto* dst = static_cast<uint8_t*>(buffer->data());
    const auto* src = static_cast<const uint8_t*>(t->data);
    if (p.tile != htp::HTP_TILE_INVALID) {
      const uint64_t slices = static_cast<uint64_t>(t->ne[2] * t->ne[3]);
      for (uint64_t s = 0; s < slices; ++s)
        if (!htp::vec_repack(p.tile, src + s * t->nb[2], t->nb[1], p.d.ne[1], p.d.ne[0], dst + s * p.slice_bytes))
          fail("HTP: cannot repack weight '%s' (%s)", t->name, type_name(t->type));
      p.d.type = p.tile;
    } else {
      std::memcpy(dst, src, p.bytes);
    }
    uint32_t bank = 0, offset = 0;
    pool_.locate(dst, p.bytes, &bank, &offset);
    p.d.bank = static_cast<uint16_t>(bank);
    p.d.offset = offset;
    p.d.size = static_cast<uint32_t>(p.bytes);
    p.d.flags = HTP_TENSOR_WEIGHT;
    weights_[t] = {p.d};
    weight_buffers_.push_back(std::move(buffer));
    done += t->n_bytes();
    if (copied) copied(*t);
    if (progress) progress(done, total);
  }
}

bool HtpBackend::describe(const graph::Tensor& t, htp_tensor* out) const {
  const graph::Tensor* root = graph::storage_root(&t);
  if (root->has_flag(graph::kFlagWeight)) {
    const auto it = weights_.find(root);
    if (it == weights_.end()) return false;
    const htp_tensor& w = it->second.desc;
    if (&t == root) {
      *out = w;
      return true;
    }
    // A view into a weight is only meaningful in its original (untiled) layout.
    if (htp::htp_tile_valid(w.type) || !shape_of(t, out)) return false;
    const uint64_t extent = htp_tensor_extent(*out);
    if (extent == HTP_BAD_EXTENT || t.view_offs + extent > w.size) return false;
    out->bank = w.bank;
    out->offset = w.offset + static_cast<uint32_t>(t.view_offs);
    out->size = static_cast<uint32_t>(extent);
    out->flags = HTP_TENSOR_WEIGHT;
    return true;
  }
  if (t.data == nullptr || !shape_of(t, out)) return false;
  const uint64_t extent = htp_tensor_extent(*out);
  if (extent == HTP_BAD_EXTENT || extent > UINT32_MAX) return false;
  uint32_t bank = 0, offset = 0;
  if (!pool_.locate(t.data, extent, &bank, &offset)) return false;  // not in this session's pool
  out->bank = static_cast<uint16_t>(bank);
  out->offset = offset;
  out->size = static_cast<uint32_t>(extent);
  out->flags = HTP_TENSOR_COMPUTE | HTP_TENSOR_PINNED;
  return true;
}

htp_status HtpBackend::prepare_op(const graph::Tensor& node, PreparedOp* out) const {
  const OpRoute route = route_op(node.op);
  if (route.build == nullptr) return HTP_ERR_NO_SUPPORT;
  out->src_mask = 0;
  const htp_tensor* src_ptr[HTP_MAX_SRC] = {};
  for (int k = 0; k < graph::kMaxSrc; ++k) {
    if (node.src[k] == nullptr) continue;
    if (!describe(*node.src[k], &out->src[k])) return HTP_ERR_NO_SUPPORT;
    src_ptr[k] = &out->src[k];
    out->src_mask |= 1u << k;
  }
  if (!describe(node, &out->dst) || (out->dst.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_NO_SUPPORT;

  OpKey key{};
  key.op = static_cast<int32_t>(node.op);
  key.src_mask = out->src_mask;
  std::memcpy(key.params, node.params, sizeof key.params);
  for (int k = 0; k < graph::kMaxSrc; ++k)
    if (src_ptr[k] != nullptr) key.src[k] = out->src[k];
  key.dst = out->dst;
  if (const OpCache::Entry* hit = ops_.find(key)) {
    out->op = hit->op;
    return hit->status;
  }

  htp_op_desc& op = out->op;
  std::memset(&op, 0, sizeof op);
  for (uint16_t& s : op.src) s = HTP_NO_TENSOR;
  op.dst = HTP_NO_TENSOR;
  op.opcode = route.opcode;
  static_assert(sizeof(op.params) == sizeof(node.params), "op params are passed verbatim");
  std::memcpy(op.params, node.params, sizeof op.params);
  const OpBuild b{node, {src_ptr[0], src_ptr[1], src_ptr[2], src_ptr[3], src_ptr[4], src_ptr[5]}, &out->dst,
                  hwinfo().n_threads, hwinfo().vtcm_size};
  const htp_status st = route.build(b, &op);
  ops_.insert(key, {st, op});
  return st;
}

void HtpBackend::add_op(const PreparedOp& p, BatchBuilder* batch) {
  htp_op_desc& op = batch->add_op();
  op = p.op;
  for (int k = 0; k < graph::kMaxSrc; ++k)
    if ((p.src_mask >> k) & 1u) op.src[k] = batch->add_tensor(p.src[k]);
  op.dst = batch->add_tensor(p.dst);
}

bool HtpBackend::supports(const graph::Tensor& node) const {
  if (graph::op_is_layout(node.op)) return true;
  PreparedOp p;
  return prepare_op(node, &p) == HTP_OK;
}

uint32_t HtpBackend::weight_banks(const graph::Tensor& node) const {
  uint32_t mask = 0;
  for (const graph::Tensor* src : node.src) {
    if (src == nullptr) continue;
    const auto it = weights_.find(graph::storage_root(src));
    if (it != weights_.end()) mask |= 1u << it->second.desc.bank;
  }
  return mask;
}

void HtpBackend::compute(std::span<graph::Tensor* const> nodes) {
  // The host cuts the run into batches whose weight banks fit the window beside the pinned
  // banks (DESIGN §6); with the whole model inside the window this is one batch.
  const uint64_t window = opts_.window_bytes;
  const uint64_t pinned = pool_.bytes_of(pool_.pinned_mask());
  const uint64_t budget = window > pinned ? window - pinned : 0;
  batch_.clear();
  batch_nodes_.clear();
  PreparedOp p;
  uint32_t banks = 0;
  for (const graph::Tensor* node : nodes) {
    if (graph::op_is_layout(node->op)) continue;
    const uint32_t need = weight_banks(*node);
    if ((banks | need) != banks && pool_.bytes_of(banks | need) > budget) {
      if (pool_.bytes_of(need) > budget)
        fail("HTP: %s of node '%s' reads %llu bytes of weight banks, but the device window of %llu bytes leaves %llu "
             "beside the %llu pinned bytes (KV cache, compute, messages); raise --htp-window",
             graph::op_name(node->op), node->name, static_cast<unsigned long long>(pool_.bytes_of(need)),
             static_cast<unsigned long long>(window), static_cast<unsigned long long>(budget),
             static_cast<unsigned long long>(pinned));
      run_batch();
      banks = 0;
    }
    const htp_status st = prepare_op(*node, &p);
    if (st != HTP_OK)
      fail("HTP: cannot run %s of node '%s' on the device: %s", graph::op_name(node->op), node->name,
           htp_status_name(st));
    add_op(p, &batch_);
    batch_nodes_.push_back(node);
    banks |= need;
  }
  run_batch();
}

void HtpBackend::fail_call(const std::string& what, uint32_t op_index) const {
  if (op_index < batch_nodes_.size()) {
    const graph::Tensor* n = batch_nodes_[op_index];
    // Unnamed nodes (most matmuls) are named by their sources, e.g. 'blk.3.ffn_up.weight x ffn_norm-3'.
    std::string label = n->name;
    if (label.empty())
      for (int i = 0; i < 2 && n->src[i] != nullptr; ++i)
        if (n->src[i]->name[0] != '\0') label += (label.empty() ? "" : " x ") + std::string(n->src[i]->name);
    fail("%s, while running op %u of %u: %s of node '%s'", what.c_str(), op_index, batch_.n_ops(),
         graph::op_name(n->op), label.c_str());
  }
  fail("%s, before the batch of %u ops (first: %s of node '%s') started", what.c_str(), batch_.n_ops(),
       graph::op_name(batch_nodes_.front()->op), batch_nodes_.front()->name);
}

void HtpBackend::run_batch() {
  if (batch_.n_ops() == 0) return;
  htp_message_layout layout{};
  if (!batch_.layout(&layout)) fail("HTP: a batch of %u ops does not fit one message", batch_.n_ops());
  if (message_->size() < layout.message_size)
    message_ = pool_.allocate(Region::Messages, std::max<size_t>(layout.message_size, 2 * message_->size()));
  batch_.write(message_->data(), ++calls_, layout);

  // Only a device process can die and restart; the undo log makes its retry exact.
  const bool can_retry = opts_.restart && transport_->device_pid() != 0;
  if (can_retry) replay_.capture(pool_, message_->data(), layout.message_size);
  htp_status st = HTP_OK;
  const auto start = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    try {
      st = transport_->call(message_->data(), layout.message_size);
      break;
    } catch (const DeviceFault& f) {
      constexpr int kMaxRestarts = 3;
      if (!can_retry || attempt == kMaxRestarts) fail_call(f.what(), f.op_in_flight);
      HEXLLM_LOG_WARN("%s; restarting the device and retrying the batch", f.what());
      transport_->restart();
      ++restarts_;
      replay_.restore(pool_);
    }
  }

  const auto* msg = static_cast<const uint8_t*>(message_->data());
  htp_response rsp{};
  std::memcpy(&rsp, msg + layout.response_offset, sizeof rsp);
  last_op_ns_.resize(batch_.n_ops());
  std::memcpy(last_op_ns_.data(), msg + layout.response_offset + sizeof(htp_response),
              last_op_ns_.size() * sizeof(uint64_t));
  if (opts_.profile) {
    const auto wall = std::chrono::steady_clock::now() - start;
    uint64_t ops_ns = 0;
    for (size_t i = 0; i < last_op_ns_.size(); i++) {
      profile_.add_op(batch_nodes_[i]->op, last_op_ns_[i]);
      ops_ns += last_op_ns_[i];
    }
    profile_.add_call((uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count(), ops_ns);
  }
  if (st != HTP_OK) {
    const std::string what = strprintf("HTP device (%s) failed with %s", transport_->session().c_str(), htp_status_name(st));
    if (rsp.failed_op < batch_nodes_.size()) fail_call(what, rsp.failed_op);
    if (rsp.failed_tensor != HTP_NO_INDEX)
      fail("%s: tensor %u of the batch of %u ops was refused", what.c_str(), rsp.failed_tensor, batch_.n_ops());
    fail("%s: the batch of %u ops was refused", what.c_str(), batch_.n_ops());
  }
  batch_.clear();
  batch_nodes_.clear();
}

}  // namespace hexllm::htp_host
