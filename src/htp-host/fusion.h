// Op fusion in the prepare stage (docs/DESIGN.md §5, "Fusion"): patterns of graph nodes that one
// device op computes, formed only where the device accepts the fused op (its builder runs the
// same checks as the kernel) and the nodes it swallows have no other reader.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hexllm::htp_host {

// Which fusions may form: "all", "none", or a comma list of names (fusion_names()).
struct FuseOptions {
  bool rms_norm_mul = true;  // RMS_NORM -> MUL by a weight row
  bool mul_mat_add = true;   // MUL_MAT -> ADD of a bias row or a residual
  bool qkv = true;           // three MUL_MATs on one activation (each with an optional bias ADD)
  bool ffn = true;           // MUL_MAT gate, MUL_MAT up -> SWIGLU / GEGLU
  bool moe_ffn = true;       // the same with MUL_MAT_ID
  static FuseOptions parse(const std::string& text);  // throws naming the unknown name
};
// The names FuseOptions::parse takes.
std::vector<std::string> fusion_names();

// One device op of a run: a single node, or a group of `n_nodes` nodes ending at `last`
// (indices into the run) computed by `opcode`.
struct PlannedOp {
  uint32_t last;
  uint32_t n_nodes;  // 1: not fused
  uint32_t opcode;   // the fused opcode when n_nodes > 1
};

// A dependency-safe order of `nodes` (a graph's nodes, before its memory is planned) in which
// matmuls on one activation, the bias or residual ADD of each and the GLU reading a pair of
// them are pulled together, within a window of nodes, so that the fusions can form: indices
// into nodes. A node moves only past nodes it neither reads nor writes the storage of.
void plan_order(std::span<graph::Tensor* const> nodes, std::vector<uint32_t>* order);

// The candidate groups of `seq` (the compute nodes of `graph` in the order they will run): a
// candidate still needs the device to accept its fused op. Nodes outside a group plan as
// themselves.
void plan_fusions(const graph::Graph& graph, std::span<const graph::Tensor* const> seq, const FuseOptions& opts,
                  std::vector<PlannedOp>* out);

}  // namespace hexllm::htp_host
