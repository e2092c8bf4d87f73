#include "graph/tensor.h"

#include <cstdarg>
#include <cstdio>

#include "base/error.h"

namespace hexllm::graph {

const char* op_name(Op op) {
  switch (op) {
    case Op::NONE: return "NONE";
    case Op::VIEW: return "VIEW";
    case Op::RESHAPE: return "RESHAPE";
    case Op::PERMUTE: return "PERMUTE";
    case Op::TRANSPOSE: return "TRANSPOSE";
    case Op::GET_ROWS: return "GET_ROWS";
    case Op::SET_ROWS: return "SET_ROWS";
    case Op::CPY: return "CPY";
    case Op::CONT: return "CONT";
    case Op::DUP: return "DUP";
    case Op::CONCAT: return "CONCAT";
    case Op::REPEAT: return "REPEAT";
    case Op::PAD: return "PAD";
    case Op::FILL: return "FILL";
    case Op::ADD: return "ADD";
    case Op::SUB: return "SUB";
    case Op::MUL: return "MUL";
    case Op::DIV: return "DIV";
    case Op::ADD_ID: return "ADD_ID";
    case Op::SCALE: return "SCALE";
    case Op::CLAMP: return "CLAMP";
    case Op::SQR: return "SQR";
    case Op::SQRT: return "SQRT";
    case Op::SILU: return "SILU";
    case Op::GELU: return "GELU";
    case Op::GELU_QUICK: return "GELU_QUICK";
    case Op::SIGMOID: return "SIGMOID";
    case Op::EXP: return "EXP";
    case Op::NEG: return "NEG";
    case Op::SOFTPLUS: return "SOFTPLUS";
    case Op::TANH: return "TANH";
    case Op::SWIGLU: return "SWIGLU";
    case Op::GEGLU: return "GEGLU";
    case Op::SWIGLU_OAI: return "SWIGLU_OAI";
    case Op::RMS_NORM: return "RMS_NORM";
    case Op::NORM: return "NORM";
    case Op::L2_NORM: return "L2_NORM";
    case Op::SOFT_MAX: return "SOFT_MAX";
    case Op::SUM_ROWS: return "SUM_ROWS";
    case Op::ARGSORT: return "ARGSORT";
    case Op::TOP_K: return "TOP_K";
    case Op::ROPE: return "ROPE";
    case Op::FLASH_ATTN_EXT: return "FLASH_ATTN_EXT";
    case Op::MUL_MAT: return "MUL_MAT";
    case Op::MUL_MAT_ID: return "MUL_MAT_ID";
    case Op::COUNT: break;
  }
  return "UNKNOWN";
}

size_t Tensor::n_bytes() const {
  for (int i = 0; i < kMaxDims; i++)
    if (ne[i] <= 0) return 0;
  // The last element's block starts at sum (ne[i] - 1) * nb[i] and is one block long.
  size_t bytes = (size_t)(ne[0] / block_size(type) - 1) * nb[0] + type_size(type);
  for (int i = 1; i < kMaxDims; i++) bytes += (size_t)(ne[i] - 1) * nb[i];
  return bytes;
}

bool Tensor::rows_contiguous() const { return nb[0] == type_size(type); }

bool Tensor::is_contiguous() const {
  if (!rows_contiguous()) return false;
  // Dims of size 1 may carry any stride: they are never stepped over.
  size_t expected = row_size(type, ne[0]);
  for (int i = 1; i < kMaxDims; i++) {
    if (ne[i] != 1 && nb[i] != expected) return false;
    expected *= (size_t)ne[i];
  }
  return true;
}

void Tensor::set_name(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(name, sizeof(name), fmt, args);
  va_end(args);
}

std::string shape_str(const Tensor& t) {
  return strprintf("[%lld, %lld, %lld, %lld]", (long long)t.ne[0], (long long)t.ne[1], (long long)t.ne[2],
                   (long long)t.ne[3]);
}

void set_contiguous_strides(Tensor& t) {
  t.nb[0] = type_size(t.type);
  t.nb[1] = row_size(t.type, t.ne[0]);
  for (int i = 2; i < kMaxDims; i++) t.nb[i] = t.nb[i - 1] * (size_t)t.ne[i - 1];
}

bool same_shape(const Tensor& a, const Tensor& b) {
  for (int i = 0; i < kMaxDims; i++)
    if (a.ne[i] != b.ne[i]) return false;
  return true;
}

bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.type != b.type || !same_shape(a, b)) return false;
  for (int i = 0; i < kMaxDims; i++)
    if (a.nb[i] != b.nb[i]) return false;
  return true;
}

bool can_repeat(const Tensor& b, const Tensor& a) {
  for (int i = 0; i < kMaxDims; i++) {
    if (b.ne[i] == 0 ? a.ne[i] != 0 : a.ne[i] % b.ne[i] != 0) return false;
  }
  return true;
}

}  // namespace hexllm::graph
