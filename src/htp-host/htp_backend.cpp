#include "htp-host/htp_backend.h"

#include "base/error.h"
#include "graph/graph.h"
#include "htp-host/window.h"

namespace hexllm::htp_host {

namespace {

Region region_of(backend::MemoryKind kind) {
  switch (kind) {
    case backend::MemoryKind::Weights: return Region::Weights;
    case backend::MemoryKind::Cache: return Region::Cache;
    case backend::MemoryKind::Compute: return Region::Compute;
  }
  return Region::Compute;
}

// Fused matmuls split each part by output columns across devices (ops/matmul_fused.cpp), so
// they form with any device count.
FuseOptions fusions_for(const HtpOptions& o) { return FuseOptions::parse(o.fuse); }

HtpOptions clamped(HtpOptions o) {
  o.n_threads = std::clamp<uint32_t>(o.n_threads, 1, HTP_MAX_THREADS);
  return o;
}

}  // namespace

uint32_t parse_dma_mode(const std::string& text) {
  if (text == "async") return HTP_DMA_ASYNC;
  if (text == "inline") return HTP_DMA_INLINE;
  if (text == "zero-copy") return HTP_DMA_ZERO_COPY;
  fail("--htp-dma: '%s' is not a DMA mode (async, inline, zero-copy)", text.c_str());
}

HtpBackend::HtpBackend(const HtpOptions& opts)
    : opts_(clamped(opts)),
      fuse_(fusions_for(opts)),
      pool_(window_bank_sizes(opts.window_bytes), opts.weights_dir),
      weights_(pool_, opts.window_bytes, opts.repack),
      preparer_(pool_, weights_, opts_.n_devices) {
  if (opts_.target != "host" && opts_.transport != "process")
    fail("--htp-target %s runs the device as its own process: it needs --htp-transport process", opts_.target.c_str());
  if (opts_.n_devices < 1 || opts_.n_devices > HTP_MDEV_MAX)
    fail("--htp-devices: %u is not between 1 and %u", opts_.n_devices, HTP_MDEV_MAX);
  if (opts_.transport != "inproc" && opts_.transport != "process")
    fail("--htp-transport: '%s' is not a transport (inproc, process)", opts_.transport.c_str());
  if (opts_.n_devices > 1) transport_ = make_group_transport(pool_, opts_, opts_.transport);
  else if (opts_.transport == "inproc") transport_ = make_inproc_transport(pool_, opts_);
  else transport_ = make_process_transport(pool_, opts_);
  if (opts_.profile || !opts_.profile_json.empty()) host_profile_ = std::make_unique<HostProfile>();
  if (!opts_.trace.empty()) timeline_ = std::make_unique<Timeline>(opts_.trace);
  runner_ = std::make_unique<BatchRunner>(pool_, *transport_, opts_.restart, host_profile_.get(), timeline_.get());
}

HtpBackend::~HtpBackend() {
  if (host_profile_ == nullptr || host_profile_->empty()) return;
  if (opts_.profile) {
    runner_->op_profile().print(stderr);
    host_profile_->print(stderr);
    if (opts_.n_devices > 1 && runner_->calls() != 0)
      std::fprintf(stderr, "HTP fences: %u devices, %.1f us per call waiting in fences (thread 0, mean over devices), %llu calls\n",
                   opts_.n_devices, static_cast<double>(runner_->fence_ns()) / 1e3 / opts_.n_devices / runner_->calls(),
                   static_cast<unsigned long long>(runner_->calls()));
  }
  if (!opts_.profile_json.empty()) {
    try {
      host_profile_->write_json(opts_.profile_json);
    } catch (const Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());  // a destructor must not throw
    }
  }
}

// Host time since the previous call returned opens a profiled call.
void HtpBackend::begin_profiled_call(uint64_t build_ns) {
  if (host_profile_ == nullptr) return;
  const uint64_t now = now_ns();
  host_profile_->add(HostPhase::Build, build_ns);
  if (last_return_ns_ != 0) host_profile_->add(HostPhase::Between, now - last_return_ns_ - std::min(build_ns, now - last_return_ns_));
  phase_start_ns_ = now;
}

void HtpBackend::end_phase(HostPhase phase) {
  if (host_profile_ == nullptr) return;
  const uint64_t now = now_ns();
  host_profile_->add(phase, now - phase_start_ns_);
  phase_start_ns_ = now;
}

void HtpBackend::end_profiled_call() {
  if (host_profile_ == nullptr) return;
  host_profile_->end_call(run_nodes_);
  last_return_ns_ = now_ns();
}

std::unique_ptr<backend::Buffer> HtpBackend::alloc_buffer(backend::MemoryKind kind, size_t bytes) {
  return pool_.allocate(region_of(kind), bytes);
}

void HtpBackend::load_weights(std::span<graph::Tensor* const> weights, const backend::Progress& progress,
                              const backend::WeightCopied& copied) {
  weights_.load(weights, progress, copied);
}

htp_status HtpBackend::prepare(const graph::Tensor& node, PreparedOp* out) const {
  return preparer_.prepare(node, hwinfo(), out);
}

bool HtpBackend::supports(const graph::Tensor& node) const {
  if (graph::op_is_layout(node.op)) return true;
  PreparedOp p;
  return prepare(node, &p) == HTP_OK;
}

void HtpBackend::prepare_batches(std::span<const graph::Tensor* const> nodes, std::vector<PreparedBatch>* out) {
  // The run is cut into batches whose weight banks fit the window beside the pinned banks
  // (docs/DESIGN.md §6) and whose tensors fit the session's table; with the whole model inside
  // the window this is one batch.
  const uint64_t window = transport_->window().bytes();
  if (plan_.empty())
    for (uint32_t i = 0; i < nodes.size(); ++i) plan_.push_back({i, 1, HTP_OP_COUNT});
  out->clear();
  out->emplace_back();
  uint32_t banks = 0;
  auto add = [&](const PreparedOp& p, uint32_t need, uint32_t node) {
    const bool over_window = (banks | need) != banks && !window_fits(pool_, window, banks | need);
    if (over_window) {
      const std::string what = strprintf("%s of node '%s'", graph::op_name(nodes[node]->op), nodes[node]->name);
      window_require(pool_, window, need, what.c_str());
    }
    if ((over_window || !runner_->has_room_for(out->back().message, p)) && !out->back().op_node.empty()) {
      out->emplace_back();
      banks = 0;
    }
    p.add_to(&out->back().message);
    out->back().op_node.push_back(node);
    banks |= need;
  };
  PreparedOp p;
  for (const PlannedOp& planned : plan_) {
    const uint32_t first = planned.last + 1 - planned.n_nodes;
    uint32_t need = 0;
    for (uint32_t i = first; i <= planned.last; ++i) need |= weights_.banks_read_by(*nodes[i]);
    if (planned.n_nodes > 1 &&
        preparer_.prepare_fused(planned.opcode, nodes.subspan(first, planned.n_nodes), hwinfo(), &p) == HTP_OK) {
      add(p, need, planned.last);
      continue;
    }
    for (uint32_t i = first; i <= planned.last; ++i) {
      const htp_status st = prepare(*nodes[i], &p);
      if (st != HTP_OK)
        fail("HTP: cannot run %s of node '%s' on the device: %s", graph::op_name(nodes[i]->op), nodes[i]->name,
             htp_status_name(st));
      add(p, weights_.banks_read_by(*nodes[i]), i);
    }
  }
  plan_.clear();
  if (out->back().op_node.empty()) out->pop_back();
  for (PreparedBatch& b : *out) b.serial = ++batch_serials_;
}

void HtpBackend::run_batches(const std::vector<PreparedBatch>& batches, std::span<const graph::Tensor* const> nodes) {
  for (const PreparedBatch& b : batches) {
    op_nodes_.clear();
    for (uint32_t i : b.op_node) op_nodes_.push_back(nodes[i]);
    runner_->run(b.message, op_nodes_, b.serial);
  }
}

void HtpBackend::compute(std::span<graph::Tensor* const> nodes) {
  begin_profiled_call(0);
  run_nodes_seal_ = 0;
  run_nodes_.clear();
  for (const graph::Tensor* node : nodes)
    if (!graph::op_is_layout(node->op)) run_nodes_.push_back(node);
  std::vector<PreparedBatch> batches;
  prepare_batches(run_nodes_, &batches);
  end_phase(HostPhase::Prepare);
  run_batches(batches, run_nodes_);
  end_profiled_call();
}

void HtpBackend::set_prepare_mechanisms(const std::string& fuse, bool graph_cache, bool reorder) {
  HtpOptions o = opts_;
  o.fuse = fuse;
  fuse_ = fusions_for(o);  // throws on a bad list before anything changes
  opts_.fuse = fuse;
  opts_.graph_cache = graph_cache;
  opts_.reorder = reorder;
  graphs_.clear();
}

void HtpBackend::schedule(graph::Graph& graph) {
  if (!opts_.reorder) return;
  plan_order(graph.nodes(), &order_);
  graph.reorder(order_);
}

bool HtpBackend::compute_graph(const graph::Graph& graph) {
  if (!opts_.graph_cache) return false;
  begin_profiled_call(graph.build_ns());
  // Descriptors name banks and offsets: a pool that gained or lost a bank invalidates them.
  if (pool_.generation() != graphs_generation_) {
    graphs_.clear();
    graphs_generation_ = pool_.generation();
  }
  // A graph under the seal of the last one has the same nodes: ~1000 of them on a 24-layer model.
  if (graph.seal_id() == 0 || graph.seal_id() != run_nodes_seal_) {
    run_nodes_.clear();
    for (const graph::Tensor* node : graph.nodes())
      if (!graph::op_is_layout(node->op)) run_nodes_.push_back(node);
    run_nodes_seal_ = graph.seal_id();
  }

  const PreparedGraph* prepared = graphs_.lookup(graph);
  end_phase(HostPhase::Key);
  if (prepared != nullptr) {
    ++graph_hits_;
    if (host_profile_ != nullptr) host_profile_->graph_hit();
  } else {
    ++graph_misses_;
    if (host_profile_ != nullptr) host_profile_->graph_miss();
    PreparedGraph fresh;
    fresh.device_takes_all = true;
    PreparedOp p;
    for (const graph::Tensor* node : run_nodes_)
      if (prepare(*node, &p) != HTP_OK) {
        fresh.device_takes_all = false;
        break;
      }
    if (fresh.device_takes_all) {
      plan_fusions(graph, run_nodes_, fuse_, &plan_);
      prepare_batches(run_nodes_, &fresh.batches);
    }
    prepared = &graphs_.store(std::move(fresh));
    end_phase(HostPhase::Prepare);
  }
  // A graph the scheduler splits is profiled by the compute() calls it makes.
  if (!prepared->device_takes_all) return false;
  run_batches(prepared->batches, run_nodes_);
  end_profiled_call();
  return true;
}

}  // namespace hexllm::htp_host
