// `hexllm bench`: llama-bench's tests (pp = one batch of n prompt tokens, tg = n tokens one at a
// time, each from an empty cache) in its table format, followed by this machine's roofline
// measured in the same run and each result as a fraction of it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "cli/bench.h"
#include "cli/commands.h"
#include "engine/roofline.h"
#include "htp-host/htp_backend.h"

namespace hexllm::cli {

namespace {

struct Stats {
  double mean = 0, sd = 0;
};

Stats stats(const std::vector<double>& v) {
  Stats s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<int> parse_counts(const std::string& list, const char* option, const char* what, int max) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > max)
      fail("%s: '%s' is not a %s (1..%d; a list like 1,2 runs each)", option, item.c_str(), what, max);
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) fail("%s: empty list", option);
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<int> parse_threads(const std::string& list) { return parse_counts(list, "-t", "thread count", 256); }

double bytes_per_token(const model::Model& m) {
  double bytes = 0;
  for (const graph::Tensor* t : m.weights().all)
    if (t != m.weights().token_embd || m.weights().tied_output()) bytes += static_cast<double>(t->n_bytes());
  return bytes;
}

double flops_per_token(const model::Model& m) {
  double n = 0;
  for (const model::LayerWeights& L : m.weights().layers)
    for (const graph::Tensor* t : {L.wq, L.wk, L.wv, L.wo, L.ffn_gate, L.ffn_up, L.ffn_down, L.ffn_router})
      if (t != nullptr) n += static_cast<double>(t->n_elements());
  // Experts: only n_used of n_expert run per token.
  for (const model::LayerWeights& L : m.weights().layers)
    for (const graph::Tensor* t : {L.ffn_gate_exps, L.ffn_up_exps, L.ffn_down_exps})
      if (t != nullptr)
        n += static_cast<double>(t->n_elements()) * static_cast<double>(m.hparams().n_expert_used) /
             static_cast<double>(m.hparams().n_expert);
  return 2 * n;
}

std::vector<int32_t> bench_prompt(const model::Model& m, int n) {
  const size_t n_vocab = static_cast<size_t>(m.hparams().n_vocab);
  std::vector<int32_t> prompt(static_cast<size_t>(n));
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
  return prompt;
}

void bench_warm_up(Engine& e, const std::vector<int32_t>& prompt) {
  if (!prompt.empty()) {
    e.context->reset();
    e.context->decode(prompt, false);
  }
  e.context->reset();
  for (int32_t token : {1, 2, 3}) e.context->decode(std::span<const int32_t>(&token, 1), false);
}

double bench_pp(Engine& e, const std::vector<int32_t>& prompt) {
  e.context->reset();
  return static_cast<double>(prompt.size()) / seconds_of([&] { e.context->decode(prompt, false); });
}

double bench_tg(Engine& e, int n_gen) {
  const int32_t n_vocab = static_cast<int32_t>(e.model->hparams().n_vocab);
  e.context->reset();
  return n_gen / seconds_of([&] {
    int32_t token = 1;
    for (int i = 0; i < n_gen; ++i) {
      e.context->decode(std::span<const int32_t>(&token, 1), false);
      token = (token * 31 + 7) % n_vocab;
    }
  });
}

std::vector<int> bench_devices(const BenchOptions& o) {
  if (o.htp_devices.empty()) return {o.engine.htp_devices};
  return parse_counts(o.htp_devices, "--htp-devices", "device count", static_cast<int>(HTP_MDEV_MAX));
}

namespace {

// "devices x workers each" as the HTP backend opened them ("-" on another backend).
std::string device_split(Engine& e) {
  for (const auto& b : e.backends)
    if (const auto* h = dynamic_cast<const htp_host::HtpBackend*>(b.get()))
      return std::to_string(h->transport().n_devices()) + " x " + std::to_string(h->hwinfo().n_threads);
  return "-";
}

// "; 80% of the <what> probed beside each run (median of 3)", or "" without probes.
std::string beside_note(const std::vector<double>& beside, const char* what) {
  if (beside.empty()) return {};
  return strprintf("; %.0f%% of the %s probed beside each run (median of %zu)", 100 * median(beside), what,
                   beside.size());
}

// Where the HTP weight banks live and how much of them the host maps with 2 MiB pages (the
// device reads them through the same page cache); empty on another backend.
std::string weights_memory(Engine& e) {
  for (const auto& b : e.backends)
    if (const auto* h = dynamic_cast<const htp_host::HtpBackend*>(b.get())) {
      const htp_host::Pool& pool = h->pool();
      char text[256];
      std::snprintf(text, sizeof text, "HTP weights: %s; %.1f of %.1f MiB mapped with 2 MiB pages",
                    pool.weights_backing().c_str(), static_cast<double>(pool.weights_huge_bytes()) / (1 << 20),
                    static_cast<double>(pool.bytes(htp_host::Region::Weights)) / (1 << 20));
      return text;
    }
  return {};
}

int bench(const BenchOptions& o) {
  if (o.ablate) {
    const std::vector<int> devices = bench_devices(o);
    if (devices.size() != 1) fail("--ablate: one --htp-devices count, not a list");
    BenchOptions one = o;
    one.engine.htp_devices = devices.front();
    return bench_ablation(one);
  }
  if (o.n_prompt < 0 || o.n_gen < 0 || (o.n_prompt == 0 && o.n_gen == 0)) fail("-p and -n: nothing to run");
  const std::vector<int> thread_list = parse_threads(o.threads.empty() ? std::to_string(default_thread_count()) : o.threads);
  const std::vector<int> device_list = bench_devices(o);

  std::printf("kernels: %s\n\n", kernel_path_note().c_str());
  std::printf("| %-24s | %10s | %8s | %-7s | %7s | %11s | %6s | %16s |\n", "model", "size", "params", "backend",
              "threads", "dev x thr", "test", "t/s");
  std::printf("| %s | %s: | %s: | %s | %s: | %s: | %s: | %s: |\n", std::string(24, '-').c_str(),
              std::string(9, '-').c_str(), std::string(7, '-').c_str(), std::string(7, '-').c_str(),
              std::string(6, '-').c_str(), std::string(10, '-').c_str(), std::string(5, '-').c_str(),
              std::string(15, '-').c_str());
  struct Row {
    int threads;
    std::string devices;
    bool pp;
    double tps;
    // Each run's rate over the machine's probed just before and after it: tg, GB/s over the
    // read bandwidth; pp, GOP/s over the int8 dot rate.
    std::vector<double> beside;
  };
  std::vector<Row> rows;
  double bpt = 0, fpt = 0;
  std::string weights_note;
  std::vector<std::pair<int, int>> runs;  // (threads, devices), threads outermost
  for (int threads : thread_list)
    for (int devices : device_list) runs.emplace_back(threads, devices);
  for (const auto& [threads, devices] : runs) {
    EngineOptions eo = o.engine;
    eo.n_threads = threads;
    eo.htp_devices = devices;
    eo.n_ctx = std::max(o.n_prompt, o.n_gen) + 16;
    auto e = open_engine(eo);
    const std::string split = device_split(*e);
    weights_note = weights_memory(*e);
    const model::Model& m = *e->model;
    bpt = bytes_per_token(m);
    fpt = flops_per_token(m);
    const std::vector<int32_t> prompt = bench_prompt(m, o.n_prompt);
    bench_warm_up(*e, prompt);

    auto print = [&](const char* test, int n, const std::vector<double>& tps, std::vector<double> beside = {}) {
      const Stats s = stats(tps);
      const double params = static_cast<double>(m.n_params());
      std::printf("| %-24s | %6.2f MiB | %6.2f B | %-7s | %7d | %11s | %6s | %8.2f ± %5.2f |\n",
                  m.description().c_str(), static_cast<double>(m.weight_bytes()) / (1 << 20), params / 1e9,
                  o.engine.device.c_str(), threads, split.c_str(), (std::string(test) + std::to_string(n)).c_str(),
                  s.mean, s.sd);
      std::fflush(stdout);
      rows.push_back({threads, split, test[0] == 'p', s.mean, std::move(beside)});
    };
    if (o.n_prompt > 0) {
      std::vector<double> tps, beside;
      for (int r = 0; r < o.reps; ++r) {
        const double before = o.no_roofline ? 0 : int8_gops_now(threads);
        tps.push_back(bench_pp(*e, prompt));
        const double now = o.no_roofline ? 0 : (before + int8_gops_now(threads)) / 2;
        if (now > 0) beside.push_back(fpt * tps.back() / 1e9 / now);
      }
      print("pp", o.n_prompt, tps, std::move(beside));
    }
    if (o.n_gen > 0) {
      std::optional<ReadProbe> probe;
      if (!o.no_roofline) probe.emplace(threads, true);
      std::vector<double> tps, beside;
      for (int r = 0; r < o.reps; ++r) {
        const double before = probe ? probe->quick_gbps() : 0;
        tps.push_back(bench_tg(*e, o.n_gen));
        if (probe) beside.push_back(bpt * tps.back() / 1e9 / ((before + probe->quick_gbps()) / 2));
      }
      print("tg", o.n_gen, tps, std::move(beside));
    }
  }

  if (!weights_note.empty()) std::printf("\n%s\n", weights_note.c_str());
  if (o.no_roofline) return 0;
  std::printf("\nroofline (measured now):\n");
  for (int threads : thread_list) {
    const Roofline r = measure_roofline(threads);
    std::printf("  %d thread%s: read bandwidth %.1f GB/s (%s; %.1f on 4 KiB pages), int8 dot peak %.0f GOP/s (%s), "
                "f32 FMA peak %.0f GFLOP/s (%s)\n",
                threads, threads == 1 ? "" : "s", r.read_gbps, r.read_reader, r.read_gbps_4k, r.int8_gops, r.int8_isa,
                r.f32_gflops, r.f32_isa);
    if (r.tile_int8_gops > 0)
      std::printf("    matrix unit: int8 peak %.0f GOP/s (%s), %.1fx the dot peak; bf16 peak %.0f GFLOP/s (AMX tdpbf16ps)\n",
                  r.tile_int8_gops, r.tile_int8_isa, r.tile_int8_gops / r.int8_gops, r.tile_bf16_gflops);
    for (const Row& row : rows) {
      if (row.threads != threads) continue;
      const std::string who = device_list.size() > 1 ? " (" + row.devices + ")" : "";
      const double pp_gops = fpt * row.tps / 1e9;
      if (row.pp && r.tile_int8_gops > 0)
        std::printf("    pp%s: %.2f GFLOP/token x %.2f t/s = %.1f GFLOP/s = %.0f%% of int8 peak (%.1f%% of the matrix unit's "
                    "int8, %.1f%% of its bf16)%s\n",
                    who.c_str(), fpt / 1e9, row.tps, pp_gops, 100 * pp_gops / r.int8_gops, 100 * pp_gops / r.tile_int8_gops,
                    r.tile_bf16_gflops > 0 ? 100 * pp_gops / r.tile_bf16_gflops : 0.0,
                    beside_note(row.beside, "int8 rate").c_str());
      else if (row.pp)
        std::printf("    pp%s: %.2f GFLOP/token x %.2f t/s = %.1f GFLOP/s = %.0f%% of int8 peak%s\n", who.c_str(), fpt / 1e9,
                    row.tps, pp_gops, r.int8_gops > 0 ? 100 * pp_gops / r.int8_gops : 0.0, beside_note(row.beside, "int8 rate").c_str());
      else
        std::printf("    tg%s: %.1f MB/token x %.2f t/s = %.1f GB/s = %.0f%% of read bandwidth (%.0f%% of the 4 KiB-page figure)%s\n",
                    who.c_str(), bpt / 1e6, row.tps, bpt * row.tps / 1e9, 100 * bpt * row.tps / 1e9 / r.read_gbps,
                    100 * bpt * row.tps / 1e9 / r.read_gbps_4k, beside_note(row.beside, "bandwidth").c_str());
    }
  }
  return 0;
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "llama-bench style speed table, with the roofline measured in the same run");
  add_engine_options(*sub, o->engine, false);
  sub->remove_option(sub->get_option("--threads"));
  sub->add_option("-t,--threads", o->threads, "Thread counts, e.g. 1,2 (default: all hardware threads)");
  sub->remove_option(sub->get_option("--htp-devices"));
  sub->add_option("--htp-devices", o->htp_devices,
                  "HTP device counts, e.g. 1,2: a row for every thread count and device count, the threads divided "
                  "among the devices unless --htp-threads (default 1)")
      ->envname("HEXLLM_HTP_DEVICES");
  sub->add_option("-p,--n-prompt", o->n_prompt, "Prompt tokens of the pp test (0: skip)")->check(CLI::Range(0, 1 << 16));
  sub->add_option("-n,--n-gen", o->n_gen, "Generated tokens of the tg test (0: skip)")->check(CLI::Range(0, 1 << 16));
  sub->add_option("-r,--repetitions", o->reps, "Repetitions of each test")->check(CLI::Range(1, 1000));
  sub->add_flag("--no-roofline", o->no_roofline, "Skip the bandwidth and int8 peak measurement");
  sub->add_flag("--ablate", o->ablate,
                "pp and tg with every HTP prepare mechanism on (graph cache, reorder, each fusion), each off in turn, and all off, "
                "interleaved; a table of medians and ratios");
  return [o] { return bench(*o); };
}

}  // namespace hexllm::cli
