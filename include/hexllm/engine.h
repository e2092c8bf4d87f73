// hexllm's public C++ API: open a model on a backend and get an inference context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/scheduler.h"
#include "model/context.h"
#include "model/model.h"
#include "sampling/sampler.h"

namespace hexllm {

struct EngineOptions {
  std::string model_path;  // empty: the built-in default model (created on first use)
  std::string device = "htp";
  int n_threads = 0;  // 0: all hardware threads
  int64_t n_ctx = 4096;
  int64_t n_batch = 512;
  // HTP device: workers (0: n_threads), VTCM arena, DMA engine, transport (inproc: device
  // threads in this process; process: a hexllm-htp device process per session). An empty
  // string or a negative number takes the session's default (htp-host SessionOptions, the one
  // set of defaults: 8M VTCM, zero-copy DMA, a 3.5G window, a 10 s timeout; 1G and 300 s for
  // the hexagon target).
  int htp_threads = 0;
  // Device sessions sharing the pool, each with htp_threads workers (0: n_threads / devices);
  // every op's rows are split among them.
  int htp_devices = 1;
  std::string htp_vtcm;
  std::string htp_dma;
  // "process" by default: a call costs more than "inproc" (one call per graph; figures in the
  // README), and in exchange a device fault cannot take the host down.
  std::string htp_transport = "process";
  // The device process's target: "host" (the x86 hexllm-htp) or "hexagon" (the Hexagon
  // hexllm-htp under qemu-hexagon, same pool, doorbell and fault handling).
  std::string htp_target = "host";
  // HTP device window onto the pool (e.g. "3.5G", "512M"); larger models slide through it.
  std::string htp_window;
  // Directory of the HTP weight banks' unlinked files, which get 2 MiB pages on a disk
  // filesystem with large folios; "memfd" keeps them in shared memory. Empty: the pool's default.
  std::string htp_weights_dir;
  // Device process (htp_transport "process"): seconds a call may go without an op finishing
  // before the device counts as hung (0: never), restart-and-retry after a device fault, and
  // the hexllm-htp binary (empty: next to the running executable).
  double htp_timeout = -1.0;
  bool htp_restart = false;
  std::string htp_device;
  // Print device time per op kind and the host's phases per call to stderr when the engine
  // closes; htp_profile_json (a file path) also writes the host numbers as JSON.
  bool htp_profile = false;
  std::string htp_profile_json;
  // Write a Perfetto timeline (Chrome trace-event JSON: host phases, every device worker's ops,
  // DMA waits, fences and flushes) of every device call to this file.
  std::string htp_trace;
  // Reuse the prepared batches of a graph seen before (the graph cache): "on" or "off".
  std::string htp_graph_cache = "on";
  // Fusions the HTP prepare stage may form: "all", "none" or a comma list (e.g. "rms_norm_mul").
  std::string htp_fuse = "all";
  // Reorder the HTP run so matmuls that share an activation are adjacent (and fuse): "on" or "off".
  std::string htp_reorder = "on";
  // Called while the weights are prepared for the device (bytes done, bytes total).
  backend::Progress progress;
};

// The devices `device` may name: "htp" (the NPU design; nodes it refuses run on the reference
// backend) and "ref" (the reference backend alone).
std::vector<std::string> device_names();

// The fusions EngineOptions::htp_fuse may list.
std::vector<std::string> htp_fusion_names();

struct Engine {
  std::unique_ptr<model::Model> model;
  std::vector<std::unique_ptr<backend::Backend>> backends;  // priority order; the last is the reference
  std::unique_ptr<backend::Scheduler> scheduler;
  std::unique_ptr<model::Context> context;
  double load_seconds = 0;
};

// Loads the model and prepares the backends and a context. Throws hexllm::Error.
std::unique_ptr<Engine> open_engine(const EngineOptions& opts);

// std::thread::hardware_concurrency(), at least 1.
int default_thread_count();

// The built-in default model: the `tiny` synthetic preset in a cache folder ($HEXLLM_CACHE_DIR,
// else $XDG_CACHE_HOME/hexllm, else ~/.cache/hexllm), generated when absent.
std::string cache_dir();
std::string ensure_default_model();

}  // namespace hexllm
