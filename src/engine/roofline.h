// This machine's limits, measured in the same run as a benchmark so that every speed can be
// stated as a fraction of them: streaming read bandwidth (token generation is bound by it) and
// the int8 dot-product peak (prompt processing is bound by it), and the F32 FMA peak.
#pragma once

#include <cstddef>

namespace hexllm {

struct Roofline {
  int threads = 1;
  double read_gbps = 0;      // GB/s (1e9 bytes) streaming a buffer far larger than the caches, huge pages where given
  double read_gbps_4k = 0;   // the same on 4 KiB pages (what memory without huge pages reaches)
  const char* read_reader = "";  // the reader that reached read_gbps (streams, prefetch distance)
  double int8_gops = 0;      // int8 ops/s (a multiply-add counts 2), register-only, all threads (per-thread CPU time)
  const char* int8_isa = "";  // the instruction the peak was measured with (the CPU's best)
  double f32_gflops = 0;      // F32 FMA peak (a fused multiply-add counts 2), as int8_gops
  const char* f32_isa = "";
  // A matrix unit's int8 peak where the CPU has one (AMX tdpbssd), as int8_gops, and its bf16
  // peak (tdpbf16ps: what the amx prefill GEMMs run on); 0 elsewhere.
  double tile_int8_gops = 0;
  const char* tile_int8_isa = "";
  double tile_bf16_gflops = 0;
};

// Takes one to two seconds per call.
Roofline measure_roofline(int threads);

// The int8 dot rate (GOP/s, the roofline's instruction) that `threads` threads get now, by wall
// clock over ~40 ms (vpdpbusd zmm; ~0.1 s for vpmaddubsw); 0 where there is no int8 probe.
// Taken beside each prompt-processing run: on a shared machine what a core gives moves by tens
// of percent within minutes (another guest on its sibling hyperthread), and the roofline's best
// of 3 is what it gave at its best.
double int8_gops_now(int threads);

// `threads` readers streaming their shares of a 1 GiB buffer, mapped and touched once, so that
// the read bandwidth can also be taken beside each timed run: on a shared machine it drifts by
// tens of percent within minutes, and a run is best compared with what the memory gave then.
class ReadProbe {
 public:
  ReadProbe(int threads, bool huge_pages);
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;

  // GB/s: the best of `passes` passes of every reader configuration (the roofline's figure);
  // `reader`, if given, gets the name of the one that reached it.
  double best_gbps(int passes, const char** reader = nullptr) const;
  // GB/s: the best of one pass each of the quick readers (~0.15 s at 30 GB/s).
  double quick_gbps() const;

 private:
  static constexpr size_t kBytes = size_t{1} << 30;
  double pass_gbps(int config) const;
  int n_configs() const;
  const char* config_name(int config) const;
  int threads_;
  bool avx2_ = false;
  void* mem_;
};

}  // namespace hexllm
