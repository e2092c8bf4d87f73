#include "htp-host/htp_backend.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
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

}  // namespace

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

HtpBackend::HtpBackend(const HtpOptions& opts) : opts_(opts) {
  if (opts.transport != "inproc") fail("--htp-transport: '%s' is not available (inproc)", opts.transport.c_str());
  SessionOptions so;
  so.n_threads = std::clamp<uint32_t>(opts.n_threads, 1, HTP_MAX_THREADS);
  so.vtcm_bytes = opts.vtcm_bytes;
  so.dma_mode = opts.dma_mode;
  transport_ = make_inproc_transport(pool_, so);
}

HtpBackend::~HtpBackend() = default;

std::unique_ptr<backend::Buffer> HtpBackend::alloc_buffer(backend::MemoryKind kind, size_t bytes) {
  return pool_.allocate(region_of(kind), bytes);
}

void HtpBackend::load_weights(std::span<graph::Tensor* const> weights, const backend::Progress& progress) {
  size_t total = 0, done = 0;
  for (const graph::Tensor* t : weights) total += t->n_bytes();
  for (graph::Tensor* t : weights) {
    if (weights_.count(t) != 0) continue;
    htp_tensor d{};
    if (!shape_of(*t, &d)) fail("HTP: weight '%s' has a dimension or stride beyond 32 bits", t->name);
    const bool matrix = t->ne[1] > 1 && t->is_contiguous();
    const uint32_t tile = opts_.repack && matrix ? htp::htp_tile_for(t->type) : htp::HTP_TILE_INVALID;
    const bool tiled = tile != htp::HTP_TILE_INVALID && htp::htp_tile_k_ok(tile, d.ne[0]);
    const uint64_t slices = static_cast<uint64_t>(t->ne[2] * t->ne[3]);
    const size_t slice_bytes = tiled ? htp::htp_tiled_size(tile, d.ne[1], d.ne[0]) : t->nb[2];
    const size_t bytes = tiled ? slice_bytes * slices : t->n_bytes();
    auto buffer = pool_.allocate(Region::Weights, bytes);
    auto* dst = static_cast<uint8_t*>(buffer->data());
    const auto* src = static_cast<const uint8_t*>(t->data);
    if (tiled) {
      for (uint64_t s = 0; s < slices; ++s)
        if (!htp::vec_repack(tile, src + s * t->nb[2], t->nb[1], d.ne[1], d.ne[0], dst + s * slice_bytes))
          fail("HTP: cannot repack weight '%s' (%s)", t->name, type_name(t->type));
      d.type = tile;
    } else {
      std::memcpy(dst, src, bytes);
    }
    uint32_t bank = 0, offset = 0;
    pool_.locate(dst, bytes, &bank, &offset);
    d.bank = static_cast<uint16_t>(bank);
    d.offset = offset;
    d.size = static_cast<uint32_t>(bytes);
    d.flags = HTP_TENSOR_WEIGHT;
    weights_[t] = {d};
    weight_buffers_.push_back(std::move(buffer));
    done += t->n_bytes();
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

htp_status HtpBackend::build_op(const graph::Tensor& node, BatchBuilder* batch) const {
  const OpRoute route = route_op(node.op);
  if (route.build == nullptr) return HTP_ERR_NO_SUPPORT;
  htp_tensor src[HTP_MAX_SRC]{};
  const htp_tensor* src_ptr[HTP_MAX_SRC] = {};
  for (int k = 0; k < graph::kMaxSrc; ++k) {
    if (node.src[k] == nullptr) continue;
    if (!describe(*node.src[k], &src[k])) return HTP_ERR_NO_SUPPORT;
    src_ptr[k] = &src[k];
  }
  htp_tensor dst{};
  if (!describe(node, &dst) || (dst.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_NO_SUPPORT;

  htp_op_desc& op = batch->add_op();
  op.opcode = route.opcode;
  static_assert(sizeof(op.params) == sizeof(node.params), "op params are passed verbatim");
  std::memcpy(op.params, node.params, sizeof op.params);
  const OpBuild b{node, {src_ptr[0], src_ptr[1], src_ptr[2], src_ptr[3], src_ptr[4], src_ptr[5]}, &dst,
                  hwinfo().n_threads, hwinfo().vtcm_size};
  const htp_status st = route.build(b, &op);
  if (st != HTP_OK) {
    batch->pop_op();
    return st;
  }
  for (int k = 0; k < graph::kMaxSrc; ++k)
    if (src_ptr[k] != nullptr) op.src[k] = batch->add_tensor(src[k]);
  op.dst = batch->add_tensor(dst);
  return HTP_OK;
}

bool HtpBackend::supports(const graph::Tensor& node) const {
  if (graph::op_is_layout(node.op)) return true;
  BatchBuilder probe;
  return build_op(node, &probe) == HTP_OK;
}

void HtpBackend::compute(std::span<graph::Tensor* const> nodes) {
  batch_.clear();
  batch_nodes_.clear();
  for (const graph::Tensor* node : nodes) {
    if (graph::op_is_layout(node->op)) continue;
    const htp_status st = build_op(*node, &batch_);
    if (st != HTP_OK)
      fail("HTP: cannot run %s of node '%s' on the device: %s", graph::op_name(node->op), node->name,
           htp_status_name(st));
    batch_nodes_.push_back(node);
  }
  if (batch_.n_ops() == 0) return;

  htp_message_layout layout{};
  if (!batch_.layout(&layout)) fail("HTP: a batch of %u ops does not fit one message", batch_.n_ops());
  if (!message_ || message_->size() < layout.message_size)
    message_ = pool_.allocate(Region::Messages, std::max<size_t>(layout.message_size, 1u << 20));
  batch_.write(message_->data(), ++calls_, layout);

  const htp_status st = transport_->call(message_->data(), layout.message_size);
  const auto* msg = static_cast<const uint8_t*>(message_->data());
  htp_response rsp{};
  std::memcpy(&rsp, msg + layout.response_offset, sizeof rsp);
  last_op_ns_.resize(batch_.n_ops());
  std::memcpy(last_op_ns_.data(), msg + layout.response_offset + sizeof(htp_response),
              last_op_ns_.size() * sizeof(uint64_t));
  if (st == HTP_OK) return;
  if (rsp.failed_op < batch_nodes_.size()) {
    const graph::Tensor* n = batch_nodes_[rsp.failed_op];
    fail("HTP device (%s session): op %u of %u, %s of node '%s', failed: %s", transport_->name(), rsp.failed_op,
         batch_.n_ops(), graph::op_name(n->op), n->name, htp_status_name(st));
  }
  if (rsp.failed_tensor != HTP_NO_INDEX)
    fail("HTP device (%s session): tensor %u of the batch was refused: %s", transport_->name(), rsp.failed_tensor,
         htp_status_name(st));
  fail("HTP device (%s session): batch of %u ops failed: %s", transport_->name(), batch_.n_ops(),
       htp_status_name(st));
}

}  // namespace hexllm::htp_host
