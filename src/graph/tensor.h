// Tensors of the graph IR: ggml-style shape (ne) and byte strides (nb), views, op and sources.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "quant/types.h"

namespace hexllm::graph {

inline constexpr int kMaxDims = 4;
inline constexpr int kMaxSrc = 6;
inline constexpr int kMaxParams = 16;
inline constexpr int kMaxName = 64;

// Every op of the IR. The graph builder knows nothing about devices; backends decide which
// ops they take. Parameter layouts (Tensor::params) are documented at each builder in ops.h.
enum class Op : uint16_t {
  NONE,  // leaf: weight, input or cache; has no sources

  // Layout only: data aliases view_src, nothing is computed.
  VIEW,
  RESHAPE,
  PERMUTE,
  TRANSPOSE,

  // Data movement.
  GET_ROWS,
  SET_ROWS,
  CPY,
  CONT,
  DUP,
  CONCAT,
  REPEAT,
  PAD,
  FILL,

  // Elementwise binary: src1 is broadcast (repeated) to the shape of src0.
  ADD,
  SUB,
  MUL,
  DIV,
  ADD_ID,

  // Elementwise unary.
  SCALE,
  CLAMP,
  SQR,
  SQRT,
  SILU,
  GELU,
  GELU_QUICK,
  SIGMOID,
  EXP,
  NEG,
  SOFTPLUS,
  TANH,

  // Gated linear units: act(src0) * src1.
  SWIGLU,
  GEGLU,
  SWIGLU_OAI,

  // Row-wise.
  RMS_NORM,
  NORM,
  L2_NORM,
  SOFT_MAX,
  SUM_ROWS,
  ARGSORT,
  TOP_K,

  // Attention and matrix products.
  ROPE,
  FLASH_ATTN_EXT,
  MUL_MAT,
  MUL_MAT_ID,

  COUNT
};

const char* op_name(Op op);

// True for VIEW/RESHAPE/PERMUTE/TRANSPOSE (and leaves): nothing to compute.
inline bool op_is_layout(Op op) { return op == Op::NONE || (op >= Op::VIEW && op <= Op::TRANSPOSE); }

enum TensorFlag : uint32_t {
  kFlagInput = 1u << 0,   // filled by the host before each evaluation (tokens, positions, masks)
  kFlagOutput = 1u << 1,  // read after evaluation: must not be overwritten by later nodes
  kFlagWeight = 1u << 2,  // model parameter, read-only
  kFlagCache = 1u << 3,   // persistent state (KV cache) that outlives one evaluation
};

struct Tensor {
  Type type = Type::F32;
  Op op = Op::NONE;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};  // elements per dimension; ne[0] is the row length
  size_t nb[kMaxDims] = {0, 0, 0, 0};   // byte strides; nb[0] is the block (or element) size
  int32_t params[kMaxParams] = {};      // op parameters (floats stored bit-cast)
  Tensor* src[kMaxSrc] = {};
  Tensor* view_src = nullptr;  // storage owner for views and in-place ops (SET_ROWS, CPY)
  size_t view_offs = 0;        // byte offset into view_src's storage
  void* data = nullptr;        // bound by the allocator (or the loader for weights)
  uint32_t flags = 0;
  char name[kMaxName] = {};

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
  // Bytes spanned from the first to one past the last element (for any strides).
  size_t n_bytes() const;
  size_t row_bytes() const { return row_size(type, ne[0]); }
  // Rows are packed and dims are in order (nb[i+1] == nb[i] * ne[i], nb[1] == row bytes).
  bool is_contiguous() const;
  // Each row is contiguous (nb[0] is the block size); rows may be strided.
  bool rows_contiguous() const;
  bool is_view() const { return view_src != nullptr; }
  bool has_flag(TensorFlag f) const { return (flags & f) != 0; }

  float param_f(int i) const {
    float f;
    std::memcpy(&f, &params[i], 4);
    return f;
  }
  void set_param_f(int i, float v) { std::memcpy(&params[i], &v, 4); }

  void set_name(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  // Pointer to element (i0, i1, i2, i3) for plain types; for block types i0 must be a
  // multiple of the block size.
  void* at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return static_cast<uint8_t*>(data) + (i0 / block_size(type)) * nb[0] + i1 * nb[1] + i2 * nb[2] +
           i3 * nb[3];
  }
};

// The root storage owner of a tensor (follows view_src chains).
inline const Tensor* storage_root(const Tensor* t) {
  while (t->view_src != nullptr) t = t->view_src;
  return t;
}

// "[64, 32, 1, 1]": for error messages.
std::string shape_str(const Tensor& t);

// Row-major contiguous strides for `type` and `ne`.
void set_contiguous_strides(Tensor& t);

// Same type, shape and strides.
bool same_layout(const Tensor& a, const Tensor& b);
bool same_shape(const Tensor& a, const Tensor& b);
// b can be broadcast (repeated a whole number of times per dim) to the shape of a.
bool can_repeat(const Tensor& b, const Tensor& a);

}  // namespace hexllm::graph
