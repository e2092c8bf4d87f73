#include "op_harness.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backend/ref/ref_backend.h"
#include "base/fp16.h"
#include "quant/dequant.h"
#include "quant/quantize.h"

namespace hexllm::test {

namespace {

constexpr size_t kGuard = 256;
constexpr uint8_t kSentinel = 0xa5;

uint64_t next(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

float uniform(uint64_t& s, float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(next(s) >> 40) * (1.0f / static_cast<float>(1ull << 24));
}

// One element of an F32/F16/BF16/I32 tensor, or the dequantized value of a quantized one.
std::vector<double> to_doubles(const graph::Tensor& t) {
  std::vector<double> out;
  std::vector<float> row(static_cast<size_t>(t.ne[0]));
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        const auto* base = static_cast<const uint8_t*>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
        if (t.type == Type::I32) {
          for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
            int32_t v;
            std::memcpy(&v, base + i0 * t.nb[0], 4);
            out.push_back(v);
          }
        } else if (!is_quantized(t.type) && t.nb[0] != type_size(t.type)) {
          for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
            float v;
            quant::dequantize_row(t.type, base + i0 * t.nb[0], &v, 1);
            out.push_back(v);
          }
        } else {
          quant::dequantize_row(t.type, base, row.data(), t.ne[0]);
          out.insert(out.end(), row.begin(), row.end());
        }
      }
  return out;
}

struct Guarded {
  std::unique_ptr<backend::Buffer> buffer;
  size_t bytes;
  uint8_t* data() { return static_cast<uint8_t*>(buffer->data()) + kGuard; }
  bool intact() {
    const auto* p = static_cast<const uint8_t*>(buffer->data());
    for (size_t i = 0; i < kGuard; ++i)
      if (p[i] != kSentinel || p[kGuard + bytes + i] != kSentinel) return false;
    return true;
  }
};

Guarded guarded(htp_host::HtpBackend& b, size_t bytes) {
  Guarded g{b.alloc_buffer(backend::MemoryKind::Compute, bytes + 2 * kGuard), bytes};
  std::memset(g.buffer->data(), kSentinel, bytes + 2 * kGuard);
  return g;
}

}  // namespace

std::string DeviceConfig::label() const {
  static const char* kModes[] = {"async", "inline", "zero-copy"};
  return std::to_string(n_threads) + " threads, VTCM " + std::to_string(vtcm_bytes >> 10) + " KiB, DMA " +
         kModes[dma_mode] + (fuse != "all" ? ", fuse " + fuse : "") + (reorder ? "" : ", no reorder") + (n_devices > 1 ? ", " + std::to_string(n_devices) + " devices" : "") + (transport != "inproc" ? ", " + transport : "") + (max_tensors != 0 ? ", " + std::to_string(max_tensors) + " tensors per batch" : "");
}

const std::string& op_target() {
  static const std::string target = [] {
    const char* env = std::getenv("HEXLLM_OP_TARGET");
    return std::string(env != nullptr && *env != '\0' ? env : "host");
  }();
  return target;
}

std::string op_target_unavailable() {
  if (op_target() == "host") return {};
  try {
    htp_host::device_command(op_target(), "");
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

std::vector<DeviceConfig> standard_configs() {
  if (op_target() != "host") return {{1, 8u << 20, HTP_DMA_ZERO_COPY}, {2, 256u << 10, HTP_DMA_ASYNC}};
  std::vector<DeviceConfig> c = {{1, 8u << 20, HTP_DMA_ZERO_COPY},
                                 {2, 8u << 20, HTP_DMA_ASYNC},
                                 {2, 256u << 10, HTP_DMA_INLINE},
                                 {1, 256u << 10, HTP_DMA_ASYNC}};
  if (const char* d = std::getenv("HEXLLM_OP_DEVICES"))
    for (DeviceConfig& x : c) x.n_devices = static_cast<uint32_t>(std::atoi(d));
  if (const char* t = std::getenv("HEXLLM_OP_TRANSPORT"); t != nullptr && *t != '\0')
    for (DeviceConfig& x : c) x.transport = t;
  return c;
}

OpTester::OpTester(uint64_t seed) : rng_(seed * 2654435761ull + 1) {}

graph::Tensor* OpTester::add_leaf(graph::Tensor* t, std::vector<uint8_t> bytes, bool weight) {
  if (weight) t->flags |= graph::kFlagWeight;
  leaves_.push_back({t, std::move(bytes), weight});
  return t;
}

graph::Tensor* OpTester::input(Type type, std::initializer_list<int64_t> ne, float lo, float hi) {
  graph::Tensor* t = ctx_.new_tensor(type, ne);
  std::vector<float> f(static_cast<size_t>(t->n_elements()));
  for (float& v : f) v = uniform(rng_, lo, hi);
  std::vector<uint8_t> bytes(t->n_bytes());
  quant::quantize_rows(type, f.data(), bytes.data(), t->n_rows(), t->ne[0], 1);
  return add_leaf(t, std::move(bytes), false);
}

graph::Tensor* OpTester::weight(Type type, std::initializer_list<int64_t> ne) {
  graph::Tensor* t = input(type, ne);
  leaves_.back().weight = true;
  t->flags |= graph::kFlagWeight;
  return t;
}

graph::Tensor* OpTester::ids(std::initializer_list<int64_t> ne, int32_t max) {
  graph::Tensor* t = ctx_.new_tensor(Type::I32, ne);
  std::vector<int32_t> v(static_cast<size_t>(t->n_elements()));
  for (int32_t& x : v) x = static_cast<int32_t>(next(rng_) % static_cast<uint64_t>(max));
  return ids_from(ne, v);
}

graph::Tensor* OpTester::ids_from(std::initializer_list<int64_t> ne, const std::vector<int32_t>& values) {
  graph::Tensor* t = ctx_.new_tensor(Type::I32, ne);
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return add_leaf(t, std::move(bytes), false);
}

graph::Tensor* OpTester::causal_mask(int64_t n_kv, int64_t n_rows, int64_t pos0) {
  graph::Tensor* t = ctx_.new_tensor(Type::F16, {n_kv, n_rows});
  std::vector<uint8_t> bytes(t->n_bytes());
  auto* h = reinterpret_cast<uint16_t*>(bytes.data());
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < n_kv; ++j) h[r * n_kv + j] = j <= pos0 + r ? 0x0000 : 0xfc00;
  return add_leaf(t, std::move(bytes), false);
}

bool OpTester::compute(graph::Tensor* out, const htp_host::HtpOptions& opts, const DeviceConfig& config, OpResult* r,
                       std::vector<double>* got, std::vector<double>* want) {
  htp_host::HtpBackend htp(opts);
  backend::RefBackend ref(1);

  graph::Graph gf;
  gf.expand(out);
  htp.schedule(gf);  // the engine reorders before it plans memory
  // Weights live in host memory (as if mmapped) and are copied/repacked by the backend; every
  // other leaf and every computed tensor gets its own guarded pool buffer.
  std::vector<std::vector<uint8_t>> weight_store;
  std::vector<graph::Tensor*> weights;
  std::vector<Guarded> buffers;
  std::vector<std::pair<graph::Tensor*, size_t>> inputs;  // leaf, buffer index
  for (Leaf& l : leaves_) {
    if (l.weight) {
      weight_store.push_back(l.bytes);
      l.t->data = weight_store.back().data();
      weights.push_back(l.t);
    } else {
      buffers.push_back(guarded(htp, l.bytes.size()));
      l.t->data = buffers.back().data();
      inputs.emplace_back(l.t, buffers.size() - 1);
    }
  }
  htp.load_weights(weights, nullptr, nullptr);
  for (graph::Tensor* n : gf.nodes()) {
    if (n->view_src != nullptr) {
      n->data = static_cast<uint8_t*>(graph::storage_root(n)->data) + n->view_offs;
    } else {
      buffers.push_back(guarded(htp, n->n_bytes()));
      n->data = buffers.back().data();
    }
  }
  auto reset_inputs = [&] {
    for (const Leaf& l : leaves_)
      if (!l.weight) std::memcpy(l.t->data, l.bytes.data(), l.bytes.size());
  };

  for (graph::Tensor* n : gf.nodes())
    if (!graph::op_is_layout(n->op) && !htp.supports(*n)) {
      r->supported = false;
      r->unsupported = std::string(graph::op_name(n->op)) + " '" + n->name + "' (" + type_name(n->type) + ")";
      return false;
    }
  // What supports() cached is what a fresh build gives: same descriptor, same tensor views.
  htp_host::OpPreparer fresh(htp.pool(), htp.weights());
  for (graph::Tensor* n : gf.nodes()) {
    if (graph::op_is_layout(n->op)) continue;
    htp_host::PreparedOp cached{}, built{};
    EXPECT_EQ(htp.prepare(*n, &cached), HTP_OK);
    EXPECT_EQ(fresh.prepare(*n, htp.hwinfo(), &built), HTP_OK);
    bool same = std::memcmp(&cached.op, &built.op, sizeof cached.op) == 0 && cached.src_mask == built.src_mask &&
                std::memcmp(&cached.dst, &built.dst, sizeof cached.dst) == 0;
    for (int k = 0; k < graph::kMaxSrc; ++k)
      if ((cached.src_mask >> k) & 1u) same = same && std::memcmp(&cached.src[k], &built.src[k], sizeof built.src[k]) == 0;
    EXPECT_TRUE(same) << "op cache hit differs from a fresh build: " << graph::op_name(n->op);
  }

  reset_inputs();
  std::vector<graph::Tensor*> nodes(gf.nodes().begin(), gf.nodes().end());
  // The whole graph, as the engine gives it (fusions form here); node by node when the device
  // does not take all of it.
  if (!htp.compute_graph(gf)) htp.compute(nodes);
  r->device_ops = static_cast<uint32_t>(htp.last_op_ns().size());
  r->opcodes = htp.last_opcodes();
  for (Guarded& g : buffers) EXPECT_TRUE(g.intact()) << "a sentinel next to a tensor was overwritten (" << config.label() << ")";
  *got = to_doubles(*out);
  if (want != nullptr) {
    reset_inputs();
    ref.compute(nodes);
    *want = to_doubles(*out);
  }
  return true;
}

OpResult OpTester::run(graph::Tensor* out, const DeviceConfig& config) {
  htp_host::HtpOptions opts;
  opts.n_threads = config.n_threads;
  opts.vtcm_bytes = config.vtcm_bytes;
  opts.dma_mode = config.dma_mode;
  opts.max_tensors = config.max_tensors;
  opts.fuse = config.fuse;
  opts.reorder = config.reorder;
  opts.n_devices = config.n_devices;
  // The truth for the device's bits: one x86 device in process, the same threads and VTCM.
  htp_host::HtpOptions host_opts = opts;
  host_opts.n_devices = 1;
  opts.transport = config.transport;
  if (opts.transport == "process") opts.device_path = HEXLLM_TEST_HTP_DEVICE;
  if (op_target() != "host") {
    opts.transport = "process";
    opts.target = op_target();
    opts.window_bytes = 256ull << 20;
    opts.timeout_s = 120.0;  // one op under emulation may take seconds
  }
  OpResult r;
  r.supported = true;
  std::vector<double> got, want;
  if (!compute(out, opts, config, &r, &got, &want)) return r;
  r.output = got;
  r.n_elements = static_cast<int64_t>(got.size());
  if (op_target() != "host" || config.n_devices > 1 || config.transport != "inproc") {
    std::vector<double> host;
    OpResult hr;
    if (compute(out, host_opts, config, &hr, &host, nullptr)) {
      r.host_differ = 0;
      for (size_t i = 0; i < got.size() && i < host.size(); ++i)
        r.host_differ += !(got[i] == host[i] || (std::isnan(got[i]) && std::isnan(host[i])));
    }
  }

  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) {
      num = std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(want[i]) || std::isinf(got[i])) {
      if (want[i] != got[i]) num = std::numeric_limits<double>::infinity();
      continue;
    }
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
    r.mismatches += got[i] != want[i];
  }
  r.nmse = den > 0 ? num / den : num;
  return r;
}

void expect_op_matches(const std::string& name, const std::function<graph::Tensor*(OpTester&)>& build,
                       double max_nmse, const std::vector<DeviceConfig>& configs) {
  if (const std::string why = op_target_unavailable(); !why.empty()) GTEST_SKIP() << "op target " << op_target() << ": " << why;
  for (const DeviceConfig& c : configs) {
    OpTester t;
    graph::Tensor* out = build(t);
    const OpResult r = t.run(out, c);
    ASSERT_TRUE(r.supported) << name << ": the device refused " << r.unsupported << " (" << c.label() << ")";
    // Every family gives the x86 device's bits: integer sums are exact, and the float code is
    // the same scalar code, rounding each operation alike (no contraction on either side).
    // Several devices (or the process transport) give one in-process device's bits: a row's
    // value does not depend on which device computes it.
    if (r.host_differ >= 0) {
      EXPECT_EQ(r.host_differ, 0) << name << " (" << c.label() << "): elements of " << r.n_elements
                                  << " that differ from one x86 in-process device";
    }
    if (out->type == Type::I32)
      EXPECT_EQ(r.mismatches, 0) << name << " (" << c.label() << ")";
    else
      EXPECT_LE(r.nmse, max_nmse) << name << " (" << c.label() << ")";
  }
}

}  // namespace hexllm::test
