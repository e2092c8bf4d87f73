#include "backend/ref/ref_common.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/dequant.h"

namespace hexllm::backend::ref {

bool is_float(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }
bool is_readable(Type t) { return is_float(t) || is_quantized(t); }

float get_f(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const void* p = t.at(i0, i1, i2, i3);
  switch (t.type) {
    case Type::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Type::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return fp16_to_fp32(h);
    }
    case Type::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_fp32(h);
    }
    case Type::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return (float)v;
    }
    default: fail("ref: cannot read a %s element as float", type_name(t.type));
  }
}

void set_f(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
  void* p = t.at(i0, i1, i2, i3);
  switch (t.type) {
    case Type::F32: std::memcpy(p, &v, 4); return;
    case Type::F16: {
      const uint16_t h = fp32_to_fp16(v);
      std::memcpy(p, &h, 2);
      return;
    }
    case Type::BF16: {
      const uint16_t h = fp32_to_bf16(v);
      std::memcpy(p, &h, 2);
      return;
    }
    default: fail("ref: cannot write a float into a %s element", type_name(t.type));
  }
}

int64_t get_i(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const void* p = t.at(i0, i1, i2, i3);
  if (t.type == Type::I32) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (t.type == Type::I64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  fail("ref: index tensor '%s' has type %s (I32 or I64 expected)", t.name, type_name(t.type));
}

void get_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* x) {
  if (t.rows_contiguous() && is_readable(t.type)) {
    quant::dequantize_row(t.type, t.at(0, i1, i2, i3), x, t.ne[0]);
    return;
  }
  if (is_quantized(t.type)) fail("ref: %s rows of '%s' are not contiguous", type_name(t.type), t.name);
  for (int64_t i0 = 0; i0 < t.ne[0]; i0++) x[i0] = get_f(t, i0, i1, i2, i3);
}

std::vector<float> get_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  std::vector<float> x((size_t)t.ne[0]);
  get_row(t, i1, i2, i3, x.data());
  return x;
}

std::vector<std::vector<float>> all_rows(const Tensor& t) {
  std::vector<std::vector<float>> rows;
  rows.reserve((size_t)t.n_rows());
  for_each_row(t, [&](int64_t i1, int64_t i2, int64_t i3) { rows.push_back(get_row(t, i1, i2, i3)); });
  return rows;
}

void set_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, const float* y) {
  for (int64_t i0 = 0; i0 < t.ne[0]; i0++) set_f(t, i0, i1, i2, i3, y[i0]);
}

float alibi_slope(float max_bias, int64_t h, int64_t n_head) {
  if (max_bias <= 0.0f) return 1.0f;
  const double n_head_log2 = std::exp2(std::floor(std::log2((double)n_head)));
  const double m0 = std::exp2(-max_bias / n_head_log2);
  const double m1 = std::exp2(-max_bias / 2.0 / n_head_log2);
  return (float)(h < n_head_log2 ? std::pow(m0, h + 1) : std::pow(m1, 2 * (h - n_head_log2) + 1));
}

void parallel_for(int n_threads, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t n_parts = std::max<int64_t>(1, std::min<int64_t>(n_threads, n));
  std::vector<std::exception_ptr> errors((size_t)n_parts);
  auto run = [&](int64_t part) {
    try {
      fn(n * part / n_parts, n * (part + 1) / n_parts);
    } catch (...) {
      errors[(size_t)part] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int64_t part = 1; part < n_parts; part++) threads.emplace_back(run, part);
  run(0);
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void unsupported(const Tensor& node) {
  std::string srcs;
  for (const Tensor* s : node.src)
    if (s != nullptr)
      srcs +=
          strprintf("%s%s %s", srcs.empty() ? "" : ", ", type_name(s->type), graph::shape_str(*s).c_str());
  fail("ref: %s '%s' -> %s %s from (%s) is not implemented", graph::op_name(node.op), node.name,
       type_name(node.type), graph::shape_str(node).c_str(), srcs.c_str());
}

}  // namespace hexllm::backend::ref
