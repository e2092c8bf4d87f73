// The `tiny` synthetic preset as a GGUF file in the test temp folder, generated once.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>

#include "golden.h"
#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "synth/synth.h"

namespace hexllm::test {

inline std::string tiny_model_path() {
  const std::string path = generated_model_path("htp_host_tiny");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    synth::GenOptions g;
    g.preset = "tiny";
    g.n_threads = 1;
    synth::generate_model(g, path);  // atomic: parallel tests may race to write it
  }
  return path;
}

// An engine on the HTP device (2 workers, in-process transport, 64 cells) and its backend.
struct HtpEngine {
  std::unique_ptr<Engine> engine;
  htp_host::HtpBackend* htp = nullptr;
};
inline HtpEngine open_htp_engine(const std::string& model, const std::string& graph_cache = "on") {
  EngineOptions o;
  o.model_path = model;
  o.device = "htp";
  o.n_threads = 2;
  o.n_ctx = 64;
  o.htp_transport = "inproc";
  o.htp_graph_cache = graph_cache;
  HtpEngine h;
  h.engine = open_engine(o);
  h.htp = dynamic_cast<htp_host::HtpBackend*>(h.engine->backends.front().get());
  return h;
}

}  // namespace hexllm::test
