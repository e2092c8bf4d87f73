// Whole-op FLASH_ATTN_EXT throughput through the HTP backend (not a test: prints figures). Q, K
// and V are laid out as model/graph_builder.cpp lays them out (K/V permuted views of an F16
// cache, Q a permuted view of the projection output), with a mask, so the op sees what a model
// gives it.
//   prefill (n queries, n keys, causal): GFLOP/s of the visible work,
//     4 * D * n_head * (n (n + 1) / 2) FLOP (scores and weighted sum; a masked key costs nothing);
//   decode (1 query, n keys, all visible): us per op and GB/s of the K and V bytes it reads.
// Each line: median [best] over runs of the device time per op.
// Usage: hexllm_attention_bench [reps [filter]]   `filter` keeps lines whose label contains it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "graph/context.h"
#include "graph/ops.h"
#include "htp-host/htp_backend.h"

using namespace hexllm;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  const char* what;
  int64_t d, n_head, n_head_kv;
};

struct Result {
  double med, best;
};

// Views alias their root's storage: the backend reads a view's data pointer.
void place(graph::Tensor* view) { view->data = static_cast<uint8_t*>(graph::storage_root(view)->data) + view->view_offs; }

// n_q queries against n_kv keys; with n_q == n_kv the mask is causal, else every key is visible.
// Returns the device time per op, us.
Result run_case(const Case& c, int64_t n_q, int64_t n_kv, uint32_t threads, int reps) {
  htp_host::HtpOptions opts;
  opts.n_threads = threads;
  htp_host::HtpBackend htp(opts);
  graph::Context ctx;
  std::vector<std::unique_ptr<backend::Buffer>> bufs;
  auto alloc = [&](graph::Tensor* t) {
    bufs.push_back(htp.alloc_buffer(backend::MemoryKind::Compute, t->n_bytes()));
    t->data = bufs.back()->data();
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 1);

  graph::Tensor* q = ctx.new_tensor(Type::F32, {c.d, c.n_head, n_q});
  graph::Tensor* kc = ctx.new_tensor(Type::F16, {c.d * c.n_head_kv, n_kv});
  graph::Tensor* vc = ctx.new_tensor(Type::F16, {c.d * c.n_head_kv, n_kv});
  graph::Tensor* mask = ctx.new_tensor(Type::F16, {n_kv, n_q});
  for (graph::Tensor* t : {q, kc, vc, mask}) alloc(t);
  for (int64_t i = 0; i < c.d * c.n_head * n_q; ++i) static_cast<float*>(q->data)[i] = nd(rng);
  for (graph::Tensor* t : {kc, vc})
    for (int64_t i = 0; i < c.d * c.n_head_kv * n_kv; ++i) static_cast<uint16_t*>(t->data)[i] = fp32_to_fp16(nd(rng));
  auto* m = static_cast<uint16_t*>(mask->data);
  const bool causal = n_q == n_kv;
  for (int64_t r = 0; r < n_q; ++r)
    for (int64_t j = 0; j < n_kv; ++j) m[r * n_kv + j] = !causal || j <= r ? 0x0000 : 0xfc00;  // 0 or -inf

  const size_t f16 = sizeof(uint16_t);
  graph::Tensor* K = graph::view_3d(ctx, kc, c.d, c.n_head_kv, n_kv, c.d * f16, kc->nb[1], 0);
  graph::Tensor* V = graph::view_3d(ctx, vc, c.d, c.n_head_kv, n_kv, c.d * f16, vc->nb[1], 0);
  place(K);
  place(V);
  K = graph::permute(ctx, K, 0, 2, 1, 3);
  V = graph::permute(ctx, V, 0, 2, 1, 3);
  graph::Tensor* Q = graph::permute(ctx, q, 0, 2, 1, 3);
  for (graph::Tensor* t : {K, V, Q}) place(t);
  graph::Tensor* o = graph::flash_attn_ext(ctx, Q, K, V, mask, 1.0f / std::sqrt((float)c.d), 0.0f, 0.0f);
  alloc(o);
  if (!htp.supports(*o)) {
    std::printf("%s: the device refused the op\n", c.what);
    std::exit(1);
  }
  graph::Tensor* nodes[] = {o};
  htp.compute(nodes);  // warm-up
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    htp.compute(nodes);
    us.push_back(htp.last_op_ns()[0] * 1e-3);
  }
  return {median(us), *std::min_element(us.begin(), us.end())};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string filter = argc > 2 ? argv[2] : "";
  auto want = [&](const char* label) { return std::string(label).find(filter) != std::string::npos; };
  std::printf("HTP FLASH_ATTN_EXT through the backend, %d runs: median [best]\n", reps);
  // The attention of Llama-3.2-1B and of Qwen2.5-0.5B (GQA 4 and 7, head size 64).
  const Case cases[] = {{"llama-3.2-1b (32 heads, 8 KV, D 64)", 64, 32, 8},
                        {"qwen2.5-0.5b (14 heads, 2 KV, D 64)", 64, 14, 2}};
  char label[160];
  for (const Case& c : cases)
    for (int64_t n : {128, 512})
      for (uint32_t t : {1u, 2u}) {
        std::snprintf(label, sizeof label, "prefill %s n=%-4lld threads %u", c.what, (long long)n, t);
        if (!want(label)) continue;
        const Result r = run_case(c, n, n, t, reps);
        const double flop = 4.0 * c.d * c.n_head * (n * (n + 1) / 2.0);
        std::printf("%s: %6.1f [%6.1f] GFLOP/s\n", label, flop / r.med / 1e3, flop / r.best / 1e3);
        std::fflush(stdout);
      }
  // Decode: one query against a cache as the model pads it (multiples of 256 cells).
  for (const Case& c : cases)
    for (int64_t n_kv : {256, 1024, 4096})
      for (uint32_t t : {1u, 2u}) {
        std::snprintf(label, sizeof label, "decode %s n_kv=%-4lld threads %u", c.what, (long long)n_kv, t);
        if (!want(label)) continue;
        const Result r = run_case(c, 1, n_kv, t, reps);
        const double kv_bytes = 2.0 * n_kv * c.n_head_kv * c.d * 2;
        std::printf("%s: %7.1f [%7.1f] us = %5.1f [%5.1f] GB/s of K/V\n", label, r.med, r.best, kv_bytes / r.med / 1e3,
                    kv_bytes / r.best / 1e3);
        std::fflush(stdout);
      }
  return 0;
}
