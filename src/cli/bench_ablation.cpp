// `hexllm bench --ablate`: what each HTP prepare mechanism is worth. One engine runs every
// variant, switching the mechanisms between runs (HtpBackend::set_prepare_mechanisms) and
// rebuilding its graph, so that no variant gets a luckier memory layout or thread placement; the
// repetitions go round the variants, each round starting one later, so that a machine's drift
// over the run falls on all of them alike, and each ratio is taken within one round. A second
// all-on variant shows how far two identical variants differ.
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "cli/bench.h"
#include "engine/roofline.h"
#include "htp-host/htp_backend.h"

namespace hexllm::cli {

namespace {

struct Variant {
  std::string name;
  std::string fuse = "all";
  bool graph_cache = true;
  bool reorder = true;
};

std::vector<Variant> variants() {
  const std::vector<std::string> fusions = htp_fusion_names();
  std::vector<Variant> v(4);
  v[0].name = "all on";
  v[3].name = "all on (control)";  // a second variant alike: the table's noise floor
  v[1].name = "graph cache off";
  v[1].graph_cache = false;
  v[2].name = "reorder off";
  v[2].reorder = false;
  std::swap(v[1], v[3]);  // the control right after all on
  for (const std::string& off : fusions) {
    std::string rest;
    for (const std::string& f : fusions)
      if (f != off) rest += (rest.empty() ? "" : ",") + f;
    v.emplace_back();
    v.back().name = "fuse: no " + off;
    v.back().fuse = rest.empty() ? "none" : rest;
  }
  v.emplace_back();
  v.back().name = "all off";
  v.back().fuse = "none";
  v.back().graph_cache = false;
  v.back().reorder = false;
  return v;
}

struct Samples {
  std::vector<double> pp, tg, pp_ratio, tg_ratio;  // t/s, and t/s over all-on's in the same round
};

}  // namespace

int bench_ablation(const BenchOptions& o) {
  if (o.engine.device != "htp") fail("--ablate: the mechanisms are the HTP device's (got --device %s)", o.engine.device.c_str());
  if (o.n_prompt < 0 || o.n_gen < 0 || (o.n_prompt == 0 && o.n_gen == 0)) fail("-p and -n: nothing to run");
  const std::vector<int> thread_list = parse_threads(o.threads.empty() ? std::to_string(default_thread_count()) : o.threads);
  const std::vector<Variant> vs = variants();

  for (int threads : thread_list) {
    EngineOptions eo = o.engine;
    eo.n_threads = threads;
    eo.n_ctx = std::max(o.n_prompt, o.n_gen) + 16;
    std::unique_ptr<Engine> engine = open_engine(eo);
    auto* htp = dynamic_cast<htp_host::HtpBackend*>(engine->backends.front().get());
    if (htp == nullptr) fail("--ablate: the engine's first backend is not the HTP device");
    auto use = [&](const Variant& v) {
      htp->set_prepare_mechanisms(v.fuse, v.graph_cache, v.reorder);
      engine->context->rebuild_graph();
    };
    const model::Model& m = *engine->model;
    const std::vector<int32_t> prompt = bench_prompt(m, o.n_prompt);
    bench_warm_up(*engine, prompt);
    const double fpt = flops_per_token(m), bpt = bytes_per_token(m);
    const std::string description = m.description();
    std::vector<Samples> s(vs.size());
    // Each round starts one variant later, so that no variant always runs first.
    for (int r = 0; r < o.reps; ++r)
      for (size_t k = 0; k < vs.size(); ++k) {
        const size_t i = (k + static_cast<size_t>(r)) % vs.size();
        use(vs[i]);
        bench_warm_up(*engine);  // prepares the variant's decode graph, outside the timing
        if (o.n_prompt > 0) s[i].pp.push_back(bench_pp(*engine, prompt));
        if (o.n_gen > 0) s[i].tg.push_back(bench_tg(*engine, o.n_gen));
      }
    for (size_t i = 0; i < vs.size(); ++i)
      for (int r = 0; r < o.reps; ++r) {
        if (o.n_prompt > 0) s[i].pp_ratio.push_back(s[i].pp[r] / s[0].pp[r]);
        if (o.n_gen > 0) s[i].tg_ratio.push_back(s[i].tg[r] / s[0].tg[r]);
      }
    engine.reset();  // the roofline wants the machine to itself

    const Roofline roof = o.no_roofline ? Roofline{} : measure_roofline(threads);
    std::printf("%s, %d thread%s, %d rounds (medians; ratios to all on within each round)\n", description.c_str(),
                threads, threads == 1 ? "" : "s", o.reps);
    if (!o.no_roofline)
      std::printf("roofline (measured now): read bandwidth %.1f GB/s, int8 dot peak %.0f GOP/s (%s)%s\n", roof.read_gbps,
                  roof.int8_gops, roof.int8_isa,
                  roof.tile_int8_gops > 0 ? (", matrix unit " + std::to_string((int)roof.tile_int8_gops) + " GOP/s (" +
                                             roof.tile_int8_isa + ")").c_str()
                                          : "");
    std::printf("| %-22s | %9s | %6s | %8s | %9s | %6s | %8s |\n", "variant", "pp t/s", "ratio", "% int8", "tg t/s", "ratio",
                "% bw");
    std::printf("| %s | --------: | -----: | -------: | --------: | -----: | -------: |\n", std::string(22, '-').c_str());
    for (size_t i = 0; i < vs.size(); ++i) {
      const double pp = median(s[i].pp), tg = median(s[i].tg);
      std::printf("| %-22s | %9.2f | %6.3f | %7.1f%% | %9.2f | %6.3f | %7.1f%% |\n", vs[i].name.c_str(), pp,
                  median(s[i].pp_ratio), roof.int8_gops > 0 ? 100 * fpt * pp / 1e9 / roof.int8_gops : 0.0, tg,
                  median(s[i].tg_ratio), roof.read_gbps > 0 ? 100 * bpt * tg / 1e9 / roof.read_gbps : 0.0);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace hexllm::cli
