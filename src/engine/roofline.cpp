#include "engine/roofline.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"

namespace hexllm {

namespace {

using Clock = std::chrono::steady_clock;

// Runs fn(i) on `threads` threads released together; returns the wall seconds of the slowest.
template <typename Fn>
double run_parallel(int threads, Fn fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> seconds(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      const auto t0 = Clock::now();
      fn(i);
      seconds[static_cast<size_t>(i)] = std::chrono::duration<double>(Clock::now() - t0).count();
    });
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true);
  for (auto& t : pool) t.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint8_t* p, size_t bytes) {
  typedef long long v4 __attribute__((vector_size(32)));
  v4 a = {0, 0, 0, 0}, b = a, c = a, d = a;
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    v4 x0, x1, x2, x3;
    std::memcpy(&x0, p + i, 32);
    std::memcpy(&x1, p + i + 32, 32);
    std::memcpy(&x2, p + i + 64, 32);
    std::memcpy(&x3, p + i + 96, 32);
    a += x0, b += x1, c += x2, d += x3;
  }
  const v4 s = a + b + c + d;
  return static_cast<uint64_t>(s[0] + s[1] + s[2] + s[3]);
}

// Register-only vpmaddubsw (32 int8 multiply-adds) + vpaddw on 8 independent chains: the pair
// our AVX2 int8 kernels are built from.
__attribute__((target("avx2"))) int int8_loop(int64_t iters) {
  int out;
  __asm__ volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
      "vpxor %%ymm2, %%ymm2, %%ymm2\n\t vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
      "vpcmpeqb %%ymm14, %%ymm14, %%ymm14\n\t vpabsb %%ymm14, %%ymm15\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm8\n\t vpaddw %%ymm8, %%ymm0, %%ymm0\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm9\n\t vpaddw %%ymm9, %%ymm1, %%ymm1\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm10\n\t vpaddw %%ymm10, %%ymm2, %%ymm2\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm11\n\t vpaddw %%ymm11, %%ymm3, %%ymm3\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm8\n\t vpaddw %%ymm8, %%ymm0, %%ymm0\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm9\n\t vpaddw %%ymm9, %%ymm1, %%ymm1\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm10\n\t vpaddw %%ymm10, %%ymm2, %%ymm2\n\t"
      "vpmaddubsw %%ymm14, %%ymm15, %%ymm11\n\t vpaddw %%ymm11, %%ymm3, %%ymm3\n\t"
      "dec %1\n\t jnz 1b\n\t"
      "vpaddw %%ymm1, %%ymm0, %%ymm0\n\t vmovd %%xmm0, %0\n\t vzeroupper"
      : "=r"(out), "+r"(iters)
      :
      : "ymm0", "ymm1", "ymm2", "ymm3", "ymm8", "ymm9", "ymm10", "ymm11", "ymm14", "ymm15", "cc");
  return out;
}
constexpr double kOpsPerIter = 8 * 32 * 2;  // 8 vpmaddubsw of 32 multiply-adds each
#endif

uint64_t read_sum_scalar(const uint8_t* p, size_t bytes) {
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    s += x;
  }
  return s;
}

}  // namespace

Roofline measure_roofline(int threads) {
  Roofline r;
  r.threads = threads;
  const bool avx2 = __builtin_cpu_supports("avx2");

  // Bandwidth: each thread streams its share of 1 GiB; best of 3 passes after a warm-up.
  constexpr size_t kBytes = size_t{1} << 30;
  void* mem = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) fail("roofline: cannot map %zu bytes", kBytes);
  auto* buf = static_cast<uint8_t*>(mem);
  for (size_t i = 0; i < kBytes; i += 4096) buf[i] = static_cast<uint8_t>(i >> 12);
  std::atomic<uint64_t> sink{0};
  const size_t share = kBytes / static_cast<size_t>(threads) / 128 * 128;
  double best = 1e30;
  for (int pass = 0; pass < 4; ++pass) {
    const double s = run_parallel(threads, [&](int i) {
      const uint8_t* p = buf + share * static_cast<size_t>(i);
#if defined(__x86_64__)
      sink += avx2 ? read_sum_avx2(p, share) : read_sum_scalar(p, share);
#else
      sink += read_sum_scalar(p, share);
#endif
    });
    if (pass > 0) best = std::min(best, s);
  }
  ::munmap(mem, kBytes);
  r.read_gbps = static_cast<double>(share) * threads / best / 1e9;

#if defined(__x86_64__)
  if (avx2) {
    constexpr int64_t kIters = 20'000'000;
    double t = 1e30;
    for (int pass = 0; pass < 3; ++pass)
      t = std::min(t, run_parallel(threads, [&](int) { sink += static_cast<uint64_t>(int8_loop(kIters)); }));
    r.int8_gops = kOpsPerIter * static_cast<double>(kIters) * threads / t / 1e9;
    r.int8_isa = "AVX2 vpmaddubsw";
  }
#endif
  return r;
}

}  // namespace hexllm
