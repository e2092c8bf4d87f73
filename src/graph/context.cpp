#include "graph/context.h"

#include "base/error.h"

namespace hexllm::graph {

namespace {

const char* what(Op op) { return op == Op::NONE ? "new_tensor" : op_name(op); }

// Copies a shape of 1..4 dims into t.ne (the missing dims stay 1) after checking it.
void set_shape(Tensor& t, Op op, std::span<const int64_t> ne) {
  if (ne.empty() || ne.size() > (size_t)kMaxDims)
    fail("%s: %zu dims (1 to %d allowed)", what(op), ne.size(), kMaxDims);
  if (type_traits_or_null(static_cast<uint32_t>(t.type)) == nullptr)
    fail("%s: unknown type id %u", what(op), static_cast<uint32_t>(t.type));
  for (size_t i = 0; i < ne.size(); i++) {
    if (ne[i] < 0) fail("%s: ne[%zu] = %lld is negative", what(op), i, (long long)ne[i]);
    t.ne[i] = ne[i];
  }
  if (t.ne[0] % block_size(t.type) != 0)
    fail("%s: row length %lld is not a multiple of the %s block size %u", what(op), (long long)t.ne[0],
         type_name(t.type), block_size(t.type));
}

}  // namespace

Tensor* Context::new_tensor(Type type, std::span<const int64_t> ne) { return new_node(Op::NONE, type, ne); }

Tensor* Context::new_node(Op op, Type type, std::span<const int64_t> ne) {
  Tensor t;
  t.type = type;
  t.op = op;
  set_shape(t, op, ne);
  set_contiguous_strides(t);
  tensors_.push_back(t);
  return &tensors_.back();
}

Tensor* Context::new_view(Op op, Tensor* src, std::span<const int64_t> ne, std::span<const size_t> nb,
                          size_t offset) {
  if (src == nullptr) fail("%s: null source", op_name(op));
  if (nb.size() != ne.size()) fail("%s: %zu dims but %zu strides", op_name(op), ne.size(), nb.size());
  Tensor t;
  t.type = src->type;
  t.op = op;
  set_shape(t, op, ne);
  for (size_t i = 0; i < nb.size(); i++) t.nb[i] = nb[i];
  // Missing outer strides: as if contiguous past the last given dim.
  for (size_t i = nb.size(); i < (size_t)kMaxDims; i++) t.nb[i] = t.nb[i - 1] * (size_t)t.ne[i - 1];
  // A view always points at the storage root, with the offset relative to it; src[0] keeps the
  // dependency on the viewed tensor itself (which may be a node that writes the root).
  t.view_src = src->view_src != nullptr ? src->view_src : src;
  t.view_offs = src->view_offs + offset;
  t.src[0] = src;
  if (src->data != nullptr) t.data = static_cast<uint8_t*>(src->data) + offset;
  tensors_.push_back(t);
  return &tensors_.back();
}

}  // namespace hexllm::graph
