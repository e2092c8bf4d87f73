#include "engine/roofline.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <thread>
#include <vector>

#include "base/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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

// Indices into kReadConfigs of the readers that were best on the machines measured (2 and 8
// streams 1 KiB ahead on Xeons and a Zen 5; 4 streams 1 KiB ahead in 25 of 28 rooflines over two
// sessions on another Zen 5; 2 streams in alternate 64 KiB chunks on a Zen 3): the quick probe's;
// the first is also the warm-up pass. Only used where there are several readers (x86 with AVX2).
constexpr int kQuickReaders[] = {1, 2, 4, 6};

#if defined(__x86_64__)
// Streams of a thread's share read at once, and how far ahead software prefetch runs: one
// stream leaves a core's fill buffers idle while it waits on the next page. The best count and
// distance differ between machines (and between VMs of one machine), so the probe tries a few
// and keeps the fastest: the figure is what a well-written reader gets here.
typedef long long v4 __attribute__((vector_size(32)));

// Adds the 64-byte line at q into a stream's two accumulators.
__attribute__((target("avx2"), always_inline)) inline void add_line(const uint8_t* q, v4* acc) {
  v4 x0, x1;
  std::memcpy(&x0, q, 32);
  std::memcpy(&x1, q + 32, 32);
  acc[0] += x0, acc[1] += x1;
}

// The readers' result, so that no load is dead.
template <int Streams>
__attribute__((target("avx2"), always_inline)) inline uint64_t fold(const v4 (&acc)[Streams][2]) {
  v4 t = {0, 0, 0, 0};
  for (auto& a : acc) t += a[0] + a[1];
  return static_cast<uint64_t>(t[0] + t[1] + t[2] + t[3]);
}

template <int Streams>
__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint8_t* p, size_t bytes, size_t ahead) {
  v4 acc[Streams][2] = {};
  const size_t per = bytes / Streams / 64 * 64;
  for (size_t i = 0; i < per; i += 64) {
    for (int s = 0; s < Streams; ++s) {
      const uint8_t* q = p + s * per + i;
      if (ahead != 0) __builtin_prefetch(q + ahead);
      add_line(q, acc[s]);
    }
  }
  return fold(acc);
}

// Two streams in alternate chunks of Chunk bytes: stream 0 reads chunks 0, 2, 4, ..., stream 1
// chunks 1, 3, 5, ..., side by side, which is how the GEMV's two streams meet memory (x86_kernels.h:
// the halves of a weight unit). On a Zen 3 one core read 64 KiB chunks 1.5x faster than one
// stream, and faster than two streams far apart (share / 2: 256 MiB).
template <size_t Chunk>
__attribute__((target("avx2"))) uint64_t read_chunks_avx2(const uint8_t* p, size_t bytes, size_t ahead) {
  v4 acc[2][2] = {};
  size_t base = 0;
  for (; base + 2 * Chunk <= bytes; base += 2 * Chunk)
    for (size_t i = 0; i < Chunk; i += 64)
      for (int s = 0; s < 2; ++s) {
        const uint8_t* q = p + base + s * Chunk + i;
        if (ahead != 0) __builtin_prefetch(q + ahead);
        add_line(q, acc[s]);
      }
  for (; base + 64 <= bytes; base += 64) add_line(p + base, acc[0]);  // the tail (shares are whole pages)
  return fold(acc);
}

struct ReadConfig {
  uint64_t (*fn)(const uint8_t*, size_t, size_t);
  size_t ahead;
  const char* name;  // how it reads, for the roofline line
};
constexpr ReadConfig kReadConfigs[] = {
    {read_sum_avx2<1>, 4096, "1 stream, 4 KiB ahead"},
    {read_sum_avx2<2>, 1024, "2 streams far apart, 1 KiB ahead"},
    {read_sum_avx2<4>, 1024, "4 streams far apart, 1 KiB ahead"},
    {read_sum_avx2<4>, 4096, "4 streams far apart, 4 KiB ahead"},
    {read_sum_avx2<8>, 1024, "8 streams far apart, 1 KiB ahead"},
    {read_sum_avx2<8>, 0, "8 streams far apart, no prefetch"},
    {read_chunks_avx2<64 << 10>, 0, "2 streams in 64 KiB chunks, no prefetch"},
    {read_chunks_avx2<64 << 10>, 1024, "2 streams in 64 KiB chunks, 1 KiB ahead"},
};
static_assert(*std::max_element(std::begin(kQuickReaders), std::end(kQuickReaders)) < (int)std::size(kReadConfigs));

// Register-only dot loops, ops = multiply-adds x 2. Every chain is independent, and there are
// more chains than latency x issue width so that throughput, not latency, is measured.
#define HEX_REP12(x) x(0) x(1) x(2) x(3) x(4) x(5) x(6) x(7) x(8) x(9) x(10) x(11)

// vpdpbusd zmm: 64 u8 x s8 multiply-adds per instruction, 12 chains.
__attribute__((target("avx512f,avx512vnni"))) void dp_zmm(int64_t iters) {
#define Z(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define D(i) "vpdpbusd %%zmm14, %%zmm15, %%zmm" #i "\n\t"
  __asm__ volatile(HEX_REP12(Z) "vpternlogd $0xff, %%zmm15, %%zmm15, %%zmm15\n\t vpabsb %%zmm15, %%zmm14\n\t"
                   "1:\n\t" HEX_REP12(D) "dec %0\n\t jnz 1b\n\t vzeroupper"
                   : "+r"(iters)
                   :
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm14", "xmm15", "cc");
#undef D
}
// vpdpbusd ymm (VEX, AVX-VNNI): 32 multiply-adds per instruction, 12 chains.
__attribute__((target("avx2,avxvnni"))) void dp_ymm(int64_t iters) {
#define Y(i) "vpxor %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
#define D(i) "%{vex%} vpdpbusd %%ymm14, %%ymm15, %%ymm" #i "\n\t"
  __asm__ volatile(HEX_REP12(Y) "vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n\t vpabsb %%ymm15, %%ymm14\n\t"
                   "1:\n\t" HEX_REP12(D) "dec %0\n\t jnz 1b\n\t vzeroupper"
                   : "+r"(iters)
                   :
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm14", "xmm15", "cc");
#undef D
}
// vpmaddubsw + vpaddw (the pair AVX2 kernels are built from): 32 multiply-adds, 6 chains of 2
// (12 registers: the products and the sums).
__attribute__((target("avx2"))) void dp_maddubs(int64_t iters) {
#define D(i) "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #i "\n\t"
#define A(i) "vpaddw %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
  __asm__ volatile(HEX_REP12(Y) "vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n\t vpabsb %%ymm15, %%ymm14\n\t"
                   "1:\n\t" HEX_REP12(D) HEX_REP12(A) "dec %0\n\t jnz 1b\n\t vzeroupper"
                   : "+r"(iters)
                   :
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm14", "xmm15", "cc");
#undef D
#undef A
}
// F32 FMA: 12 chains of vfmadd231ps, zmm (16 lanes) or ymm (8).
__attribute__((target("avx512f"))) void fma_zmm(int64_t iters) {
#define D(i) "vfmadd231ps %%zmm14, %%zmm15, %%zmm" #i "\n\t"
  __asm__ volatile(HEX_REP12(Z) "vpxord %%zmm14, %%zmm14, %%zmm14\n\t vpxord %%zmm15, %%zmm15, %%zmm15\n\t"
                   "1:\n\t" HEX_REP12(D) "dec %0\n\t jnz 1b\n\t vzeroupper"
                   : "+r"(iters)
                   :
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm14", "xmm15", "cc");
#undef D
}
__attribute__((target("avx2,fma"))) void fma_ymm(int64_t iters) {
#define D(i) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #i "\n\t"
  __asm__ volatile(HEX_REP12(Y) "vpxor %%ymm14, %%ymm14, %%ymm14\n\t vpxor %%ymm15, %%ymm15, %%ymm15\n\t"
                   "1:\n\t" HEX_REP12(D) "dec %0\n\t jnz 1b\n\t vzeroupper"
                   : "+r"(iters)
                   :
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm14", "xmm15", "cc");
#undef D
}
#undef Z
#undef Y

// AMX (AMX-TILE + AMX-INT8): the CPU has it, the OS saves its state (XCR0 bits 17, 18), and
// Linux granted this process the tile data (ARCH_REQ_XCOMP_PERM; the first tile instruction
// faults without it).
bool amx_int8_usable() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return false;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return (lo & 0x60000) == 0x60000 && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// The tile unit's products on 16 x 64-byte tiles, 4 accumulator tiles fed by 2 A and 2 B tiles
// (all eight registers): tdpbssd does 16 x 16 x 64 int8 multiply-adds per instruction,
// tdpbf16ps 16 x 16 x 32 bf16 ones into f32. The values do not matter.
template <bool Bf16>
__attribute__((target("amx-tile,amx-int8,amx-bf16"))) void dp_amx(int64_t iters) {
  struct alignas(64) {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
  } cfg;
  alignas(64) static const uint8_t kTile[16 * 64] = {};
  // Not _tile_loadconfig: GCC 12's takes the config as an 8-byte operand and drops the stores
  // to the rest of it.
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
  _tile_loadd(4, kTile, 64);
  _tile_loadd(5, kTile, 64);
  _tile_loadd(6, kTile, 64);
  _tile_loadd(7, kTile, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t i = 0; i < iters; ++i) {
    if constexpr (Bf16) {
      _tile_dpbf16ps(0, 4, 5);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 6, 5);
      _tile_dpbf16ps(3, 6, 7);
    } else {
      _tile_dpbssd(0, 4, 5);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 6, 5);
      _tile_dpbssd(3, 6, 7);
    }
  }
  _tile_release();
}

struct Probe {
  void (*fn)(int64_t);
  double ops_per_iter;
  const char* name;
};

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Best of 3 passes of `iters` iterations on every thread, in ops/s: each thread's rate over the
// CPU time it got, summed. A core's peak does not depend on who else shares the machine, and
// on a shared one the wall clock would charge other processes' time slices to the probe.
double probe_rate(int threads, const Probe& p, int64_t iters) {
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<double> cpu(static_cast<size_t>(threads));
    run_parallel(threads, [&](int i) {
      const double t0 = thread_cpu_seconds();
      p.fn(iters);
      cpu[static_cast<size_t>(i)] = thread_cpu_seconds() - t0;
    });
    double rate = 0;
    for (double c : cpu) rate += p.ops_per_iter * static_cast<double>(iters) / c;
    best = std::max(best, rate);
  }
  return best;
}

// The best int8 dot instruction the CPU has (the CPU has AVX2).
Probe best_dot_probe() {
  const bool vnni512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
  const bool vnni256 = __builtin_cpu_supports("avxvnni");
  return vnni512   ? Probe{dp_zmm, 12 * 64 * 2, "AVX-512 VNNI vpdpbusd zmm"}
         : vnni256 ? Probe{dp_ymm, 12 * 32 * 2, "AVX-VNNI vpdpbusd ymm"}
                   : Probe{dp_maddubs, 12 * 32 * 2, "AVX2 vpmaddubsw"};
}
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

ReadProbe::ReadProbe(int threads, bool huge) : threads_(threads) {
  mem_ = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem_ == MAP_FAILED) fail("roofline: cannot map %zu bytes", kBytes);
#if defined(MADV_HUGEPAGE)
  ::madvise(mem_, kBytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
  auto* buf = static_cast<uint8_t*>(mem_);
  for (size_t i = 0; i < kBytes; i += 4096) buf[i] = static_cast<uint8_t>(i >> 12);
#if defined(__x86_64__)
  avx2_ = __builtin_cpu_supports("avx2");
#endif
}

ReadProbe::~ReadProbe() { ::munmap(mem_, kBytes); }

double ReadProbe::pass_gbps(int config) const {
  const auto* buf = static_cast<const uint8_t*>(mem_);
  const size_t share = kBytes / static_cast<size_t>(threads_) / 4096 * 4096;
  std::atomic<uint64_t> sink{0};
  const double seconds = run_parallel(threads_, [&](int i) {
    const uint8_t* p = buf + share * static_cast<size_t>(i);
#if defined(__x86_64__)
    if (avx2_) {
      const ReadConfig& c = kReadConfigs[config];
      sink += c.fn(p, share, c.ahead);
      return;
    }
#endif
    (void)config;
    sink += read_sum_scalar(p, share);
  });
  return static_cast<double>(share) * threads_ / seconds / 1e9;
}

int ReadProbe::n_configs() const {
#if defined(__x86_64__)
  if (avx2_) return static_cast<int>(std::size(kReadConfigs));
#endif
  return 1;
}

// The best pass of every reader configuration (after a warm-up pass).
double ReadProbe::best_gbps(int passes, const char** reader) const {
  pass_gbps(n_configs() > 1 ? kQuickReaders[0] : 0);
  double best = 0;
  int best_config = 0;
  for (int c = 0; c < n_configs(); ++c)
    for (int pass = 0; pass < passes; ++pass) {
      const double rate = pass_gbps(c);
      if (rate > best) best = rate, best_config = c;
    }
  if (reader != nullptr) *reader = config_name(best_config);
  return best;
}

const char* ReadProbe::config_name(int config) const {
#if defined(__x86_64__)
  if (avx2_) return kReadConfigs[config].name;
#endif
  (void)config;
  return "1 scalar stream";
}

// One pass of each quick reader: ~0.15 s at 30 GB/s.
double ReadProbe::quick_gbps() const {
  if (n_configs() == 1) return pass_gbps(0);
  double best = 0;
  for (int c : kQuickReaders) best = std::max(best, pass_gbps(c));
  return best;
}

namespace {

// GB/s of `threads` streaming their shares of 1 GiB: the best pass of the reader configurations.
// `huge`: ask for huge pages (4 KiB pages cost a TLB walk every 64 lines and stop the hardware
// prefetchers at every page); else 4 KiB pages, as memory the kernel gives no huge pages gets
// (shared memfd memory where shmem THP is off, like the HTP weight pool).
double read_bandwidth(int threads, bool huge, const char** reader) {
  return ReadProbe(threads, huge).best_gbps(2, reader);
}

}  // namespace

Roofline measure_roofline(int threads) {
  Roofline r;
  r.threads = threads;
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f");
#else
  const bool avx2 = false;
#endif

  const char* reader_4k = "";
  r.read_gbps_4k = read_bandwidth(threads, false, &reader_4k);
  // Where the kernel grants no huge page the first probe ran on 4 KiB pages too: the machine's
  // figure is the better of the two (a pass another process slowed is not the limit).
  r.read_gbps = read_bandwidth(threads, true, &r.read_reader);
  if (r.read_gbps_4k > r.read_gbps) r.read_gbps = r.read_gbps_4k, r.read_reader = reader_4k;

#if defined(__x86_64__)
  // The best int8 dot instruction the CPU has, and the widest F32 FMA.
  constexpr int64_t kIters = 10'000'000;
  const Probe dot = best_dot_probe();
  const Probe fma = avx512 ? Probe{fma_zmm, 12 * 16 * 2, "AVX-512 vfmadd231ps zmm"}
                           : Probe{fma_ymm, 12 * 8 * 2, "AVX2 vfmadd231ps ymm"};
  if (avx2) {
    r.int8_gops = probe_rate(threads, dot, kIters) / 1e9;
    r.int8_isa = dot.name;
    r.f32_gflops = probe_rate(threads, fma, kIters) / 1e9;
    r.f32_isa = fma.name;
  }
  if (amx_int8_usable()) {
    constexpr int64_t kTileIters = 1'000'000;
    r.tile_int8_gops = probe_rate(threads, Probe{dp_amx<false>, 4.0 * 16 * 16 * 64 * 2, "AMX tdpbssd"}, kTileIters) / 1e9;
    r.tile_int8_isa = "AMX tdpbssd";
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22)))  // AMX-BF16
      r.tile_bf16_gflops =
          probe_rate(threads, Probe{dp_amx<true>, 4.0 * 16 * 16 * 32 * 2, "AMX tdpbf16ps"}, kTileIters) / 1e9;
  }
#endif
  (void)avx2;
  return r;
}

double int8_gops_now(int threads) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
  const Probe dot = best_dot_probe();
  // 30 G ops per thread: ~40 ms for vpdpbusd zmm, ~0.1 s for vpmaddubsw (rates seen).
  const int64_t iters = static_cast<int64_t>(30e9 / dot.ops_per_iter);
  const double seconds = run_parallel(threads, [&](int) { dot.fn(iters); });
  return threads * dot.ops_per_iter * static_cast<double>(iters) / seconds / 1e9;
#else
  (void)threads;
  return 0;
#endif
}

}  // namespace hexllm
