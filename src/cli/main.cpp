// hexllm: LLM inference on the Hexagon NPU design. Subcommands in llama.cpp's style.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"hexllm: GGUF models in, tokens out, on the Hexagon NPU design"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hexllm 0.1.0");
  app.footer("kernels: " + hexllm::cli::kernel_path_note());

  using namespace hexllm::cli;
  const std::vector<std::pair<CLI::App*, Action>> commands = [&] {
    std::vector<std::pair<CLI::App*, Action>> c;
    for (auto add : {add_run_command, add_eval_command, add_tokenize_command, add_inspect_command,
                     add_quantize_command, add_perplexity_command, add_gen_model_command, add_bench_command}) {
      Action action = add(app);
      c.emplace_back(app.get_subcommands({}).back(), std::move(action));
    }
    return c;
  }();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (const std::string err = hexllm::cli::kernel_isa_error(); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  try {
    for (const auto& [sub, action] : commands)
      if (sub->parsed()) return action();
  } catch (const hexllm::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
