// The `tiny` synthetic preset as a GGUF file in the test temp folder, generated once.
#pragma once

#include <sys/stat.h>

#include <string>

#include "golden.h"
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

}  // namespace hexllm::test
