// A loaded model: GGUF file (mapped), hyperparameters, weights, tokenizer.
#pragma once

#include <memory>
#include <string>

#include "gguf/gguf.h"
#include "graph/context.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace hexllm::model {

class Model {
 public:
  // Maps and validates the file, reads hyperparameters, weights and tokenizer. Throws
  // hexllm::Error naming the file and what is wrong.
  static std::unique_ptr<Model> load(const std::string& path);

  const gguf::File& file() const { return file_; }
  const HParams& hparams() const { return hp_; }
  const Weights& weights() const { return weights_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }

  int64_t n_params() const;
  size_t weight_bytes() const;
  // The type of most weight bytes, e.g. "Q4_0" (llama-bench's model description).
  std::string dominant_type() const;
  // "llama 1.2B Q4_0"-style label.
  std::string description() const;

 private:
  Model() = default;
  gguf::File file_;
  HParams hp_;
  graph::Context weight_ctx_;
  Weights weights_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

}  // namespace hexllm::model
