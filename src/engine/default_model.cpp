#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "hexllm/engine.h"
#include "synth/synth.h"

namespace hexllm {

std::string cache_dir() {
  if (const char* d = std::getenv("HEXLLM_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d != nullptr && *d != '\0') return std::string(d) + "/hexllm";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/hexllm";
  return "/tmp/hexllm-cache";
}

std::string ensure_default_model() {
  namespace fs = std::filesystem;
  const fs::path dir = cache_dir();
  const fs::path path = dir / "tiny.gguf";
  if (fs::exists(path)) return path.string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create the cache folder %s: %s", dir.c_str(), ec.message().c_str());
  log(LogLevel::Info, "creating the built-in default model in %s", path.c_str());
  synth::GenOptions opts;
  opts.preset = "tiny";
  opts.seed = 0;
  synth::generate_model(opts, path.string());  // writes atomically
  return path.string();
}

}  // namespace hexllm
