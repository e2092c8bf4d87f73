// Draws the planned tensors in parallel and streams them into the GGUF writer.
//
// Determinism: a tensor is cut into chunks of whole rows by its shape alone, and every chunk
// has its own random stream keyed by (seed, seed_name, slab, chunk). Threads only decide who
// computes a chunk, never what it contains.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "quant/quantize.h"
#include "synth/rng.h"
#include "synth/synth.h"

namespace hexllm::synth {

namespace {

constexpr int64_t kChunkElements = 1 << 16;

int resolve_threads(int n) {
  if (n > 0) return n;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

// Runs fn(i) for i in [0, n) on n_threads threads; rethrows the first exception.
template <class Fn>
void parallel_for(int64_t n, int n_threads, Fn fn) {
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(n);
      }
    }
  };
  const int n_extra = static_cast<int>(std::min<int64_t>(n_threads, n)) - 1;
  std::vector<std::thread> threads;
  for (int t = 0; t < n_extra; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

// Draws tensor `t` and hands each chunk of rows to sink(first_row, n_rows, values).
template <class Sink>
void draw_chunks(const TensorPlan& t, uint64_t seed, int n_threads, Sink sink) {
  const int64_t row_len = t.ne[0];
  const int64_t rows_per_slab = t.ne.size() > 1 ? t.ne[1] : 1;
  const int64_t n_slabs = t.n_elements() / (row_len * rows_per_slab);
  if (!t.values.empty()) {
    if (static_cast<int64_t>(t.values.size()) != t.n_elements())
      fail("synthetic tensor '%s': %zu values for %lld elements", t.name.c_str(), t.values.size(),
           static_cast<long long>(t.n_elements()));
    for (int64_t r = 0; r < rows_per_slab * n_slabs; ++r) sink(r, 1, t.values.data() + r * row_len);
    return;
  }
  const int64_t chunk_rows = std::max<int64_t>(1, kChunkElements / row_len);
  const int64_t chunks_per_slab = (rows_per_slab + chunk_rows - 1) / chunk_rows;
  const uint64_t tensor_key = mix_keys(seed, hash_name(t.seed_name));
  parallel_for(n_slabs * chunks_per_slab, n_threads, [&](int64_t item) {
    const int64_t slab = item / chunks_per_slab, chunk = item % chunks_per_slab;
    const int64_t r0 = chunk * chunk_rows, n_rows = std::min(chunk_rows, rows_per_slab - r0);
    const uint64_t slab_key = t.repeat_slabs ? 0 : static_cast<uint64_t>(slab);
    NormalSampler normal(mix_keys(mix_keys(tensor_key, slab_key), static_cast<uint64_t>(chunk)));
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(n_rows * row_len));
    normal.fill(buf.data(), n_rows * row_len, t.mean, t.std);
    sink(slab * rows_per_slab + r0, n_rows, buf.data());
  });
}

void draw_into(const TensorPlan& t, uint64_t seed, int n_threads, uint8_t* dst) {
  const int64_t row_len = t.ne[0];
  const size_t row_bytes = row_size(t.type, row_len);
  draw_chunks(t, seed, n_threads, [&](int64_t row, int64_t n_rows, const float* x) {
    for (int64_t r = 0; r < n_rows; ++r)
      quant::quantize_row(t.type, x + r * row_len, dst + static_cast<size_t>(row + r) * row_bytes, row_len);
  });
}

gguf::Writer build_writer(const GenOptions& opt) {
  ModelPlan plan = plan_model(opt);
  for (const TensorPlan& t : plan.tensors)
    if (!quant::can_quantize(t.type))
      fail("model preset '%s', type %s: cannot produce %s for tensor '%s'", plan.preset.c_str(),
           plan.type.c_str(), type_name(t.type), t.name.c_str());

  gguf::Writer w = plan.metadata;
  const int n_threads = resolve_threads(opt.n_threads);
  struct Counter {
    size_t tensors = 0;
    uint64_t bytes = 0;
  };
  auto done = std::make_shared<Counter>();
  const size_t n_tensors = plan.tensors.size();
  const uint64_t total = plan.tensor_bytes();
  for (TensorPlan& t : plan.tensors) {
    auto tp = std::make_shared<TensorPlan>(std::move(t));
    const ProgressFn progress = opt.progress;
    const uint64_t seed = opt.seed;
    w.add_tensor_lazy(tp->name, tp->type, tp->ne,
                      [tp, seed, n_threads, done, n_tensors, total, progress](uint8_t* dst, size_t nbytes) {
                        if (nbytes != tp->nbytes())
                          fail("synthetic tensor '%s': writer asks for %zu bytes, expected %llu",
                               tp->name.c_str(), nbytes, static_cast<unsigned long long>(tp->nbytes()));
                        draw_into(*tp, seed, n_threads, dst);
                        done->tensors += 1;
                        done->bytes += nbytes;
                        if (progress)
                          progress(Progress{done->tensors, n_tensors, tp->name, done->bytes, total});
                      });
  }
  return w;
}

}  // namespace

std::vector<float> draw_tensor(const TensorPlan& t, uint64_t seed, int n_threads) {
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  const int64_t row_len = t.ne[0];
  draw_chunks(t, seed, resolve_threads(n_threads), [&](int64_t row, int64_t n_rows, const float* x) {
    std::memcpy(out.data() + row * row_len, x, static_cast<size_t>(n_rows * row_len) * sizeof(float));
  });
  return out;
}

void generate_model(const GenOptions& opt, const std::string& out_path) { build_writer(opt).write(out_path); }

std::vector<uint8_t> generate_model_bytes(const GenOptions& opt) { return build_writer(opt).to_bytes(); }

}  // namespace hexllm::synth
