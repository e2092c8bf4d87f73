// `hexllm gen-model`: write a synthetic random-weight GGUF with a built-in tokenizer.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "hexllm/engine.h"
#include "cli/progress.h"
#include "synth/synth.h"

namespace hexllm::cli {

namespace {

struct GenModelOptions {
  std::string preset;
  std::string out;
  std::string type;
  uint64_t seed = 0;
  int n_threads = 0;
  bool untied_output = false;
  bool identical_experts = false;
  bool pure = false;
};

int gen_model(const GenModelOptions& o) {
  synth::GenOptions g;
  g.preset = o.preset;
  g.seed = o.seed;
  g.n_threads = o.n_threads > 0 ? o.n_threads : default_thread_count();
  g.untied_output = o.untied_output;
  g.identical_experts = o.identical_experts;
  g.type = o.type;
  g.pure = o.pure;
  ProgressBar progress("gen-model");
  g.progress = [&](const synth::Progress& p) { progress.update(p.bytes_done, p.bytes_total); };
  const auto start = std::chrono::steady_clock::now();
  synth::generate_model(g, o.out);
  progress.finish();
  std::fprintf(stderr, "%s: preset %s written in %.1f s\n", o.out.c_str(), o.preset.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

Action add_gen_model_command(CLI::App& app) {
  auto o = std::make_shared<GenModelOptions>();
  CLI::App* sub = app.add_subcommand("gen-model", "Write a synthetic random-weight GGUF model");
  std::string presets;
  for (const std::string& p : synth::preset_names()) presets += (presets.empty() ? "" : ", ") + p;
  sub->add_option("--preset", o->preset, "Preset: " + presets)->required();
  sub->add_option("-o,--output", o->out, "Output GGUF file")->required();
  sub->add_option("--type", o->type, "Weight type, e.g. Q4_0, Q8_0, Q4_K_M, F16 (default: the preset's)");
  sub->add_option("--seed", o->seed, "Random seed");
  sub->add_option("-t,--threads", o->n_threads, "Threads")->check(CLI::Range(1, 256));
  sub->add_flag("--untied-output", o->untied_output, "Write a separate output.weight (untied head)");
  sub->add_flag("--pure", o->pure, "Every matrix in --type (no higher-precision output or mix)");
  sub->add_flag("--identical-experts", o->identical_experts, "MoE presets: every expert gets the same weights");
  return [o] { return gen_model(*o); };
}

}  // namespace hexllm::cli
