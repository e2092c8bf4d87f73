#include "hexllm/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "backend/ref/ref_backend.h"
#include "base/byte_size.h"
#include "base/error.h"
#include "htp-host/fusion.h"
#include "htp-host/htp_backend.h"

namespace hexllm {

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::vector<std::string> device_names() { return {"htp", "ref"}; }

std::vector<std::string> htp_fusion_names() { return htp_host::fusion_names(); }

std::unique_ptr<Engine> open_engine(const EngineOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  auto e = std::make_unique<Engine>();
  const std::string path = opts.model_path.empty() ? ensure_default_model() : opts.model_path;
  e->model = model::Model::load(path);
  const int threads = opts.n_threads > 0 ? opts.n_threads : default_thread_count();

  if (opts.device == "htp") {
    // The session's defaults for the target; what the options name replaces them.
    htp_host::HtpOptions ho;
    static_cast<htp_host::SessionOptions&>(ho) = htp_host::SessionOptions::defaults_for(opts.htp_target);
    if (opts.htp_devices < 1 || opts.htp_devices > static_cast<int>(HTP_MDEV_MAX))
      fail("--htp-devices: %d is not between 1 and %u", opts.htp_devices, HTP_MDEV_MAX);
    ho.n_devices = static_cast<uint32_t>(opts.htp_devices);
    // --htp-threads is per device; otherwise the threads are divided among the devices.
    ho.n_threads = static_cast<uint32_t>(opts.htp_threads > 0 ? opts.htp_threads : std::max(1, threads / opts.htp_devices));
    if (!opts.htp_vtcm.empty())
      ho.vtcm_bytes = static_cast<uint32_t>(parse_byte_size(opts.htp_vtcm, "--htp-vtcm", 1, UINT32_MAX));
    if (!opts.htp_dma.empty()) ho.dma_mode = htp_host::parse_dma_mode(opts.htp_dma);
    ho.transport = opts.htp_transport;
    // Whole pool alignment units: the window is carved into banks of them.
    if (!opts.htp_window.empty())
      ho.window_bytes = parse_byte_size(opts.htp_window, "--htp-window", 64u << 10, 1ull << 40) /
                        htp_host::Pool::kAlign * htp_host::Pool::kAlign;
    if (opts.htp_weights_dir == "memfd") ho.weights_dir.clear();
    else if (!opts.htp_weights_dir.empty()) ho.weights_dir = opts.htp_weights_dir;
    if (std::isnan(opts.htp_timeout)) fail("--htp-timeout: %g is not a number of seconds >= 0", opts.htp_timeout);
    if (opts.htp_timeout >= 0) ho.timeout_s = opts.htp_timeout;
    ho.restart = opts.htp_restart;
    ho.device_path = opts.htp_device;
    ho.profile = opts.htp_profile;
    ho.profile_json = opts.htp_profile_json;
    ho.trace = opts.htp_trace;
    if (opts.htp_graph_cache != "on" && opts.htp_graph_cache != "off")
      fail("--htp-graph-cache: '%s' is neither on nor off", opts.htp_graph_cache.c_str());
    ho.graph_cache = opts.htp_graph_cache == "on";
    ho.fuse = opts.htp_fuse;
    if (opts.htp_reorder != "on" && opts.htp_reorder != "off")
      fail("--htp-reorder: '%s' is neither on nor off", opts.htp_reorder.c_str());
    ho.reorder = opts.htp_reorder == "on";
    e->backends.push_back(std::make_unique<htp_host::HtpBackend>(ho));
  } else if (opts.device != "ref") {
    fail("--device: unknown device '%s' (available: htp, ref)", opts.device.c_str());
  }
  e->backends.push_back(std::make_unique<backend::RefBackend>(threads));
  std::vector<backend::Backend*> order;
  for (auto& b : e->backends) order.push_back(b.get());
  e->scheduler = std::make_unique<backend::Scheduler>(order);
  // Once the device holds a weight, its file pages need not count in our memory a second time.
  const gguf::File& file = e->model->file();
  auto copied = [&file](const graph::Tensor& w) { file.drop_resident_pages(w.data, w.n_bytes()); };
  e->scheduler->primary().load_weights(e->model->weights().all, opts.progress, copied);

  model::ContextParams cp;
  cp.n_ctx = opts.n_ctx;
  cp.n_batch = opts.n_batch;
  e->context = std::make_unique<model::Context>(*e->model, *e->scheduler, cp);
  e->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return e;
}

}  // namespace hexllm
