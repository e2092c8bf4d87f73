// Pieces shared by `hexllm bench`'s table and its ablation (bench_ablation.cpp).
#pragma once

#include <string>
#include <vector>

#include "cli/engine_options.h"
#include "hexllm/engine.h"

namespace hexllm::cli {

struct BenchOptions {
  EngineOptions engine;
  std::string threads;  // comma-separated list
  std::string htp_devices;  // comma-separated list; empty: engine.htp_devices
  int n_prompt = 512;
  int n_gen = 128;
  int reps = 5;
  bool no_roofline = false;
  bool ablate = false;
};

// "1,2" -> {1, 2}; throws naming a bad item.
std::vector<int> parse_threads(const std::string& list);
// The --htp-devices list, or the engine's one count.
std::vector<int> bench_devices(const BenchOptions& o);

// Bytes read per generated token: every matrix once (the embedding only when it is the head).
double bytes_per_token(const model::Model& m);
// Multiply-adds x 2 per prompt token in the layer matrices (the head runs for one token only).
double flops_per_token(const model::Model& m);

// The median (0 for none).
double median(std::vector<double> v);

// The prompt of the pp test, the same for every run.
std::vector<int32_t> bench_prompt(const model::Model& m, int n);
// Warm-up (first touch of pages, device threads spinning up): the prompt once when one is
// given (a batch touches activation and KV memory a decode step never does, which the first
// timed pp run would pay for), then a few decode steps.
void bench_warm_up(Engine& e, const std::vector<int32_t>& prompt = {});
// Tokens per second of one pp test (the prompt in one batch) and one tg test (n tokens one at a
// time), each from an empty cache.
double bench_pp(Engine& e, const std::vector<int32_t>& prompt);
double bench_tg(Engine& e, int n_gen);

// pp and tg with every HTP prepare mechanism on, each off in turn, and all off, interleaved
// repetition by repetition; a table of medians and ratios to all-on, then the roofline.
int bench_ablation(const BenchOptions& o);

}  // namespace hexllm::cli
