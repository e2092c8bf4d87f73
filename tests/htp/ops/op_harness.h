// Op tests in the spirit of ggml's test-backend-ops: a small graph is built, its leaves filled
// with random data, and it is computed on the HTP backend and on the reference backend (the
// oracle); outputs are compared by NMSE. Every tensor sits between sentinel bytes in the pool,
// so out-of-bounds writes are caught. Configs vary threads, VTCM size (small VTCM forces
// multi-chunk pipelines) and the DMA engine.
// With HEXLLM_OP_TARGET=hexagon (the ctest label `hexagon`) the device is the Hexagon
// hexllm-htp under qemu-hexagon through the process transport, under fewer configs; without
// that build or qemu every case is skipped, saying which is missing. There each case is also
// computed on the x86 in-process device, and the two must agree bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/context.h"
#include "graph/graph.h"
#include "graph/ops.h"
#include "htp-host/htp_backend.h"

namespace hexllm::test {

struct DeviceConfig {
  uint32_t n_threads = 2;
  uint32_t vtcm_bytes = 8u << 20;
  uint32_t dma_mode = HTP_DMA_ZERO_COPY;
  uint32_t max_tensors = 0;  // the session's tensor table; 0: its default
  std::string fuse = "all";  // --htp-fuse
  bool reorder = true;       // --htp-reorder
  uint32_t n_devices = 1;    // device sessions splitting every op (--htp-devices)
  std::string transport = "inproc";  // --htp-transport (x86 device; the hexagon target is always process)
  std::string label() const;
};

// The configs every op case runs under: {1, 2} threads x {8 MiB, 256 KiB} VTCM, all three DMA
// engines among them. Under emulation (HEXLLM_OP_TARGET=hexagon): 1 thread with 8 MiB and 2
// threads with 256 KiB, which still covers both thread counts and the multi-chunk pipelines.
// With HEXLLM_OP_DEVICES=N each config runs on N devices, with HEXLLM_OP_TRANSPORT=process on
// the x86 device process (the mdev ctests); each case is then also compared bit for bit with
// one in-process device (host_differ).
std::vector<DeviceConfig> standard_configs();

// "host" (in-process device, the default) or "hexagon" (HEXLLM_OP_TARGET).
const std::string& op_target();
// Empty when the op target can run; else why not (what to install or build).
std::string op_target_unavailable();

struct OpResult {
  bool supported = false;  // the HTP backend took every compute node
  uint32_t device_ops = 0;  // ops of the device's last call (fewer than nodes where ops fused)
  double nmse = 0.0;       // over the output tensor (F32/F16 outputs)
  int64_t mismatches = 0;  // differing elements (integer outputs)
  std::string unsupported;  // the first node the device refused
  // Emulated targets, several devices or the process transport: output elements whose value
  // differs from one x86 in-process device (-1: not compared).
  int64_t host_differ = -1;
  int64_t n_elements = 0;
  std::vector<double> output;  // the device's output values
  std::vector<uint32_t> opcodes;  // the device's ops of the last call, in order
};

class OpTester {
 public:
  explicit OpTester(uint64_t seed = 1234);

  graph::Context& ctx() { return ctx_; }

  // Leaves. Values are uniform in [lo, hi]; quantized types are quantized from such values.
  graph::Tensor* input(Type type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  // A model weight: given to the backend through load_weights (repacked like a real model's).
  graph::Tensor* weight(Type type, std::initializer_list<int64_t> ne);
  // I32 values drawn uniformly from [0, max).
  graph::Tensor* ids(std::initializer_list<int64_t> ne, int32_t max);
  // I32 values given explicitly.
  graph::Tensor* ids_from(std::initializer_list<int64_t> ne, const std::vector<int32_t>& values);
  // F16 mask with 0 where visible and -inf elsewhere (causal over positions pos0 + row).
  graph::Tensor* causal_mask(int64_t n_kv, int64_t n_rows, int64_t pos0);

  // Computes `out` (and what it depends on) on the device and on the reference backend.
  OpResult run(graph::Tensor* out, const DeviceConfig& config);

 private:
  struct Leaf {
    graph::Tensor* t;
    std::vector<uint8_t> bytes;  // initial contents
    bool weight;
  };
  graph::Tensor* add_leaf(graph::Tensor* t, std::vector<uint8_t> bytes, bool weight);
  // Computes `out` on a device with `opts` into *got and, when want != nullptr, on the reference
  // backend into *want. false (with r->unsupported set) when the device refuses a node.
  bool compute(graph::Tensor* out, const htp_host::HtpOptions& opts, const DeviceConfig& config, OpResult* r,
               std::vector<double>* got, std::vector<double>* want);

  graph::Context ctx_;
  std::vector<Leaf> leaves_;
  uint64_t rng_;
};

// Runs `build` (which creates its own OpTester leaves and returns the output node) under every
// standard config and expects device support and NMSE <= max_nmse (or exact integer equality).
void expect_op_matches(const std::string& name, const std::function<graph::Tensor*(OpTester&)>& build,
                       double max_nmse, const std::vector<DeviceConfig>& configs = standard_configs());

}  // namespace hexllm::test
