// Command-line flags of the engine (shared by run, eval, perplexity, bench).
#pragma once

#include "hexllm/engine.h"

namespace CLI {
class App;
}

namespace hexllm::cli {

// Registers -m, -t, -c, -b and --device, with HEXLLM_* environment variables as fallbacks.
void add_engine_options(CLI::App& app, EngineOptions& opts, bool model_optional);

// open_engine with a progress bar on a terminal while the weights are prepared.
std::unique_ptr<Engine> open_engine_with_progress(EngineOptions opts);

}  // namespace hexllm::cli
