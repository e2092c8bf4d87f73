#include "htp-host/timeline.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace hexllm::htp_host {

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += strprintf("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string node_label(const graph::Tensor* n) {
  // Unnamed nodes (most matmuls) are named by their sources, e.g. 'blk.3.ffn_up.weight x ffn_norm-3'.
  std::string label = n->name;
  if (label.empty())
    for (int i = 0; i < 2 && n->src[i] != nullptr; ++i)
      if (n->src[i]->name[0] != '\0') label += (label.empty() ? "" : " x ") + std::string(n->src[i]->name);
  return label;
}

Timeline::Timeline(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "w");
  if (f_ == nullptr) fail("--htp-trace: cannot write '%s': %s", path.c_str(), std::strerror(errno));
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f_);
  name_track(0, 0, "host", "phases");
}

Timeline::~Timeline() {
  try {
    finish();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());  // a destructor must not throw
  }
}

void Timeline::finish() {
  if (f_ == nullptr) return;
  std::fputs("\n]}\n", f_);
  const bool bad = std::ferror(f_) != 0;
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (bad || !closed) fail("--htp-trace: writing '%s' failed", path_.c_str());
  if (dropped_ != 0)
    HEXLLM_LOG_WARN("--htp-trace: %llu device trace records did not fit (%u per worker per call)",
                    static_cast<unsigned long long>(dropped_), kCapacity);
}

void Timeline::name_track(uint32_t pid, uint32_t tid, const std::string& process, const std::string& thread) {
  if (f_ == nullptr) return;
  std::fprintf(f_,
               "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}},\n"
               "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
               first_ ? "" : ",\n", pid, tid, process.c_str(), pid, tid, thread.c_str());
  first_ = false;
}

void Timeline::event(const char* name, uint32_t pid, uint32_t tid, uint64_t begin_ns, uint64_t end_ns,
                     const std::string& args) {
  if (f_ == nullptr) return;
  if (origin_ns_ == 0) origin_ns_ = begin_ns;
  // Complete events ("X") in microseconds with ns digits; a clock step back shows as zero length.
  const double ts = static_cast<double>(static_cast<int64_t>(begin_ns - origin_ns_)) / 1e3;
  const double dur = end_ns > begin_ns ? static_cast<double>(end_ns - begin_ns) / 1e3 : 0.0;
  std::fprintf(f_, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}", name,
               pid, tid, ts, dur, args.c_str());
}

void Timeline::host_phase(const char* name, uint64_t call, uint64_t begin_ns, uint64_t end_ns) {
  event(name, 0, 0, begin_ns, end_ns, strprintf("\"call\":%llu", static_cast<unsigned long long>(call)));
}

void Timeline::device_call(uint32_t device, uint32_t n_threads, uint64_t call, const htp_response& rsp,
                           const htp_trace_record* records, uint64_t call_begin_ns, uint64_t call_end_ns,
                           std::span<const htp_op_desc> ops, std::span<const graph::Tensor* const> nodes) {
  const uint32_t pid = device + 1;
  while (pid < std::size(named_) && named_[pid] < n_threads) {
    name_track(pid, named_[pid], strprintf("HTP device %u", device), strprintf("worker %u", named_[pid]));
    ++named_[pid];
  }
  // The device's clock: the host's own when its batch lies within the call, else centred on it.
  int64_t offset = 0;
  if (rsp.start_ns < call_begin_ns || rsp.start_ns + rsp.total_ns > call_end_ns)
    offset = static_cast<int64_t>((call_begin_ns + call_end_ns) / 2) - static_cast<int64_t>(rsp.start_ns + rsp.total_ns / 2);
  dropped_ += rsp.trace_dropped;

  struct Open {
    uint16_t event, info;
    uint64_t begin;
  };
  std::vector<Open> stack;
  for (uint32_t t = 0; t < n_threads && t < HTP_MAX_THREADS; ++t) {
    const uint32_t n = std::min(rsp.trace_count[t], kCapacity);
    const htp_trace_record* r = records + static_cast<uint64_t>(t) * kCapacity;
    stack.clear();
    uint64_t wrap = 0, prev = 0;
    uint32_t op = HTP_NO_INDEX;
    for (uint32_t k = 0; k < n; ++k) {
      if (r[k].time_ns < prev) wrap += 1ull << 32;  // ns since the batch start wrap after 4.29 s
      prev = r[k].time_ns;
      const uint64_t at = static_cast<uint64_t>(static_cast<int64_t>(rsp.start_ns + wrap + r[k].time_ns) + offset);
      const uint16_t ev = r[k].event & ~HTP_EV_END;
      if ((r[k].event & HTP_EV_END) == 0) {
        if (ev == HTP_EV_OP) op = r[k].info;
        stack.push_back({ev, r[k].info, at});
        continue;
      }
      if (stack.empty() || stack.back().event != ev) continue;  // its begin was dropped
      const Open o = stack.back();
      stack.pop_back();
      const uint32_t in_op = op;
      if (ev == HTP_EV_OP) op = HTP_NO_INDEX;  // events after it (the batch-end fence) belong to no op
      std::string args = strprintf("\"info\":%u,\"call\":%llu", o.info, static_cast<unsigned long long>(call));
      const char* name = htp_trace_event_name(ev);
      std::string op_name;
      if (in_op < ops.size()) {
        op_name = htp_opcode_name(ops[in_op].opcode);
        args += strprintf(",\"op_index\":%u,\"op\":\"%s\"", in_op, op_name.c_str());
        if (in_op < nodes.size()) args += ",\"node\":\"" + json_escape(node_label(nodes[in_op])) + "\"";
      }
      // An op slice is named by its opcode, so the timeline reads as the op sequence.
      event(ev == HTP_EV_OP && !op_name.empty() ? op_name.c_str() : name, pid, t, o.begin, at, args);
    }
  }
}

}  // namespace hexllm::htp_host
