// Per-call overhead of each transport: an empty batch (header and response only) sent N times,
// each round trip timed; prints the median and spread. A measurement tool, not a test:
//   htp_call_overhead [--calls N] [--threads N] [--device PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "htp-host/batch_builder.h"
#include "htp-host/transport.h"

using namespace hexllm;
using namespace hexllm::htp_host;

int main(int argc, char** argv) {
  int calls = 10000;
  uint32_t threads = 1;
  std::string device;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--threads") == 0) threads = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--device") == 0) device = argv[i + 1];
  }
  try {
    std::printf("%-8s %7s %8s %10s %10s %10s %10s\n", "transport", "threads", "calls", "median_us", "p10_us", "p90_us",
                "mean_us");
    for (const char* kind : {"inproc", "process"}) {
      Pool pool;
      SessionOptions o;
      o.n_threads = threads;
      o.device_path = device;
      auto t = std::strcmp(kind, "inproc") == 0 ? make_inproc_transport(pool, o) : make_process_transport(pool, o);
      auto msg = pool.allocate(Region::Messages, 4096);
      BatchBuilder empty;
      htp_message_layout l{};
      empty.layout(&l);
      empty.write(msg->data(), 1, l);
      for (int i = 0; i < 1000; ++i) t->call(msg->data(), l.message_size);  // warm up
      std::vector<double> us(static_cast<size_t>(calls));
      for (double& u : us) {
        const auto t0 = std::chrono::steady_clock::now();
        if (t->call(msg->data(), l.message_size) != HTP_OK) fail("empty batch failed");
        u = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      }
      double mean = 0;
      for (double u : us) mean += u / calls;
      std::sort(us.begin(), us.end());
      std::printf("%-9s %7u %8d %10.2f %10.2f %10.2f %10.2f\n", kind, threads, calls, us[us.size() / 2],
                  us[us.size() / 10], us[us.size() * 9 / 10], mean);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
