// Roofline and kernel throughput of the vec layer on this machine (not a test: prints figures).
//   memory bandwidth: streaming read over 1 GiB, 1 and 2 threads
//   int8 peak: register-only maddubs/madd loop (the instructions the AVX2 kernels use)
//   GEMV: GB/s of tiled weight bytes, matrices cycled through more memory than the L3 holds
//     (whole matrices, decode units of a small one, and hot in L2)
//   GEMM: GFLOP/s (2*M*N*K) at M activation rows, weights chunked to stay in L2
// Usage: hexllm_vec_bench [reps [filter]]   medians of `reps` runs (default 7); `filter` keeps only
// the lines whose label contains it (e.g. "GEMM Q4_0"); the roofline always runs.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/fp16.h"
#include "quant/types.h"
#include "htp/vec/repack.h"
#include "htp/vec/vec.h"

using namespace hexllm;
using namespace hexllm::htp;

namespace {

// CPU time of the calling thread: the machine is shared (other builds run on its 2 cores), so
// rates are computed from the time each thread was actually on a CPU, not from wall time.
double thread_cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double wall() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A rate measured both ways: from per-thread CPU time (robust on a shared machine) and from wall
// time (what a user sees; equal to the first on an idle machine).
struct Rate {
  double cpu, wall;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Two-thread spin pool: part 0 runs on the caller, part 1 on a persistent worker, so the
// per-call cost is a cache-line handoff, not a thread creation.
class Pool {
 public:
  explicit Pool(int n) : n_(n) {
    if (n_ > 1) worker_ = std::thread([this] { loop(); });
  }
  ~Pool() {
    if (n_ > 1) {
      stop_ = true;
      gen_.fetch_add(1);
      worker_.join();
    }
  }
  int size() const { return n_; }
  // Runs f(i, n) on every thread; returns the largest CPU time one part took (wall time of the
  // call in last_wall).
  double run(const std::function<void(int, int)>& f) {
    const double w0 = wall();
    const double t0 = thread_cpu();
    if (n_ == 1) {
      f(0, 1);
      last_wall = wall() - w0;
      return thread_cpu() - t0;
    }
    job_ = &f;
    done_.store(0);
    gen_.fetch_add(1, std::memory_order_release);
    f(0, n_);
    const double mine = thread_cpu() - t0;
    while (done_.load(std::memory_order_acquire) == 0) _mm_pause();
    last_wall = wall() - w0;
    return std::max(mine, worker_cpu_);
  }
  double last_wall = 0;

 private:
  void loop() {
    int seen = gen_.load();
    for (;;) {
      int g;
      while ((g = gen_.load(std::memory_order_acquire)) == seen) _mm_pause();
      seen = g;
      if (stop_) return;
      const double t0 = thread_cpu();
      (*job_)(1, n_);
      worker_cpu_ = thread_cpu() - t0;
      done_.store(1, std::memory_order_release);
    }
  }
  int n_;
  std::thread worker_;
  std::atomic<int> gen_{0}, done_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int, int)>* job_ = nullptr;
  double worker_cpu_ = 0;
};

__attribute__((target("avx2"))) uint64_t read_sum(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i*)(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256((const __m256i*)(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256((const __m256i*)(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256((const __m256i*)(p + i + 96)));
  }
  a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  uint64_t r[4];
  _mm256_storeu_si256((__m256i*)r, a0);
  return r[0] + r[1] + r[2] + r[3];
}

Rate bench_bandwidth(Pool& pool, int reps) {
  const size_t n = size_t(1) << 30;
  auto* buf = (uint8_t*)std::aligned_alloc(4096, n);
  pool.run([&](int i, int t) { std::memset(buf + n / t * i, 1, n / t); });  // first touch per thread
  std::vector<double> gbs, wgbs;
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; r++) {
    const double sec = pool.run([&](int i, int t) { sink = sink + read_sum(buf + n / t * i, n / t); });
    gbs.push_back(n / sec / 1e9);
    wgbs.push_back(n / pool.last_wall / 1e9);
  }
  std::free(buf);
  return {median(gbs), median(wgbs)};
}

// Register-only int8 multiply peak: vpmaddubsw (32 MACs) + vpaddw, the pair the kernels' inner
// loops are made of, on 8 independent chains. Written in asm so the compiler's register
// allocation cannot turn it into a memory-latency test.
int peak_loop(int64_t iters) {
  __asm__ volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
      "vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n\t"
      "vpabsb %%ymm15, %%ymm15\n\t"
      "vmovdqa %%ymm15, %%ymm14\n\t"
      "vmovdqa %%ymm0, %%ymm1\n\t vmovdqa %%ymm0, %%ymm2\n\t vmovdqa %%ymm0, %%ymm3\n\t"
      "vmovdqa %%ymm0, %%ymm4\n\t vmovdqa %%ymm0, %%ymm5\n\t vmovdqa %%ymm0, %%ymm6\n\t vmovdqa %%ymm0, "
      "%%ymm7\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm8\n\t vpaddw %%ymm8, %%ymm0, %%ymm0\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm9\n\t vpaddw %%ymm9, %%ymm1, %%ymm1\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm10\n\t vpaddw %%ymm10, %%ymm2, %%ymm2\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm11\n\t vpaddw %%ymm11, %%ymm3, %%ymm3\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm8\n\t vpaddw %%ymm8, %%ymm4, %%ymm4\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm9\n\t vpaddw %%ymm9, %%ymm5, %%ymm5\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm10\n\t vpaddw %%ymm10, %%ymm6, %%ymm6\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm11\n\t vpaddw %%ymm11, %%ymm7, %%ymm7\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iters)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm14", "xmm15", "cc");
  return (int)iters;
}

// GMAC/s of int8 multiply-accumulates (1 MAC = 2 ops).
Rate bench_int8_peak(Pool& pool, int reps) {
  const int64_t iters = 50'000'000;
  std::vector<double> v, vw;
  for (int r = 0; r < reps; r++) {
    const double sec = pool.run([&](int, int) {
      volatile int sink = peak_loop(iters);
      (void)sink;
    });
    v.push_back(pool.size() * iters * 8 * 32.0 / sec / 1e9);
    vw.push_back(pool.size() * iters * 8 * 32.0 / pool.last_wall / 1e9);
  }
  return {median(v), median(vw)};
}

// A realistic weight matrix: 64 random GGUF rows repacked, then copied over all row tiles.
std::vector<uint8_t> make_tiles(uint32_t tt, uint32_t nrows, uint32_t k) {
  const Type src = static_cast<Type>(htp_tile_info(tt).src);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0, 1);
  const size_t rb = row_size(src, k);
  std::vector<uint8_t> rows(rb * 64);
  for (auto& b : rows) b = (uint8_t)rng();
  // Sane scale fields: overwrite every f16 d/m (first 2/4 bytes of each block) where present.
  const uint32_t bs = type_size(src), nb = (uint32_t)(rb / bs);
  for (uint32_t r = 0; r < 64; r++)
    for (uint32_t b = 0; b < nb; b++) {
      uint8_t* p = rows.data() + r * rb + b * bs;
      const uint16_t h = fp32_to_fp16(0.01f);
      if (src == Type::F32) {
        const float f = nd(rng);
        std::memcpy(p, &f, 4);
      } else if (src == Type::F16 || src == Type::BF16) {
        const uint16_t x = fp32_to_fp16(nd(rng) * 0.1f);
        std::memcpy(p, &x, 2);
      } else if (src == Type::Q6_K) {
        std::memcpy(p + 208, &h, 2);
      } else if (src == Type::MXFP4) {
        p[0] = 120;
      } else {
        std::memcpy(p, &h, 2);
        if (src == Type::Q4_1 || src == Type::Q5_1 || src == Type::Q4_K || src == Type::Q5_K)
          std::memcpy(p + 2, &h, 2);
      }
    }
  std::vector<uint8_t> seed(htp_tiled_size(tt, 64, k));
  vec_repack(tt, rows.data(), rb, 64, k, seed.data());
  std::vector<uint8_t> tiles(htp_tiled_size(tt, nrows, k));
  for (size_t off = 0; off < tiles.size(); off += seed.size())
    std::memcpy(tiles.data() + off, seed.data(), std::min(seed.size(), tiles.size() - off));
  return tiles;
}

std::vector<uint8_t> make_act(const vec_kernels& kern, uint32_t tt, uint32_t k, uint32_t m) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> x((size_t)k * m);
  for (auto& v : x) v = nd(rng);
  const size_t ab = htp_act_row_bytes(tt, k);
  std::vector<uint8_t> act(ab * m);
  for (uint32_t i = 0; i < m; i++) kern.quant_for_tile(tt)(x.data() + (size_t)i * k, act.data() + i * ab, k);
  return act;
}

// Rows of tile range split in whole tiles over the pool's threads.
void split(uint32_t nrows, int i, int n, uint32_t& r0, uint32_t& r1) {
  const uint32_t tiles = htp_tile_count(nrows);
  r0 = std::min(nrows, tiles * i / n * kHtpTileRows);
  r1 = std::min(nrows, tiles * (i + 1) / n * kHtpTileRows);
}

// Enough copies of a [k x n] tiled matrix (320 MiB) that a pass over them streams from DRAM.
struct DramMatrices {
  std::vector<uint8_t> all;
  size_t one_bytes, copies;
  DramMatrices(uint32_t tt, uint32_t k, uint32_t n) {
    const auto one = make_tiles(tt, n, k);
    one_bytes = one.size();
    copies = std::max<size_t>(1, (size_t(320) << 20) / one.size());
    all.resize(one.size() * copies);
    for (size_t c = 0; c < copies; c++) std::memcpy(all.data() + c * one.size(), one.data(), one.size());
  }
  const uint8_t* copy(size_t c) const { return all.data() + c * one_bytes; }
};

// GEMV over enough copies of the matrix that every call streams from DRAM. Returns GB/s.
Rate bench_gemv(Pool& pool, const vec_kernels& kern, uint32_t tt, uint32_t k, uint32_t n, int reps) {
  const DramMatrices m(tt, k, n);
  const size_t copies = m.copies;
  const auto& all = m.all;
  const auto act = make_act(kern, tt, k, 1);
  std::vector<float> y(n);
  const size_t rb = htp_tile_row_bytes(tt, k);
  auto call = [&](size_t c) {
    return pool.run([&](int i, int t) {
      uint32_t r0, r1;
      split(n, i, t, r0, r1);
      kern.for_tile(tt).gemv(m.copy(c) + r0 / kHtpTileRows * rb, act.data(), y.data() + r0, k, r1 - r0);
    });
  };
  for (size_t c = 0; c < copies; c++) call(c);  // warm up (page faults, frequency)
  std::vector<double> v, vw;
  for (int r = 0; r < reps; r++) {
    double sec = 0, wsec = 0;
    for (size_t c = 0; c < copies; c++) {
      sec += call(c);
      wsec += pool.last_wall;
    }
    v.push_back(all.size() / sec / 1e9);
    vw.push_back(all.size() / wsec / 1e9);
  }
  return {median(v), median(vw)};
}

// GEMV on one thread over DRAM-resident copies of a [k x n] matrix in units of `units[i]` row
// tiles, called one after another as a decode matmul's worker takes them: what starting a unit
// costs. The unit sizes take turns within each round, so drift hits all alike. GB/s of tiled
// weight bytes, the median of `reps` rounds for each size.
std::vector<double> bench_gemv_units(const vec_kernels& kern, uint32_t tt, uint32_t k, uint32_t n,
                                     const std::vector<uint32_t>& units, int reps) {
  const DramMatrices m(tt, k, n);
  const auto act = make_act(kern, tt, k, 1);
  std::vector<float> y(n);
  const size_t rb = htp_tile_row_bytes(tt, k);
  const uint32_t tiles = htp_tile_count(n);
  auto pass = [&](uint32_t unit) {
    const double t0 = thread_cpu();
    for (size_t c = 0; c < m.copies; c++)
      for (uint32_t t = 0; t < tiles; t += unit)
        kern.for_tile(tt).gemv(m.copy(c) + t * rb, act.data(), y.data() + t * kHtpTileRows, k,
                               std::min(unit * kHtpTileRows, n - t * kHtpTileRows));
    return m.all.size() / (thread_cpu() - t0) / 1e9;
  };
  for (uint32_t u : units) pass(u);  // warm-up
  std::vector<std::vector<double>> v(units.size());
  for (int r = 0; r < reps; r++)
    for (size_t i = 0; i < units.size(); i++) v[i].push_back(pass(units[i]));
  std::vector<double> out;
  for (auto& x : v) out.push_back(median(x));
  return out;
}

// GEMV on one thread over a matrix that stays in L2 (~160 KiB): the kernel's compute ceiling,
// GB/s of tiled weight bytes. Under the read bandwidth means the kernel, not DRAM, limits decode.
double bench_gemv_hot(const vec_kernels& kern, uint32_t tt, uint32_t k, int reps) {
  const size_t rb = htp_tile_row_bytes(tt, k);
  const uint32_t n = std::max<uint32_t>(1, (uint32_t)((160u << 10) / rb)) * kHtpTileRows;
  const auto w = make_tiles(tt, n, k);
  const auto act = make_act(kern, tt, k, 1);
  std::vector<float> y(n);
  const int calls = std::max(1, (int)((size_t(256) << 20) / w.size()));
  std::vector<double> v;
  for (int r = 0; r < reps + 1; r++) {
    const double t0 = thread_cpu();
    for (int c = 0; c < calls; c++) kern.for_tile(tt).gemv(w.data(), act.data(), y.data(), k, n);
    const double sec = thread_cpu() - t0;
    if (r > 0) v.push_back((double)w.size() * calls / sec / 1e9);  // first run: warm-up
  }
  return median(v);
}

// GEMM GFLOP/s with m activation rows. Each thread walks its rows in chunks of `chunk` rows
// (weights of a chunk stay in L2) against all activation rows.
Rate bench_gemm(Pool& pool, const vec_kernels& kern, uint32_t tt, uint32_t k, uint32_t n, uint32_t m,
                int reps, double* quant_ms) {
  const auto w = make_tiles(tt, n, k);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> x((size_t)k * m);
  for (auto& v : x) v = nd(rng);
  const size_t ab = htp_act_row_bytes(tt, k), rb = htp_tile_row_bytes(tt, k);
  std::vector<uint8_t> act(ab * m);
  std::vector<float> y((size_t)n * m);
  const uint32_t chunk = std::max<uint32_t>(8, (uint32_t)((256u << 10) / rb) * kHtpTileRows);
  std::vector<double> v, vw, q;
  for (int r = 0; r < reps + 1; r++) {
    const double qsec = pool.run([&](int i, int t) {
      for (uint32_t j = m * i / t; j < m * (i + 1) / t; j++)
        kern.quant_for_tile(tt)(x.data() + (size_t)j * k, act.data() + j * ab, k);
    });
    const double sec = pool.run([&](int i, int t) {
      uint32_t r0, r1;
      split(n, i, t, r0, r1);
      for (uint32_t c0 = r0; c0 < r1; c0 += chunk) {
        const uint32_t c1 = std::min(r1, c0 + chunk);
        kern.for_tile(tt).gemm(w.data() + c0 / kHtpTileRows * rb, act.data(), ab, m, y.data() + c0, n, k,
                               c1 - c0);
      }
    });
    if (r == 0) continue;  // warm-up
    v.push_back(2.0 * m * n * k / sec / 1e9);
    vw.push_back(2.0 * m * n * k / pool.last_wall / 1e9);
    q.push_back(qsec * 1e3);
  }
  *quant_ms = median(q);
  return {median(v), median(vw)};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string filter = argc > 2 ? argv[2] : "";
  auto want = [&](const std::string& label) { return label.find(filter) != std::string::npos; };
  const vec_kernels& kern = htp_vec_select();
  std::printf("kernels: %s%s%s, reps %d (medians)\n", kern.name, *kern.gemv_variant ? ", " : "", kern.gemv_variant, reps);
  std::printf("rates from per-thread CPU time; [wall-clock rate] in brackets\n");
  Pool p1(1), p2(2);
  Rate bw[3], peak[3];
  for (int t : {1, 2}) {
    Pool& p = t == 1 ? p1 : p2;
    bw[t] = bench_bandwidth(p, reps);
    peak[t] = bench_int8_peak(p, reps);
    std::printf("threads %d: read bandwidth %.1f GB/s [%.1f], int8 peak %.1f GMAC/s = %.0f GOP/s [%.0f]\n", t,
                bw[t].cpu, bw[t].wall, peak[t].cpu, 2 * peak[t].cpu, 2 * peak[t].wall);
  }
  struct G {
    const char* what;
    uint32_t tt, k, n;
  };
  const G gemvs[] = {{"Q4_0 [2048 x 8192]", HTP_TILE_Q4_0_X8, 2048, 8192},
                     {"Q6_K [2048 x 128256]", HTP_TILE_Q6_K_X8, 2048, 128256},
                     {"Q8_0 [896 x 151936]", HTP_TILE_Q8_0_X8, 896, 151936},
                     {"Q4_K [2048 x 8192]", HTP_TILE_Q4_K_X8, 2048, 8192},
                     {"F16 [2048 x 8192]", HTP_TILE_F16_X8, 2048, 8192}};
  for (const G& g : gemvs)
    for (int t : {1, 2}) {
      if (!want(std::string("GEMV ") + g.what)) continue;
      const Rate r = bench_gemv(t == 1 ? p1 : p2, kern, g.tt, g.k, g.n, reps);
      std::printf("GEMV %-22s threads %d: %5.1f GB/s = %3.0f%% of read bandwidth [%5.1f GB/s]\n", g.what, t,
                  r.cpu, 100 * r.cpu / bw[t].cpu, r.wall);
    }
  // Decode units of a small matrix (qwen2.5-0.5b's attention output, Q4_0 [896 x 896], 112 row
  // tiles of 4032 bytes): HTP_MM_GEMV_MIN_UNIT_BYTES is set from these.
  if (want("GEMV units Q4_0 [896 x 896]")) {
    const std::vector<uint32_t> units = {4, 12, 16, 28, 56, 112};
    const std::vector<double> r = bench_gemv_units(kern, HTP_TILE_Q4_0_X8, 896, 896, units, reps);
    for (size_t i = 0; i < units.size(); i++)
      std::printf("GEMV units Q4_0 [896 x 896] %3u tiles threads 1: %5.1f GB/s = %3.0f%% of read bandwidth\n",
                  units[i], r[i], 100 * r[i] / bw[1].cpu);
  }
  for (const G& g : gemvs) {
    if (!want(std::string("GEMV hot ") + g.what)) continue;
    const double hot = bench_gemv_hot(kern, g.tt, g.k, reps);
    std::printf("GEMV hot %-18s threads 1: %5.1f GB/s from L2 = %3.0f%% of 1-thread read bandwidth\n", g.what,
                hot, 100 * hot / bw[1].cpu);
  }
  const uint32_t m = 512;
  const G gemms[] = {{"Q4_0 [2048 x 8192]", HTP_TILE_Q4_0_X8, 2048, 8192},
                     {"Q8_0 [2048 x 8192]", HTP_TILE_Q8_0_X8, 2048, 8192},
                     {"Q4_K [2048 x 8192]", HTP_TILE_Q4_K_X8, 2048, 8192},
                     {"Q6_K [8192 x 2048]", HTP_TILE_Q6_K_X8, 8192, 2048},
                     {"F16 [2048 x 8192]", HTP_TILE_F16_X8, 2048, 8192}};
  for (const G& g : gemms)
    for (int t : {1, 2}) {
      if (!want(std::string("GEMM ") + g.what)) continue;
      double qms;
      const Rate r = bench_gemm(t == 1 ? p1 : p2, kern, g.tt, g.k, g.n, m, reps, &qms);
      std::printf(
          "GEMM %-22s M=%u threads %d: %5.1f GFLOP/s = %3.0f%% of int8 peak [%5.1f] (act quant %.2f ms)\n",
          g.what, m, t, r.cpu, 100 * r.cpu / (2 * peak[t].cpu), r.wall, qms);
    }
  return 0;
}
