// Data movement: copies with type conversion (CPY), same-type copies (CONT, DUP), and the
// element rearrangements CONCAT, REPEAT, PAD, plus FILL.
#include <cstring>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

namespace {

// Copies the bytes of one element (same type on both sides).
void copy_element(const Tensor& src, const int64_t (&s)[4], const Tensor& dst, const int64_t (&d)[4]) {
  std::memcpy(dst.at(d[0], d[1], d[2], d[3]), src.at(s[0], s[1], s[2], s[3]), type_size(src.type));
}

// Calls fn(i) for every element index i = (i0, i1, i2, i3) of t.
template <class F>
void for_each_element(const Tensor& t, F&& fn) {
  for_each_row(t, [&](int64_t i1, int64_t i2, int64_t i3) {
    for (int64_t i0 = 0; i0 < t.ne[0]; i0++) fn(i0, i1, i2, i3);
  });
}

// CPY: element k of a (in logical order) goes to element k of b, converted to b's type.
void cpy(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const int64_t n0 = node.ne[0], n1 = node.ne[1], n2 = node.ne[2];
  std::vector<float> row((size_t)a.ne[0]);
  int64_t k = 0;
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    get_row(a, i1, i2, i3, row.data());
    for (float v : row) {
      set_f(node, k % n0, k / n0 % n1, k / (n0 * n1) % n2, k / (n0 * n1 * n2), v);  // k unraveled in b
      k++;
    }
  });
}

// CONT, DUP: same type and shape; block rows are copied whole.
void copy_same(const Tensor& node) {
  const Tensor& a = *node.src[0];
  if (is_quantized(a.type)) {
    for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
      std::memcpy(node.at(0, i1, i2, i3), a.at(0, i1, i2, i3), a.row_bytes());
    });
    return;
  }
  for_each_element(node, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    copy_element(a, {i0, i1, i2, i3}, node, {i0, i1, i2, i3});
  });
}

// out[i] = i[dim] < a.ne[dim] ? a[i] : b[i with i[dim] - a.ne[dim]]
void concat(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int dim = node.params[0];
  for_each_element(node, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    int64_t i[4] = {i0, i1, i2, i3};
    const bool from_a = i[dim] < a.ne[dim];
    if (!from_a) i[dim] -= a.ne[dim];
    copy_element(from_a ? a : b, i, node, {i0, i1, i2, i3});
  });
}

// out[i] = a[i mod a.ne]
void repeat(const Tensor& node) {
  const Tensor& a = *node.src[0];
  for_each_element(node, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    copy_element(a, {i0 % a.ne[0], i1 % a.ne[1], i2 % a.ne[2], i3 % a.ne[3]}, node, {i0, i1, i2, i3});
  });
}

// out[i] = a[i] inside a, zero after it
void pad(const Tensor& node) {
  const Tensor& a = *node.src[0];
  for_each_element(node, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    if (i0 < a.ne[0] && i1 < a.ne[1] && i2 < a.ne[2] && i3 < a.ne[3])
      copy_element(a, {i0, i1, i2, i3}, node, {i0, i1, i2, i3});
    else
      std::memset(node.at(i0, i1, i2, i3), 0, type_size(node.type));
  });
}

void fill(const Tensor& node) {
  const float value = node.param_f(0);
  for_each_element(
      node, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) { set_f(node, i0, i1, i2, i3, value); });
}

}  // namespace

void compute_copy(const Tensor& node) {
  switch (node.op) {
    case Op::CPY: return cpy(node);
    case Op::CONT:
    case Op::DUP: return copy_same(node);
    case Op::CONCAT: return concat(node);
    case Op::REPEAT: return repeat(node);
    case Op::PAD: return pad(node);
    case Op::FILL: return fill(node);
    default: unsupported(node);
  }
}

}  // namespace hexllm::backend::ref
