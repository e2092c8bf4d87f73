// One forward-graph function per architecture family.
#pragma once

#include "model/graph_builder.h"

namespace hexllm::model {

graph::Tensor* build_llama_family(GraphBuilder& b);  // llama, qwen2, qwen3, qwen3moe
graph::Tensor* build_gemma3(GraphBuilder& b);

}  // namespace hexllm::model
