// Dispatch of the reference backend: which type combinations each op family implements, and
// the node-by-node loop.
#include "backend/ref/ref_backend.h"

#include "backend/ref/ref_common.h"
#include "base/error.h"
#include "graph/ops.h"

namespace hexllm::backend {

using graph::Op;
using graph::Tensor;
using ref::is_float;
using ref::is_readable;

namespace {

bool type_is(const Tensor* t, Type type) { return t != nullptr && t->type == type; }
bool float_or_null(const Tensor* t) { return t == nullptr || is_float(t->type); }
bool plain(const Tensor* t) { return t != nullptr && !is_quantized(t->type); }
// Rows that get_row can read: plain floats through any strides, block types whole.
bool readable(const Tensor* t) {
  return t != nullptr && is_readable(t->type) && (!is_quantized(t->type) || t->rows_contiguous());
}
bool floats(const Tensor* t) { return t != nullptr && is_float(t->type); }

// The type combinations the op families implement. compute_node checks them again: a node may
// be made by hand rather than by a builder.
bool supported(const Tensor& node) {
  const Tensor* const* s = node.src;
  switch (node.op) {
    case Op::NONE:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE: return true;

    case Op::GET_ROWS: return readable(s[0]) && type_is(s[1], Type::I32) && floats(&node);
    case Op::SET_ROWS:
      return floats(&node) && floats(s[0]) && (type_is(s[1], Type::I32) || type_is(s[1], Type::I64));
    case Op::CPY: return readable(s[0]) && floats(&node);
    case Op::CONT:
    case Op::DUP:
      return s[0] != nullptr && s[0]->type == node.type && (plain(s[0]) || s[0]->rows_contiguous());
    case Op::CONCAT: return plain(s[0]) && plain(s[1]) && s[0]->type == node.type && s[1]->type == node.type;
    case Op::REPEAT:
    case Op::PAD: return plain(s[0]) && s[0]->type == node.type;
    case Op::FILL: return floats(&node);

    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV: return floats(s[0]) && floats(s[1]) && floats(&node);
    case Op::ADD_ID: return floats(s[0]) && floats(s[1]) && type_is(s[2], Type::I32) && floats(&node);

    case Op::SCALE:
    case Op::CLAMP:
    case Op::SQR:
    case Op::SQRT:
    case Op::SILU:
    case Op::GELU:
    case Op::GELU_QUICK:
    case Op::SIGMOID:
    case Op::EXP:
    case Op::NEG:
    case Op::SOFTPLUS:
    case Op::TANH:
    case Op::RMS_NORM:
    case Op::NORM:
    case Op::L2_NORM:
    case Op::SUM_ROWS: return floats(s[0]) && floats(&node);
    case Op::SWIGLU:
    case Op::GEGLU:
    case Op::SWIGLU_OAI: return floats(s[0]) && float_or_null(s[1]) && floats(&node);

    case Op::SOFT_MAX:
      return floats(s[0]) && (s[1] == nullptr || type_is(s[1], Type::F32) || type_is(s[1], Type::F16)) &&
             (s[2] == nullptr || type_is(s[2], Type::F32)) && floats(&node);
    case Op::ARGSORT:
    case Op::TOP_K: return floats(s[0]) && node.type == Type::I32;

    case Op::ROPE:
      return floats(s[0]) && type_is(s[1], Type::I32) && (s[2] == nullptr || type_is(s[2], Type::F32)) &&
             (node.params[1] == graph::kRopeNormal || node.params[1] == graph::kRopeNeox) && floats(&node);
    case Op::FLASH_ATTN_EXT:
      return floats(s[0]) && floats(s[1]) && floats(s[2]) && float_or_null(s[3]) &&
             (s[4] == nullptr || type_is(s[4], Type::F32)) && floats(&node);
    case Op::MUL_MAT: return readable(s[0]) && floats(s[1]) && floats(&node);
    case Op::MUL_MAT_ID: return readable(s[0]) && floats(s[1]) && type_is(s[2], Type::I32) && floats(&node);

    case Op::COUNT: break;
  }
  return false;
}

}  // namespace

bool RefBackend::supports(const Tensor& node) const { return supported(node); }

void RefBackend::compute(std::span<Tensor* const> nodes) {
  for (Tensor* node : nodes) {
    if (graph::op_is_layout(node->op)) continue;
    ref::compute_node(*node, n_threads_);
  }
}

namespace ref {

void compute_node(Tensor& node, int n_threads) {
  if (graph::op_is_layout(node.op)) return;
  if (!supported(node)) unsupported(node);
  if (node.data == nullptr && node.n_elements() > 0)
    fail("ref: %s '%s' %s: output has no data", graph::op_name(node.op), node.name,
         graph::shape_str(node).c_str());
  for (int i = 0; i < graph::kMaxSrc; i++) {
    const Tensor* s = node.src[i];
    if (s != nullptr && s->data == nullptr && s->n_elements() > 0)
      fail("ref: %s '%s': source %d '%s' %s has no data", graph::op_name(node.op), node.name, i, s->name,
           graph::shape_str(*s).c_str());
  }
  switch (node.op) {
    case Op::GET_ROWS:
    case Op::SET_ROWS: return compute_rows(node);
    case Op::CPY:
    case Op::CONT:
    case Op::DUP:
    case Op::CONCAT:
    case Op::REPEAT:
    case Op::PAD:
    case Op::FILL: return compute_copy(node);
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::ADD_ID: return compute_binary(node);
    case Op::SCALE:
    case Op::CLAMP:
    case Op::SQR:
    case Op::SQRT:
    case Op::SILU:
    case Op::GELU:
    case Op::GELU_QUICK:
    case Op::SIGMOID:
    case Op::EXP:
    case Op::NEG:
    case Op::SOFTPLUS:
    case Op::TANH: return compute_unary(node);
    case Op::SWIGLU:
    case Op::GEGLU:
    case Op::SWIGLU_OAI: return compute_glu(node);
    case Op::RMS_NORM:
    case Op::NORM:
    case Op::L2_NORM: return compute_norm(node);
    case Op::SOFT_MAX: return compute_softmax(node);
    case Op::SUM_ROWS:
    case Op::ARGSORT:
    case Op::TOP_K: return compute_sort(node);
    case Op::ROPE: return compute_rope(node);
    case Op::FLASH_ATTN_EXT: return compute_attention(node, n_threads);
    case Op::MUL_MAT:
    case Op::MUL_MAT_ID: return compute_matmul(node, n_threads);
    default: unsupported(node);
  }
}

}  // namespace ref

}  // namespace hexllm::backend
