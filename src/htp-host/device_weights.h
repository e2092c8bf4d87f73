// Weight placement: every weight's device copy in the pool's weight banks, packed in the layer
// order the graph reads them in, matrices repacked once into the kernels' tiles (htp/abi/tiles.h).
#pragma once

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "graph/tensor.h"
#include "htp-host/pool.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

class DeviceWeights {
 public:
  DeviceWeights(Pool& pool, uint64_t window_bytes, bool repack)
      : pool_(pool), window_bytes_(window_bytes), repack_(repack) {}

  // Copies (or repacks) the weights not placed yet. Throws naming a weight the device cannot
  // hold (a dimension beyond 32 bits, larger than the window, a failed repack).
  void load(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
            const backend::WeightCopied& copied);

  // The device copy of a weight (a storage root), nullptr when it has none.
  const htp_tensor* find(const graph::Tensor* root) const;
  // Weight banks the node's sources read (bit i = pool bank i).
  uint32_t banks_read_by(const graph::Tensor& node) const;

 private:
  Pool& pool_;
  uint64_t window_bytes_;
  bool repack_;
  std::vector<std::unique_ptr<backend::Buffer>> buffers_;
  std::unordered_map<const graph::Tensor*, htp_tensor> copies_;
};

// ne/nb/type of a graph tensor as device fields; false when a value exceeds 32 bits.
bool device_shape(const graph::Tensor& t, htp_tensor* out);

}  // namespace hexllm::htp_host
