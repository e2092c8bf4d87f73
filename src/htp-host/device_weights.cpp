#include "htp-host/device_weights.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "htp-host/window.h"
#include "htp/abi/tiles.h"
#include "htp/vec/repack.h"

namespace hexllm::htp_host {

namespace {

bool fits_u32(int64_t v) { return v >= 0 && v <= static_cast<int64_t>(UINT32_MAX); }

// Load order for the weight banks: the layer order the graph reads them in. "blk.N." tensors by
// N; tensors before the first block (embeddings, rope factors) first, "output*" (norm, head)
// last, so that one batch of layers needs few banks.
int64_t layer_key(const graph::Tensor& t, int64_t before_blocks) {
  int layer = 0;
  if (std::sscanf(t.name, "blk.%d.", &layer) == 1) return layer;
  if (std::strncmp(t.name, "output", 6) == 0) return INT64_MAX;
  return before_blocks;
}

size_t aligned(size_t bytes) { return (bytes + Pool::kAlign - 1) / Pool::kAlign * Pool::kAlign; }

}  // namespace

// The wire's type ids are GGUF's: a graph tensor's type passes to the device unchanged.
#define HTP_CHECK_TYPE(name) \
  static_assert((uint32_t)HTP_TYPE_##name == (uint32_t)hexllm::Type::name, "GGUF id of " #name)
HTP_CHECK_TYPE(F32);
HTP_CHECK_TYPE(F16);
HTP_CHECK_TYPE(Q4_0);
HTP_CHECK_TYPE(Q4_1);
HTP_CHECK_TYPE(Q5_0);
HTP_CHECK_TYPE(Q5_1);
HTP_CHECK_TYPE(Q8_0);
HTP_CHECK_TYPE(Q8_1);
HTP_CHECK_TYPE(Q2_K);
HTP_CHECK_TYPE(Q3_K);
HTP_CHECK_TYPE(Q4_K);
HTP_CHECK_TYPE(Q5_K);
HTP_CHECK_TYPE(Q6_K);
HTP_CHECK_TYPE(Q8_K);
HTP_CHECK_TYPE(IQ4_NL);
HTP_CHECK_TYPE(I8);
HTP_CHECK_TYPE(I16);
HTP_CHECK_TYPE(I32);
HTP_CHECK_TYPE(I64);
HTP_CHECK_TYPE(F64);
HTP_CHECK_TYPE(BF16);
HTP_CHECK_TYPE(MXFP4);
#undef HTP_CHECK_TYPE

bool device_shape(const graph::Tensor& t, htp_tensor* out) {
  for (int d = 0; d < 4; ++d) {
    if (!fits_u32(t.ne[d]) || t.nb[d] > UINT32_MAX) return false;
    out->ne[d] = static_cast<uint32_t>(t.ne[d]);
    out->nb[d] = static_cast<uint32_t>(t.nb[d]);
  }
  out->type = static_cast<uint32_t>(t.type);
  return true;
}

void DeviceWeights::load(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
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
    if (copies_.count(t) != 0) continue;
    Plan p{t, {}, htp::HTP_TILE_INVALID, 0, 0, 0};
    if (!device_shape(*t, &p.d)) fail("HTP: weight '%s' has a dimension or stride beyond 32 bits", t->name);
    const bool matrix = t->ne[1] > 1 && t->is_contiguous();
    const uint32_t tile = repack_ && matrix ? htp::htp_tile_for(static_cast<uint32_t>(t->type)) : htp::HTP_TILE_INVALID;
    if (tile != htp::HTP_TILE_INVALID && htp::htp_tile_k_ok(tile, p.d.ne[0])) p.tile = tile;
    const uint64_t slices = static_cast<uint64_t>(t->ne[2] * t->ne[3]);
    p.slice_bytes = p.tile != htp::HTP_TILE_INVALID ? htp::htp_tiled_size(p.tile, p.d.ne[1], p.d.ne[0]) : t->nb[2];
    p.bytes = p.tile != htp::HTP_TILE_INVALID ? p.slice_bytes * slices : t->n_bytes();
    window_check_tensor(window_bytes_, *t, p.bytes);
    if (std::strncmp(t->name, "blk.", 4) == 0) before_blocks = INT64_MAX - 1;  // later strays go after the blocks
    p.key = layer_key(*t, before_blocks);
    total += t->n_bytes();
    device_total += p.bytes;
    plans.push_back(p);
  }
  std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) { return a.key < b.key; });
  const uint64_t bank_bytes = window_weight_bank_bytes(window_bytes_, device_total);

  uint64_t left = 0;  // bytes still to place, with the padding each allocation gets
  for (const Plan& p : plans) left += aligned(p.bytes);
  for (Plan& p : plans) {
    graph::Tensor* t = p.t;
    // The last bank only as large as what is left: no pages the device would map for nothing.
    auto buffer = pool_.allocate_packed(Region::Weights, p.bytes, std::min(bank_bytes, left));
    left -= aligned(p.bytes);
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
    copies_[t] = p.d;
    buffers_.push_back(std::move(buffer));
    done += t->n_bytes();
    if (copied) copied(*t);
    if (progress) progress(done, total);
  }
}

const htp_tensor* DeviceWeights::find(const graph::Tensor* root) const {
  const auto it = copies_.find(root);
  return it == copies_.end() ? nullptr : &it->second;
}

uint32_t DeviceWeights::banks_read_by(const graph::Tensor& node) const {
  uint32_t mask = 0;
  for (const graph::Tensor* src : node.src) {
    if (src == nullptr) continue;
    if (const htp_tensor* w = find(graph::storage_root(src))) mask |= 1u << w->bank;
  }
  return mask;
}

}  // namespace hexllm::htp_host
