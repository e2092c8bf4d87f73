// The built-in English text the synthetic tokenizer learns its BPE merges from.
#pragma once

#include <string_view>

namespace hexllm::synth {

// A few kilobytes of original prose covering common English words, numbers and punctuation.
std::string_view builtin_corpus();

}  // namespace hexllm::synth
