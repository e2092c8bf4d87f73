// Graph op -> device opcode and param builder, from the op table (htp/abi/htp_opcode.h).
#include "htp-host/op_builders.h"

namespace hexllm::htp_host {

OpRoute route_op(graph::Op op) {
  switch (op) {
#define HEXLLM_ROUTE_CASE(name, value, family) \
  case graph::Op::name:                        \
    return {HTP_OP_##name, build_##family};
    HTP_GRAPH_OPS(HEXLLM_ROUTE_CASE)
#undef HEXLLM_ROUTE_CASE
    default: return {HTP_OP_COUNT, nullptr};
  }
}

}  // namespace hexllm::htp_host
