// Whole-op MUL_MAT throughput through the HTP backend (not a test: prints figures).
//   decode (N = 1):   GB/s of tiled weight bytes, against the read bandwidth measured in the same
//                     run; the weights cycle through more memory than the L3 holds (copies of the
//                     matrix as separate nodes of one batch, like a model's layers).
//   prefill (N = 512): GFLOP/s (2 * M * N * K).
// Each line: median [best] over runs of the device time per op (wall clock, what a user sees;
// the best run approximates an idle machine) and, in parentheses, the rate from process CPU
// time / workers (robust when other jobs share the cores; inflated by spinning waits).
// Usage: hexllm_matmul_bench [reps [filter]]   `filter` keeps lines whose label contains it.
#include <immintrin.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/fp16.h"
#include "graph/context.h"
#include "graph/graph.h"
#include "graph/ops.h"
#include "htp-host/htp_backend.h"

using namespace hexllm;

namespace {

double wall() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double process_cpu() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Streaming read bandwidth over 1 GiB on `threads` threads, GB/s: median and best by wall
// clock, and the median from the CPU time each thread spent (robust on a shared machine).
struct Bandwidth {
  double median, best, cpu;
};

double thread_cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((target("avx2"))) uint64_t read_sum(const uint8_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 128) {
    a = _mm256_add_epi64(a, _mm256_load_si256((const __m256i*)(p + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256((const __m256i*)(p + i + 32)));
    c = _mm256_add_epi64(c, _mm256_load_si256((const __m256i*)(p + i + 64)));
    d = _mm256_add_epi64(d, _mm256_load_si256((const __m256i*)(p + i + 96)));
  }
  uint64_t r[4];
  _mm256_storeu_si256((__m256i*)r, _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return r[0] + r[1] + r[2] + r[3];
}

Bandwidth bench_bandwidth(int threads, int reps) {
  const size_t bytes = size_t(1) << 30;
  auto* buf = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes));
  std::memset(buf, 1, bytes);
  std::vector<double> gbs, cpu_gbs;
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<double> cpu(threads);
    const double t0 = wall();
    std::vector<std::thread> th;
    for (int i = 0; i < threads; ++i)
      th.emplace_back([&, i] {
        const double c0 = thread_cpu();
        sink = sink + read_sum(buf + bytes / threads * i, bytes / threads);
        cpu[i] = thread_cpu() - c0;
      });
    for (auto& t : th) t.join();
    gbs.push_back(bytes / (wall() - t0) / 1e9);
    cpu_gbs.push_back(bytes / *std::max_element(cpu.begin(), cpu.end()) / 1e9);
  }
  std::free(buf);
  return {median(gbs), *std::max_element(gbs.begin(), gbs.end()), median(cpu_gbs)};
}

// GGUF rows with random codes and small finite scales (the quantizers are far too slow for a
// 128k-row matrix; the kernels' speed does not depend on the values).
std::vector<uint8_t> random_weight(Type type, int64_t k, int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t rb = row_size(type, k);
  std::vector<uint8_t> w(rb * rows);
  for (size_t i = 0; i + 8 <= w.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(w.data() + i, &v, 8);
  }
  const uint16_t d = fp32_to_fp16(0.01f);
  const size_t bs = type_size(type);
  for (size_t off = 0; off < w.size(); off += bs) {
    if (type == Type::Q6_K) std::memcpy(w.data() + off + 208, &d, 2);  // d is last in block_q6_K
    else std::memcpy(w.data() + off, &d, 2);                          // d leads Q4_0 and Q8_0
  }
  return w;
}

struct Case {
  const char* what;
  Type type;
  int64_t k, m;
};

struct Result {
  double med, best, cpu;  // rates
};

// Runs `copies` MUL_MATs of [k x m] weights (distinct copies) against one [k x n] input,
// `reps` times; returns per-op rates from the device op times.
Result run_case(const Case& c, int64_t n, uint32_t threads, uint32_t dma, int reps, bool decode) {
  const std::vector<uint8_t> w = random_weight(c.type, c.k, c.m, 1);
  const double tiled = (double)w.size();  // same bytes as the tiles for Q4_0/Q8_0/Q6_K
  const int copies = decode ? std::max<int>(1, (int)((320u << 20) / w.size())) : 1;

  htp_host::HtpOptions opts;
  opts.n_threads = threads;
  opts.dma_mode = dma;
  htp_host::HtpBackend htp(opts);
  graph::Context ctx;
  graph::Tensor* x = ctx.new_tensor(Type::F32, {c.k, n});
  auto xbuf = htp.alloc_buffer(backend::MemoryKind::Compute, x->n_bytes());
  x->data = xbuf->data();
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  for (int64_t i = 0; i < c.k * n; ++i) static_cast<float*>(x->data)[i] = nd(rng);

  std::vector<graph::Tensor*> weights, nodes;
  std::vector<std::unique_ptr<backend::Buffer>> outs;
  for (int i = 0; i < copies; ++i) {
    graph::Tensor* wt = ctx.new_tensor(c.type, {c.k, c.m});
    wt->data = const_cast<uint8_t*>(w.data());
    wt->flags |= graph::kFlagWeight;
    weights.push_back(wt);
    graph::Tensor* y = graph::mul_mat(ctx, wt, x);
    outs.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, y->n_bytes()));
    y->data = outs.back()->data();
    nodes.push_back(y);
  }
  htp.load_weights(weights, nullptr, nullptr);
  if (!htp.supports(*nodes[0])) {
    std::printf("%s: the device refused the op\n", c.what);
    std::exit(1);
  }
  htp.compute(nodes);  // warm-up: page faults, caches, frequency
  const double work = decode ? tiled : 2.0 * c.k * c.m * n;  // bytes or FLOP per op
  std::vector<double> rates, cpu_rates;
  for (int r = 0; r < reps; ++r) {
    const double cpu0 = process_cpu();
    htp.compute(nodes);
    const double cpu = process_cpu() - cpu0;
    double total = 0;
    for (uint64_t ns : htp.last_op_ns()) {
      rates.push_back(work / (ns * 1e-9) / 1e9);
      total += ns * 1e-9;
    }
    (void)total;
    cpu_rates.push_back(work * copies / (cpu / threads) / 1e9);
  }
  return {median(rates), *std::max_element(rates.begin(), rates.end()), median(cpu_rates)};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::string filter = argc > 2 ? argv[2] : "";
  auto want = [&](const std::string& label) { return label.find(filter) != std::string::npos; };
  std::printf("HTP MUL_MAT through the backend, %d runs: median [best] (rate from CPU time / workers)\n", reps);
  Bandwidth bw[3];
  for (int t : {1, 2}) {
    bw[t] = bench_bandwidth(t, reps);
    std::printf("threads %d: read bandwidth %.1f GB/s [best %.1f] (%.1f GB/s from CPU time)\n", t, bw[t].median,
                bw[t].best, bw[t].cpu);
  }
  // The matmuls of one Llama-3.2-1B layer (K/V, Q/O, gate/up, down) and its Q6_K lm head.
  const Case cases[] = {{"Q4_0 [2048 x 512]", Type::Q4_0, 2048, 512},
                        {"Q4_0 [2048 x 2048]", Type::Q4_0, 2048, 2048},
                        {"Q4_0 [2048 x 8192]", Type::Q4_0, 2048, 8192},
                        {"Q4_0 [8192 x 2048]", Type::Q4_0, 8192, 2048},
                        {"Q6_K [2048 x 128256]", Type::Q6_K, 2048, 128256},
                        // The 1B Q8_0's gate/up and down: Q8_0 prefill trails Q4_0's.
                        {"Q8_0 [2048 x 8192]", Type::Q8_0, 2048, 8192},
                        {"Q8_0 [8192 x 2048]", Type::Q8_0, 8192, 2048},
                        // Qwen2.5-0.5B's small matrices: per-op costs weigh most here.
                        {"Q4_0 [896 x 896]", Type::Q4_0, 896, 896},
                        {"Q4_0 [896 x 4864]", Type::Q4_0, 896, 4864},
                        // Its FFN down: long K, so few row tiles per prefill unit (DESIGN §10).
                        {"Q4_0 [4864 x 896]", Type::Q4_0, 4864, 896}};
  const char* modes[] = {"async", "inline", "zero-copy"};
  for (int64_t n : {1, 512})
    for (const Case& c : cases)
      for (uint32_t dma : {HTP_DMA_ZERO_COPY, HTP_DMA_ASYNC})
        for (uint32_t t : {1u, 2u}) {
          char label[160];
          std::snprintf(label, sizeof label, "%s N=%-3lld %-9s threads %u", c.what, (long long)n, modes[dma], t);
          if (!want(label)) continue;
          const bool decode = n == 1;
          const Result r = run_case(c, n, t, dma, reps, decode);
          if (decode)
            std::printf("%s: %5.1f GB/s [%5.1f] = %3.0f%% [%3.0f%%] of read bandwidth (%5.1f GB/s = %3.0f%%)\n", label,
                        r.med, r.best, 100 * r.med / bw[t].median, 100 * r.best / bw[t].best, r.cpu,
                        100 * r.cpu / bw[t].cpu);
          else
            std::printf("%s: %6.1f GFLOP/s [%6.1f] (%6.1f)\n", label, r.med, r.best, r.cpu);
          std::fflush(stdout);
        }
  return 0;
}
