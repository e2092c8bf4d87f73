// The HTP backend: the host (AP) side of the device. It owns the shared pool, copies and
// repacks the weights into it once, translates graph nodes into op batches (deduplicated
// tensors, op descriptors, host-precomputed kernel params) and makes one synchronous call per
// run of nodes. Every device status reaches the caller as an error naming the op.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "htp-host/batch_builder.h"
#include "htp-host/op_cache.h"
#include "htp-host/op_profile.h"
#include "htp-host/pool.h"
#include "htp-host/transport.h"
#include "htp-host/transport_replay.h"

namespace hexllm::htp_host {

struct HtpOptions {
  uint32_t n_threads = 1;          // device workers (clamped to what the session reports)
  uint32_t vtcm_bytes = 8u << 20;  // VTCM arena per session
  uint32_t dma_mode = HTP_DMA_ZERO_COPY;
  std::string transport = "inproc";  // "inproc" or "process" (a hexllm-htp device process)
  bool repack = true;  // repack MUL_MAT weights into kernel tiles at load
  uint64_t window_bytes = 3584ull << 20;  // most pool bytes the device maps at once
  // Device process only: its binary (empty: found next to the executable), how long a call may
  // go without an op finishing (0: forever), and whether a dead or hung device is restarted and
  // the batch retried.
  std::string device_path;
  std::string target = "host";  // "host" or "hexagon" (the Hexagon hexllm-htp under qemu-hexagon)
  double timeout_s = 10.0;
  bool restart = false;
  bool profile = false;  // sum device time per op kind; printed to stderr when the backend closes
};

// Parses "256K", "8M", "8388608"; errors name the flag.
uint32_t parse_size(const std::string& text, const char* flag);
// Parses a window size: "3.5G", "512M", "0.75G", a byte count; at least 64 KiB, at most 1 TiB.
uint64_t parse_window(const std::string& text, const char* flag);
// "async", "inline", "zero-copy".
uint32_t parse_dma_mode(const std::string& text);

class HtpBackend final : public backend::Backend {
 public:
  explicit HtpBackend(const HtpOptions& opts);
  ~HtpBackend() override;

  const char* name() const override { return "htp"; }
  bool supports(const graph::Tensor& node) const override;
  void compute(std::span<graph::Tensor* const> nodes) override;
  std::unique_ptr<backend::Buffer> alloc_buffer(backend::MemoryKind kind, size_t bytes) override;
  void load_weights(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
                    const backend::WeightCopied& copied) override;

  const htp_hwinfo& hwinfo() const { return transport_->hwinfo(); }
  const Pool& pool() const { return pool_; }
  const Transport& transport() const { return *transport_; }
  // Device restarts after faults (--htp-restart).
  uint64_t restarts() const { return restarts_; }
  // Device time per op of the last call (ns), in the order of the nodes it ran.
  const std::vector<uint64_t>& last_op_ns() const { return last_op_ns_; }
  uint64_t calls() const { return calls_; }
  // Distinct ops whose descriptors were built (OpCache): a repeated graph adds none.
  size_t cached_ops() const { return ops_.size(); }

 private:
  // The device's view of `t`: its pool bank and offset, or its repacked weight copy.
  bool describe(const graph::Tensor& t, htp_tensor* out) const;
  // An op ready for a batch: its descriptor (kernel params included, tensor indices not yet)
  // and the device views of its tensors.
  struct PreparedOp {
    htp_op_desc op;
    htp_tensor src[HTP_MAX_SRC];
    uint32_t src_mask;  // bit k: src[k] is present
    htp_tensor dst;
  };
  // Prepares the op of `node` (kernel params from ops_, built on a miss); the status says why
  // when the device cannot run it.
  htp_status prepare_op(const graph::Tensor& node, PreparedOp* out) const;
  // Appends a prepared op and its tensors (deduplicated) to `batch`.
  static void add_op(const PreparedOp& p, BatchBuilder* batch);
  // Weight banks the node reads (bit i = pool bank i).
  uint32_t weight_banks(const graph::Tensor& node) const;
  // Sends batch_ (one call, retried on a restarted device with --htp-restart) and clears it.
  void run_batch();
  [[noreturn]] void fail_call(const std::string& what, uint32_t op_index) const;

  struct DeviceWeight {
    htp_tensor desc;  // bank/offset/type of the device copy
  };

  HtpOptions opts_;
  Pool pool_;
  std::unique_ptr<Transport> transport_;
  std::vector<std::unique_ptr<backend::Buffer>> weight_buffers_;
  std::unordered_map<const graph::Tensor*, DeviceWeight> weights_;
  std::unique_ptr<backend::Buffer> message_;
  BatchBuilder batch_;
  std::vector<const graph::Tensor*> batch_nodes_;
  mutable OpCache ops_;  // a cache: supports() is const but may fill it
  std::vector<uint64_t> last_op_ns_;
  ReplayLog replay_;
  OpProfile profile_;
  uint64_t calls_ = 0;
  uint64_t restarts_ = 0;
};

}  // namespace hexllm::htp_host
