// The hexllm subcommands. Each registers its flags on the parent app and returns the action
// main() runs when that subcommand was chosen (its exit code).
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace hexllm::cli {

using Action = std::function<int()>;

Action add_run_command(CLI::App& app);
Action add_eval_command(CLI::App& app);
Action add_tokenize_command(CLI::App& app);
Action add_inspect_command(CLI::App& app);
Action add_quantize_command(CLI::App& app);
Action add_perplexity_command(CLI::App& app);
Action add_gen_model_command(CLI::App& app);
Action add_bench_command(CLI::App& app);

// The device kernel path (kernel_isa.cpp): a one-line note naming it, and the error message
// for an unusable HEXLLM_ISA (empty when it is unset or usable).
std::string kernel_path_note();
std::string kernel_isa_error();

}  // namespace hexllm::cli
