#include "cli/engine_options.h"

#include <CLI/CLI.hpp>

#include "cli/progress.h"
#include "htp-host/pool.h"

namespace hexllm::cli {

void add_engine_options(CLI::App& app, EngineOptions& opts, bool model_optional) {
  auto* m = app.add_option("-m,--model", opts.model_path,
                           model_optional ? "GGUF model file (default: the built-in tiny model)" : "GGUF model file");
  if (!model_optional) m->required();
  app.add_option("-t,--threads", opts.n_threads, "Threads (default: all hardware threads)")
      ->envname("HEXLLM_THREADS")
      ->check(CLI::Range(1, 256));
  app.add_option("-c,--ctx-size", opts.n_ctx, "Context size in tokens")
      ->envname("HEXLLM_CTX_SIZE")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("-b,--batch-size", opts.n_batch, "Tokens per evaluation graph")->check(CLI::Range(1, 1 << 16));
  app.add_option("--device", opts.device, "Backend: htp (the NPU design) or ref (reference)")
      ->envname("HEXLLM_DEVICE")
      ->check(CLI::IsMember(device_names()));
  app.add_option("--htp-threads", opts.htp_threads, "HTP device workers (default: --threads)")
      ->envname("HEXLLM_HTP_THREADS")
      ->check(CLI::Range(1, 16));
  app.add_option("--htp-devices", opts.htp_devices,
                 "HTP device sessions sharing the pool (default 1): each its own process (or thread group with "
                 "--htp-transport inproc) with --htp-threads workers (default: --threads divided among them); every "
                 "op's rows are split among them")
      ->envname("HEXLLM_HTP_DEVICES")
      ->check(CLI::Range(1, 8));
  app.add_option("--htp-vtcm", opts.htp_vtcm, "HTP VTCM arena size, e.g. 8M (default) or 256K")->envname("HEXLLM_HTP_VTCM");
  app.add_option("--htp-dma", opts.htp_dma, "HTP DMA engine: zero-copy (default), async or inline")
      ->envname("HEXLLM_HTP_DMA")
      ->check(CLI::IsMember({"zero-copy", "async", "inline"}));
  app.add_option("--htp-transport", opts.htp_transport,
                 "HTP transport: process (default: a hexllm-htp device process that maps the pool's memfds and weight "
                 "files; a device fault cannot take the host down) or inproc (device threads in this process)")
      ->envname("HEXLLM_HTP_TRANSPORT")
      ->check(CLI::IsMember({"inproc", "process"}));
  app.add_option("--htp-target", opts.htp_target,
                 "HTP device process target: host (default: the x86 hexllm-htp) or hexagon (the Hexagon hexllm-htp "
                 "of build/hexagon/ under qemu-hexagon: the same results, emulated and much slower)")
      ->envname("HEXLLM_HTP_TARGET")
      ->check(CLI::IsMember({"host", "hexagon"}));
  app.add_option("--htp-window", opts.htp_window,
                 "HTP device window: most pool bytes mapped at once, e.g. 3.5G or 512M (default 3.5G; 1G for "
                 "--htp-target hexagon); weights beyond it slide through in layer order")
      ->envname("HEXLLM_HTP_WINDOW");
  app.add_option("--htp-weights-dir", opts.htp_weights_dir,
                 "HTP weight memory: unlinked files in this directory, which get 2 MiB pages on a disk filesystem "
                 "whose page cache has large folios (ext4 on recent kernels), or memfd (shared memory, 4 KiB pages "
                 "unless shmem THP is on); "
                 "default " + std::string(htp_host::Pool::kDefaultWeightsDir) + ", falling back to memfd where files cannot be made there")
      ->envname("HEXLLM_HTP_WEIGHTS_DIR");
  app.add_option("--htp-timeout", opts.htp_timeout,
                 "HTP device process: seconds without an op finishing before the device counts as hung (default 10; 300 for "
                 "--htp-target hexagon; 0: never)")
      ->envname("HEXLLM_HTP_TIMEOUT")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--htp-restart", opts.htp_restart,
               "HTP device process: restart a dead or hung device (same pool, no weight reload) and retry the batch")
      ->envname("HEXLLM_HTP_RESTART");
  app.add_option("--htp-device", opts.htp_device, "HTP device process binary (default: hexllm-htp next to hexllm)")
      ->envname("HEXLLM_HTP_DEVICE");
  app.add_flag("--htp-profile", opts.htp_profile,
               "HTP: print device time per op kind (with the matmuls' weight GB/s) and the host's time per call phase when the model closes")
      ->envname("HEXLLM_HTP_PROFILE");
  app.add_option("--htp-profile-json", opts.htp_profile_json,
                 "HTP: write the host profile (phases, graph cache, coverage) as JSON to this file at exit")
      ->envname("HEXLLM_HTP_PROFILE_JSON");
  app.add_option("--htp-trace", opts.htp_trace,
                 "HTP: write a Perfetto timeline of every device call (Chrome trace-event JSON; open it at "
                 "ui.perfetto.dev) to this file")
      ->envname("HEXLLM_HTP_TRACE");
  app.add_option("--htp-graph-cache", opts.htp_graph_cache,
                 "HTP: reuse the prepared batches of a graph seen before (on, the default, or off)")
      ->envname("HEXLLM_HTP_GRAPH_CACHE")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--htp-fuse", opts.htp_fuse,
                 "HTP: fusions the prepare stage may form: all (default), none, or a comma list of: rms_norm_mul, "
                 "mul_mat_add, qkv, ffn, moe_ffn")
      ->envname("HEXLLM_HTP_FUSE");
  app.add_option("--htp-reorder", opts.htp_reorder,
                 "HTP: move matmuls that share an activation next to each other so they fuse (on, the default, "
                 "or off)")
      ->envname("HEXLLM_HTP_REORDER")
      ->check(CLI::IsMember({"on", "off"}));
}

std::unique_ptr<Engine> open_engine_with_progress(EngineOptions opts) {
  ProgressBar bar("loading model");
  opts.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  auto engine = open_engine(opts);
  bar.finish();
  return engine;
}

}  // namespace hexllm::cli
