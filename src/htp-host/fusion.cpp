#include "htp-host/fusion.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"
#include "htp/abi/htp_opcode.h"

namespace hexllm::htp_host {

namespace {

using graph::Op;
using graph::Tensor;

// A row broadcast over every row of `x`: the shape of a norm weight or a bias.
bool is_row_of(const Tensor& w, const Tensor& x) {
  return w.type == Type::F32 && w.ne[0] == x.ne[0] && w.ne[1] == 1 && w.ne[2] == 1 && w.ne[3] == 1;
}

bool same_dense_layout(const Tensor& a, const Tensor& b) {
  for (int d = 0; d < 4; ++d)
    if (a.ne[d] != b.ne[d] || a.nb[d] != b.nb[d]) return false;
  return a.type == b.type;
}

bool is_weight(const Tensor* t) { return t != nullptr && graph::storage_root(t)->has_flag(graph::kFlagWeight); }

// A matmul on a model weight: what the fused matmul ops take.
bool is_weight_matmul(const Tensor* n, Op op) { return n->op == op && is_weight(n->src[0]) && n->src[1] != nullptr; }

// ADD(mm, b) or ADD(b, mm) with b a bias row or a residual of the sum's layout: its b, or null.
const Tensor* addend_of(const Tensor* add, const Tensor* mm) {
  if (add->op != Op::ADD || add->type != Type::F32) return nullptr;
  const Tensor* b = add->src[0] == mm ? add->src[1] : add->src[1] == mm ? add->src[0] : nullptr;
  if (b == nullptr || b == mm || b->type != Type::F32) return nullptr;
  if (is_row_of(*b, *mm) || same_dense_layout(*b, *add)) return b;
  return nullptr;
}

// ---- reorder ------------------------------------------------------------------------------------

constexpr uint32_t kReorderWindow = 48;  // nodes a pulled node may pass

// The storage a node writes: its own, or its root's for an in-place op (SET_ROWS, CPY) and views.
const Tensor* written_by(const Tensor* n) { return graph::storage_root(n); }

bool reads(const Tensor* n, const Tensor* root) {
  for (const Tensor* s : n->src)
    if (s != nullptr && graph::storage_root(s) == root) return true;
  return false;
}

// May `n` run before `m`, which came first? Not when n reads m's result (directly or through a
// view), nor when either writes storage the other reads or writes. Memory is not planned yet,
// so distinct storage roots are distinct bytes.
bool commutes(const Tensor* n, const Tensor* m) {
  for (const Tensor* s : n->src)
    if (s == m) return false;
  const Tensor* wn = written_by(n);
  const Tensor* wm = written_by(m);
  return wn != wm && !reads(n, wm) && !reads(m, wn);
}

// Moves seq[from] to position `to` (<= from) when it commutes with every node it passes.
bool pull(std::span<Tensor* const> nodes, std::vector<uint32_t>* seq, uint32_t from, uint32_t to) {
  if (from < to || from - to > kReorderWindow) return false;
  const Tensor* n = nodes[(*seq)[from]];
  for (uint32_t k = to; k < from; ++k)
    if (!commutes(n, nodes[(*seq)[k]])) return false;
  std::rotate(seq->begin() + to, seq->begin() + from, seq->begin() + from + 1);
  return true;
}

}  // namespace

std::vector<std::string> fusion_names() { return {"rms_norm_mul", "mul_mat_add", "qkv", "ffn", "moe_ffn"}; }

FuseOptions FuseOptions::parse(const std::string& text) {
  FuseOptions o;
  if (text == "all") return o;
  o = FuseOptions{false, false, false, false, false};
  if (text == "none") return o;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name == "rms_norm_mul") o.rms_norm_mul = true;
    else if (name == "mul_mat_add") o.mul_mat_add = true;
    else if (name == "qkv") o.qkv = true;
    else if (name == "ffn") o.ffn = true;
    else if (name == "moe_ffn") o.moe_ffn = true;
    else
      fail("--htp-fuse: '%s' is not a fusion (all, none, or a list of: rms_norm_mul, mul_mat_add, qkv, ffn, moe_ffn)",
           name.c_str());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return o;
}

void plan_order(std::span<Tensor* const> nodes, std::vector<uint32_t>* order) {
  order->resize(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) (*order)[i] = i;
  std::vector<uint32_t>& seq = *order;
  const uint32_t n = static_cast<uint32_t>(seq.size());
  // Position of the first node at or after `at` (within the window) that satisfies `want`, or n.
  auto find_after = [&](uint32_t at, auto&& want) {
    for (uint32_t k = at; k < n && k < at + kReorderWindow; ++k)
      if (want(nodes[seq[k]])) return k;
    return n;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const Tensor* anchor = nodes[seq[i]];
    const Op op = anchor->op;
    if (!is_weight_matmul(anchor, Op::MUL_MAT) && !is_weight_matmul(anchor, Op::MUL_MAT_ID)) continue;
    const Tensor* x = anchor->src[1];
    uint32_t p = i + 1;  // where the group continues
    // The ADD that reads a matmul's result, pulled right behind it.
    auto pull_add = [&](const Tensor* mm) {
      if (op != Op::MUL_MAT) return;
      const uint32_t k = find_after(p, [&](const Tensor* t) { return addend_of(t, mm) != nullptr; });
      if (k < n && pull(nodes, &seq, k, p)) ++p;
    };
    pull_add(anchor);
    std::vector<const Tensor*> group{anchor};
    while (group.size() < 3) {
      const uint32_t k = find_after(p, [&](const Tensor* t) {
        return is_weight_matmul(t, op) && t->src[1] == x && t->src[2] == anchor->src[2];
      });
      if (k >= n || !pull(nodes, &seq, k, p)) break;
      group.push_back(nodes[seq[p++]]);
      pull_add(group.back());
    }
    if (group.size() == 2) {  // gate and up: the GLU that reads both right behind them
      const uint32_t k = find_after(p, [&](const Tensor* t) {
        return (t->op == Op::SWIGLU || t->op == Op::GEGLU) &&
               ((t->src[0] == group[0] && t->src[1] == group[1]) || (t->src[0] == group[1] && t->src[1] == group[0]));
      });
      if (k < n && pull(nodes, &seq, k, p)) ++p;
    }
    i = p - 1;
  }
}

void plan_fusions(const graph::Graph& graph, std::span<const Tensor* const> seq, const FuseOptions& opts,
                  std::vector<PlannedOp>* out) {
  out->clear();
  // Readers of each tensor across the whole graph, views included: a swallowed result must have
  // exactly one, the node that fuses with it.
  std::unordered_map<const Tensor*, uint32_t> readers;
  for (const Tensor* n : graph.nodes())
    for (const Tensor* s : n->src)
      if (s != nullptr) readers[s]++;
  auto sole_reader = [&](const Tensor* t) {
    const auto it = readers.find(t);
    return it != readers.end() && it->second == 1 && !t->has_flag(graph::kFlagOutput);
  };
  const uint32_t n = static_cast<uint32_t>(seq.size());
  auto at = [&](uint32_t i) -> const Tensor* { return i < n ? seq[i] : nullptr; };
  // seq[i + 1] adds an addend to seq[i], whose only reader it is.
  auto adds_to = [&](uint32_t i) {
    const Tensor* add = at(i + 1);
    return add != nullptr && addend_of(add, seq[i]) != nullptr && sole_reader(seq[i]);
  };
  auto glu_of = [&](uint32_t i, Op mm_op) {
    const Tensor *a = seq[i], *b = at(i + 1), *g = at(i + 2);
    if (b == nullptr || g == nullptr || !is_weight_matmul(a, mm_op) || !is_weight_matmul(b, mm_op)) return false;
    if (a->src[1] != b->src[1] || a->src[2] != b->src[2]) return false;
    if (g->op != Op::SWIGLU && g->op != Op::GEGLU) return false;
    const bool uses = (g->src[0] == a && g->src[1] == b) || (g->src[0] == b && g->src[1] == a);
    return uses && sole_reader(a) && sole_reader(b);
  };
  for (uint32_t i = 0; i < n; ++i) {
    const Tensor* node = seq[i];
    if (opts.ffn && glu_of(i, Op::MUL_MAT)) {
      out->push_back({i + 2, 3, HTP_OP_MUL_MAT_FFN});
      i += 2;
      continue;
    }
    if (opts.moe_ffn && glu_of(i, Op::MUL_MAT_ID)) {
      out->push_back({i + 2, 3, HTP_OP_MUL_MAT_ID_FFN});
      i += 2;
      continue;
    }
    if (opts.qkv && is_weight_matmul(node, Op::MUL_MAT)) {
      // Three parts [mm (+ bias row)] on one activation.
      uint32_t j = i, parts = 0;
      while (parts < 3 && j < n && is_weight_matmul(seq[j], Op::MUL_MAT) && seq[j]->src[1] == node->src[1]) {
        const bool bias = adds_to(j) && is_row_of(*addend_of(seq[j + 1], seq[j]), *seq[j]);
        j += bias ? 2 : 1;
        ++parts;
      }
      if (parts == 3) {
        out->push_back({j - 1, j - i, HTP_OP_MUL_MAT_QKV});
        i = j - 1;
        continue;
      }
    }
    if (opts.mul_mat_add && is_weight_matmul(node, Op::MUL_MAT) && adds_to(i)) {
      out->push_back({i + 1, 2, HTP_OP_MUL_MAT_ADD});
      ++i;
      continue;
    }
    if (opts.rms_norm_mul && node->op == Op::RMS_NORM && sole_reader(node)) {
      const Tensor* mul = at(i + 1);
      if (mul != nullptr && mul->op == Op::MUL && mul->src[0] == node && mul->src[1] != nullptr &&
          is_row_of(*mul->src[1], *node)) {
        out->push_back({i + 1, 2, HTP_OP_RMS_NORM_MUL});
        ++i;
        continue;
      }
    }
    out->push_back({i, 1, HTP_OP_COUNT});
  }
}

}  // namespace hexllm::htp_host
