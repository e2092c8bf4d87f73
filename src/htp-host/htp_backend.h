// The HTP backend: the host (AP) side of the device, as a facade over its parts: weight
// placement (device_weights.h), op preparation (op_prepare.h), and batching and execution
// (batch_runner.h) over a transport (transport.h). One synchronous call per run of nodes; every
// device status reaches the caller as an error naming the op.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "htp-host/batch_runner.h"
#include "htp-host/device_weights.h"
#include "htp-host/fusion.h"
#include "htp-host/graph_cache.h"
#include "htp-host/host_profile.h"
#include "htp-host/op_prepare.h"
#include "htp-host/pool.h"
#include "htp-host/transport.h"

namespace hexllm::htp_host {

// The session's settings (SessionOptions: the one set of defaults) and the backend's own.
struct HtpOptions : SessionOptions {
  std::string transport = "inproc";  // "inproc" or "process" (a hexllm-htp device process)
  bool repack = true;                // repack MUL_MAT weights into kernel tiles at load
  bool restart = false;  // device process: restart a dead or hung device and retry the batch
  // Device time per op kind and the host's phases per call, printed to stderr when the backend
  // closes; with profile_json also written there as JSON.
  bool profile = false;
  std::string profile_json;
  std::string trace;  // a Perfetto timeline (Chrome trace-event JSON) of every call to this file
  bool graph_cache = true;  // reuse the prepared batches of a graph seen before
  std::string fuse = "all";  // fusions the prepare stage may form (fusion.h)
  bool reorder = true;       // pull matmuls on one activation together so fusions form (plan_order)
  // Directory of the weight banks' unlinked files (huge pages); empty: memfds (Pool).
  std::string weights_dir = Pool::kDefaultWeightsDir;
};

// "async", "inline", "zero-copy".
uint32_t parse_dma_mode(const std::string& text);

class HtpBackend final : public backend::Backend {
 public:
  explicit HtpBackend(const HtpOptions& opts);
  ~HtpBackend() override;

  const char* name() const override { return "htp"; }
  bool supports(const graph::Tensor& node) const override;
  void compute(std::span<graph::Tensor* const> nodes) override;
  bool compute_graph(const graph::Graph& graph) override;
  // With --htp-reorder on: matmuls on one activation pulled together so they fuse (plan_order).
  void schedule(graph::Graph& graph) override;
  std::unique_ptr<backend::Buffer> alloc_buffer(backend::MemoryKind kind, size_t bytes) override;
  void load_weights(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
                    const backend::WeightCopied& copied) override;

  const htp_hwinfo& hwinfo() const { return transport_->hwinfo(); }
  const Pool& pool() const { return pool_; }
  const Transport& transport() const { return *transport_; }
  // Device restarts after faults (--htp-restart).
  uint64_t restarts() const { return runner_->restarts(); }
  // Device time per op of the last call (ns), in the order of the nodes it ran.
  const std::vector<uint64_t>& last_op_ns() const { return runner_->last_op_ns(); }
  const std::vector<uint32_t>& last_opcodes() const { return runner_->last_opcodes(); }
  uint64_t calls() const { return runner_->calls(); }
  // Distinct ops whose descriptors were built (OpCache): a repeated graph adds none.
  size_t cached_ops() const { return preparer_.cached_ops(); }
  const DeviceWeights& weights() const { return weights_; }
  // The descriptor the device would get for `node` (tests compare cached and fresh builds).
  htp_status prepare(const graph::Tensor& node, PreparedOp* out) const;
  // Whole graphs found prepared, and prepared afresh (compute_graph).
  uint64_t graph_hits() const { return graph_hits_; }
  uint64_t graph_misses() const { return graph_misses_; }

  // Switches the prepare stage's mechanisms at run time (--htp-fuse, --htp-graph-cache,
  // --htp-reorder), so that an ablation runs every variant on one engine: drops every prepared
  // graph. The order schedule() gave a graph stays with it: its owner rebuilds the graph for a
  // change of `reorder` to show.
  void set_prepare_mechanisms(const std::string& fuse, bool graph_cache, bool reorder);

 private:
  HtpOptions opts_;
  FuseOptions fuse_;
  Pool pool_;
  std::unique_ptr<Transport> transport_;
  DeviceWeights weights_;
  mutable OpPreparer preparer_;  // a cache: supports() is const but may fill it
  std::unique_ptr<HostProfile> host_profile_;  // with opts_.profile only
  std::unique_ptr<Timeline> timeline_;         // with opts_.trace only
  std::unique_ptr<BatchRunner> runner_;
  GraphCache graphs_;
  uint64_t graphs_generation_ = ~0ull;  // pool generation the cached graphs were prepared in
  uint64_t batch_serials_ = 0;          // the last PreparedBatch::serial given
  std::vector<const graph::Tensor*> run_nodes_;  // scratch: compute nodes of the current graph
  uint64_t run_nodes_seal_ = 0;                   // the sealed graph run_nodes_ lists, if any
  uint64_t graph_hits_ = 0;
  uint64_t graph_misses_ = 0;
  uint64_t last_return_ns_ = 0;  // when the previous call returned (profile)

  uint64_t phase_start_ns_ = 0;
  void begin_profiled_call(uint64_t build_ns);
  void end_phase(HostPhase phase);
  void end_profiled_call();

  std::vector<PlannedOp> plan_;  // scratch: the current run's device ops
  std::vector<uint32_t> order_;  // scratch: schedule()'s node order
  std::vector<const graph::Tensor*> op_nodes_;  // scratch: the node naming each op of a batch

  // Prepares the planned ops of `nodes` (plan_; one per node when it is empty) and cuts them
  // into batches that fit the window and the session's tensor table. A fused op the device
  // refuses is prepared as its separate nodes. Throws naming a node the device cannot run.
  void prepare_batches(std::span<const graph::Tensor* const> nodes, std::vector<PreparedBatch>* out);
  void run_batches(const std::vector<PreparedBatch>& batches, std::span<const graph::Tensor* const> nodes);
};

}  // namespace hexllm::htp_host
