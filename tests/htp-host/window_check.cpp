// Manual check for models too large for CI: the logits of a prompt and a few greedy steps with a
// small device window against an unlimited one, bit for bit, with the window's statistics.
//   htp_window_check MODEL [WINDOW=512M] [TRANSPORT=process] [THREADS=2]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "sampling/sampler.h"

using namespace hexllm;

namespace {

struct Result {
  std::vector<float> logits;
  double seconds = 0;
};

Result run(EngineOptions o, const char* window) {
  o.htp_window = window;
  auto e = open_engine(o);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> prompt = e->model->tokenizer().encode("The quick brown fox jumps over the lazy dog", true, true);
  Result r;
  e->context->decode(prompt, true);
  r.logits.assign(e->context->logits().begin(), e->context->logits().end());
  for (int i = 0; i < 8; ++i) {
    const int32_t t = sampling::argmax(e->context->last_logits());
    e->context->decode(std::span<const int32_t>(&t, 1), false);
    r.logits.insert(r.logits.end(), e->context->last_logits().begin(), e->context->last_logits().end());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& htp = dynamic_cast<htp_host::HtpBackend&>(*e->backends.front());
  const htp_host::Pool& pool = htp.pool();
  const htp_host::WindowStats& st = htp.transport().window().stats();
  uint32_t banks = 0;
  for (const htp_host::Bank& b : pool.banks()) banks += b.base != nullptr;
  std::printf("window %-6s: weights %.1f MiB + pinned %.1f MiB in %u banks; %llu calls, %llu bank maps, %llu unmaps, "
              "peak %.1f MiB mapped; %.2f s\n",
              window, pool.bytes(htp_host::Region::Weights) / 1048576.0, pool.bytes_of(pool.pinned_mask()) / 1048576.0,
              banks, (unsigned long long)htp.calls(), (unsigned long long)st.maps, (unsigned long long)st.unmaps,
              st.peak_bytes / 1048576.0, r.seconds);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: htp_window_check MODEL [WINDOW=512M] [TRANSPORT=process] [THREADS=2]\n");
    return 2;
  }
  EngineOptions o;
  o.model_path = argv[1];
  o.n_ctx = 256;
  o.htp_transport = argc > 3 ? argv[3] : "process";
  o.n_threads = argc > 4 ? std::atoi(argv[4]) : 2;
  try {
    const Result full = run(o, "64G");
    const Result slid = run(o, argc > 2 ? argv[2] : "512M");
    size_t differ = 0;
    for (size_t i = 0; i < full.logits.size() && i < slid.logits.size(); ++i)
      differ += std::memcmp(&full.logits[i], &slid.logits[i], sizeof(float)) != 0;
    std::printf("%zu logits compared: %s\n", full.logits.size(),
                differ == 0 && full.logits.size() == slid.logits.size() ? "bit-identical" : "DIFFERENT");
    return differ == 0 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
