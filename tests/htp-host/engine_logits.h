// What the transport and target tests compare: every logit a model gives for a prompt, then
// for each teacher-forced decode step, concatenated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hexllm/engine.h"

namespace hexllm::test {

inline std::vector<float> prompt_and_step_logits(const EngineOptions& opts, const std::vector<int32_t>& prompt,
                                                 const std::vector<int32_t>& steps) {
  auto e = open_engine(opts);
  e->context->decode(prompt, true);
  std::vector<float> out(e->context->logits().begin(), e->context->logits().end());
  for (int32_t t : steps) {
    e->context->decode(std::span<const int32_t>(&t, 1), false);
    out.insert(out.end(), e->context->last_logits().begin(), e->context->last_logits().end());
  }
  return out;
}

}  // namespace hexllm::test
