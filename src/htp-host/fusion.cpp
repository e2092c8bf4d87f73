#include "htp-host/fusion.h"

#include <unordered_map>

#include "base/error.h"
#include "htp/abi/htp_opcode.h"

namespace hexllm::htp_host {

namespace {

// A row broadcast over every row of `x`: the shape of a norm weight.
bool is_row_of(const graph::Tensor& w, const graph::Tensor& x) {
  return w.type == Type::F32 && w.ne[0] == x.ne[0] && w.ne[1] == 1 && w.ne[2] == 1 && w.ne[3] == 1;
}

}  // namespace

std::vector<std::string> fusion_names() { return {"rms_norm_mul"}; }

FuseOptions FuseOptions::parse(const std::string& text) {
  FuseOptions o;
  if (text == "all") return o;
  o.rms_norm_mul = false;
  if (text == "none") return o;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name == "rms_norm_mul") o.rms_norm_mul = true;
    else fail("--htp-fuse: '%s' is not a fusion (all, none, or a list of: rms_norm_mul)", name.c_str());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return o;
}

void plan_fusions(const graph::Graph& graph, std::span<const graph::Tensor* const> run, const FuseOptions& opts,
                  std::vector<PlannedOp>* out) {
  out->clear();
  // Readers of each tensor across the whole graph, views included: a swallowed result must have
  // exactly one, the node that fuses with it.
  std::unordered_map<const graph::Tensor*, uint32_t> readers;
  for (const graph::Tensor* n : graph.nodes())
    for (const graph::Tensor* s : n->src)
      if (s != nullptr) readers[s]++;
  auto sole_reader = [&](const graph::Tensor* t) {
    const auto it = readers.find(t);
    return it != readers.end() && it->second == 1 && !t->has_flag(graph::kFlagOutput);
  };
  for (uint32_t i = 0; i < run.size(); ++i) {
    const graph::Tensor* n = run[i];
    if (opts.rms_norm_mul && i > 0 && n->op == graph::Op::MUL) {
      const graph::Tensor* norm = run[i - 1];
      if (n->src[0] == norm && norm->op == graph::Op::RMS_NORM && sole_reader(norm) && n->src[1] != nullptr &&
          is_row_of(*n->src[1], *norm) && !out->empty() && out->back().last == i - 1 && out->back().n_nodes == 1) {
        out->back() = {i, 2, HTP_OP_RMS_NORM_MUL};
        continue;
      }
    }
    out->push_back({i, 1, HTP_OP_COUNT});
  }
}

}  // namespace hexllm::htp_host
