#include "model/model.h"

#include <map>

#include "base/error.h"

namespace hexllm::model {

std::unique_ptr<Model> Model::load(const std::string& path) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = gguf::File::open(path);
  m->hp_ = read_hparams(m->file_);
  m->tokenizer_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::load_vocab(m->file_));
  m->hp_.n_vocab = m->tokenizer_->n_vocab();
  const gguf::TensorInfo* embd = m->file_.find_tensor("token_embd.weight");
  if (embd != nullptr && embd->ne[1] != m->hp_.n_vocab)
    fail("%s: token_embd.weight has %lld rows but the tokenizer has %lld tokens", path.c_str(),
         static_cast<long long>(embd->ne[1]), static_cast<long long>(m->hp_.n_vocab));
  m->weights_ = load_weights(m->file_, m->hp_, m->weight_ctx_);
  return m;
}

int64_t Model::n_params() const {
  int64_t n = 0;
  for (const graph::Tensor* t : weights_.all) n += t->n_elements();
  return n;
}

size_t Model::weight_bytes() const {
  size_t n = 0;
  for (const graph::Tensor* t : weights_.all) n += t->n_bytes();
  return n;
}

std::string Model::dominant_type() const {
  std::map<std::string, size_t> bytes;
  for (const graph::Tensor* t : weights_.all)
    if (t->ne[1] > 1) bytes[type_name(t->type)] += t->n_bytes();
  std::string best = "F32";
  size_t most = 0;
  for (const auto& [name, n] : bytes)
    if (n > most) best = name, most = n;
  return best;
}

std::string Model::description() const {
  const double n = static_cast<double>(n_params());
  const std::string size = n >= 1e9 ? strprintf("%.1fB", n / 1e9) : strprintf("%.0fM", n / 1e6);
  return strprintf("%s %s %s", arch_name(hp_.arch), size.c_str(), dominant_type().c_str());
}

}  // namespace hexllm::model
