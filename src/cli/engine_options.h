// Command-line flags of the engine (shared by run, eval, perplexity, bench).
#pragma once

#include "hexllm/engine.h"

namespace CLI {
class App;
}

namespace hexllm::cli {

// Registers -m, -t, -c, -b and --device, with HEXLLM_* environment variables as fallbacks.
void add_engine_options(CLI::App& app, EngineOptions& opts, bool model_optional);

}  // namespace hexllm::cli
