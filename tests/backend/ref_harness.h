// Test harness for the reference backend: leaves with data owned by the harness, a memory plan
// for everything else, and readers that walk results through their strides.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backend/ref/ref_backend.h"
#include "base/fp16.h"
#include "graph/graph.h"
#include "graph/ops.h"

namespace hexllm::backend::test {

using graph::Tensor;

class Harness {
 public:
  graph::Context ctx;

  // A leaf holding `values` (row-major, ne[0] fastest) converted to F32, F16 or BF16.
  Tensor* floats(Type type, std::initializer_list<int64_t> ne, const std::vector<float>& values) {
    Tensor* t = ctx.new_tensor(type, ne);
    EXPECT_EQ((size_t)t->n_elements(), values.size()) << "test data size";
    uint8_t* p = own(t);
    for (size_t i = 0; i < values.size(); i++) {
      if (type == Type::F32) std::memcpy(p + 4 * i, &values[i], 4);
      if (type == Type::F16) store16(p + 2 * i, fp32_to_fp16(values[i]));
      if (type == Type::BF16) store16(p + 2 * i, fp32_to_bf16(values[i]));
    }
    return t;
  }
  Tensor* f32(std::initializer_list<int64_t> ne, const std::vector<float>& values) {
    return floats(Type::F32, ne, values);
  }
  Tensor* i32(std::initializer_list<int64_t> ne, const std::vector<int32_t>& values) {
    Tensor* t = ctx.new_tensor(Type::I32, ne);
    std::memcpy(own(t), values.data(), 4 * values.size());
    return t;
  }
  Tensor* i64(std::initializer_list<int64_t> ne, const std::vector<int64_t>& values) {
    Tensor* t = ctx.new_tensor(Type::I64, ne);
    std::memcpy(own(t), values.data(), 8 * values.size());
    return t;
  }
  // A leaf of any type holding raw bytes (e.g. hand-built quantized blocks).
  Tensor* raw(Type type, std::initializer_list<int64_t> ne, const std::vector<uint8_t>& bytes) {
    Tensor* t = ctx.new_tensor(type, ne);
    EXPECT_EQ(t->n_bytes(), bytes.size());
    std::memcpy(own(t), bytes.data(), bytes.size());
    return t;
  }
  // Uniform values in [lo, hi) from a fixed seed.
  Tensor* random(Type type, std::initializer_list<int64_t> ne, uint32_t seed, float lo = -1.0f,
                 float hi = 1.0f) {
    int64_t n = 1;
    for (int64_t v : ne) n *= v;
    return floats(type, ne, random_values((size_t)n, seed, lo, hi));
  }
  static std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  }

  // Plans, binds and computes everything `outs` depend on.
  // Run everything in one go: a node computed by an earlier run may share its memory with
  // later nodes of that run, so only outputs survive.
  void run(const std::vector<Tensor*>& outs, int n_threads = 1) {
    graph::Graph g;
    for (Tensor* t : outs) {
      t->flags |= graph::kFlagOutput;
      g.expand(t);
    }
    graph::MemoryPlan plan(g);
    buffers_.push_back(std::make_unique<uint8_t[]>(plan.size() + 256));
    uint8_t* base = buffers_.back().get();
    base += (128 - reinterpret_cast<uintptr_t>(base) % 128) % 128;
    plan.bind(base);
    RefBackend backend(n_threads);
    for (Tensor* n : g.nodes()) EXPECT_TRUE(backend.supports(*n)) << graph::op_name(n->op);
    backend.compute(g.nodes());
  }
  void run(Tensor* out, int n_threads = 1) { run(std::vector<Tensor*>{out}, n_threads); }

 private:
  static void store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
  uint8_t* own(Tensor* t) {
    buffers_.push_back(std::make_unique<uint8_t[]>(t->n_bytes() + 1));
    t->data = buffers_.back().get();
    return buffers_.back().get();
  }
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
};

// Element (i0, i1, i2, i3) read through the strides (F32, F16, BF16, I32).
inline double element(const Tensor* t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
  const uint8_t* p =
      static_cast<const uint8_t*>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
  uint16_t h;
  float f;
  int32_t i;
  switch (t->type) {
    case Type::F32: std::memcpy(&f, p, 4); return f;
    case Type::F16: std::memcpy(&h, p, 2); return fp16_to_fp32(h);
    case Type::BF16: std::memcpy(&h, p, 2); return bf16_to_fp32(h);
    case Type::I32: std::memcpy(&i, p, 4); return i;
    default: ADD_FAILURE() << "element: unexpected type"; return 0;
  }
}

// All elements in logical order (ne[0] fastest).
inline std::vector<double> values(const Tensor* t) {
  std::vector<double> v;
  for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
      for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) v.push_back(element(t, i0, i1, i2, i3));
  return v;
}

// Bit patterns of an F32 tensor's elements, for exact comparisons.
inline std::vector<uint32_t> bits(const Tensor* t) {
  std::vector<uint32_t> out;
  for (double d : values(t)) out.push_back(fp32_bits((float)d));
  return out;
}

inline void expect_near(const Tensor* t, const std::vector<double>& want, double tol = 1e-6) {
  const std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isinf(want[i]) || std::isnan(want[i])) {
      EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << "element " << i;
      if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << "element " << i;
      }
      continue;
    }
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}

// Normalized mean squared error: sum (a - b)^2 / sum a^2.
inline double nmse(const std::vector<double>& ref, const std::vector<double>& got) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < ref.size(); i++) {
    num += (ref[i] - got[i]) * (ref[i] - got[i]);
    den += ref[i] * ref[i];
  }
  return num / den;
}

}  // namespace hexllm::backend::test
