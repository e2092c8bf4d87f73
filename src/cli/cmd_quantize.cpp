// `hexllm quantize IN OUT TYPE`: every weight matrix (2-D and up, row length a multiple of the
// type's block) becomes TYPE; 1-D tensors (norms, biases) are kept as they are.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/progress.h"
#include "gguf/gguf.h"
#include "quant/dequant.h"
#include "quant/quantize.h"

namespace hexllm::cli {

namespace {

struct QuantizeOptions {
  std::string in, out, type;
  int n_threads = 0;
};

Type parse_type(const std::string& name) {
  for (uint32_t id = 0; id < kTypeIdLimit; ++id) {
    const TypeTraits* tr = type_traits_or_null(id);
    if (tr != nullptr && iequals(name, tr->name) && quant::can_quantize(static_cast<Type>(id))) return static_cast<Type>(id);
  }
  std::string supported;
  for (uint32_t id = 0; id < kTypeIdLimit; ++id) {
    const TypeTraits* tr = type_traits_or_null(id);
    if (tr != nullptr && quant::can_quantize(static_cast<Type>(id)) && id != static_cast<uint32_t>(Type::Q8_K) &&
        id != static_cast<uint32_t>(Type::Q8_1))
      supported += (supported.empty() ? "" : ", ") + std::string(tr->name);
  }
  fail("cannot quantize to type '%s' (supported: %s)", name.c_str(), supported.c_str());
}

// llama.cpp's general.file_type numbering for the uniform ("pure") mixes we write.
int file_type_of(Type t) {
  switch (t) {
    case Type::F32: return 0;
    case Type::F16: return 1;
    case Type::Q4_0: return 2;
    case Type::Q4_1: return 3;
    case Type::Q8_0: return 7;
    case Type::Q5_0: return 8;
    case Type::Q5_1: return 9;
    case Type::Q6_K: return 18;
    case Type::IQ4_NL: return 25;
    case Type::BF16: return 32;
    default: return -1;
  }
}

int quantize(const QuantizeOptions& o) {
  const Type target = parse_type(o.type);
  const gguf::File in = gguf::File::open(o.in);
  const int threads = o.n_threads > 0 ? o.n_threads : default_thread_count();

  gguf::Writer w;
  for (const gguf::KeyValue& kv : in.metadata())
    if (kv.key != "general.file_type") w.copy_kv(kv);
  if (file_type_of(target) >= 0) w.set_u32("general.file_type", static_cast<uint32_t>(file_type_of(target)));

  auto progress = std::make_shared<ProgressBar>("quantize");
  const size_t n_tensors = in.tensors().size();
  auto done = std::make_shared<size_t>(0);
  int converted = 0;
  for (const gguf::TensorInfo& t : in.tensors()) {
    const bool convert = t.n_dims >= 2 && t.ne[0] % block_size(target) == 0 && t.type != target;
    const Type out_type = convert ? target : t.type;
    converted += convert;
    const gguf::TensorInfo* info = &t;
    const gguf::File* src = &in;
    w.add_tensor_lazy(t.name, out_type, std::span<const int64_t>(t.ne, t.n_dims),
                      [=](uint8_t* dst, size_t nbytes) {
                        const uint8_t* data = src->tensor_data(*info);
                        if (!convert) {
                          std::copy(data, data + nbytes, dst);
                        } else {
                          const int64_t n_per_row = info->ne[0];
                          const int64_t n_rows = info->n_elements() / n_per_row;
                          const size_t in_row = row_size(info->type, n_per_row);
                          std::vector<float> f32(static_cast<size_t>(info->n_elements()));
                          for (int64_t r = 0; r < n_rows; ++r)
                            quant::dequantize_row(info->type, data + static_cast<size_t>(r) * in_row,
                                                  f32.data() + r * n_per_row, n_per_row);
                          quant::quantize_rows(out_type, f32.data(), dst, n_rows, n_per_row, threads);
                        }
                        progress->update(++*done, n_tensors);
                      });
  }
  w.write(o.out);
  progress->finish();
  std::fprintf(stderr, "%s: %d of %zu tensors quantized to %s\n", o.out.c_str(), converted, n_tensors,
               type_name(target));
  return 0;
}

}  // namespace

Action add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* sub = app.add_subcommand("quantize", "Convert every weight matrix of a GGUF file to one type");
  sub->add_option("input", o->in, "Input GGUF file")->required();
  sub->add_option("output", o->out, "Output GGUF file")->required();
  sub->add_option("type", o->type, "Target type, e.g. Q4_0, Q8_0, Q4_K, Q6_K, F16")->required();
  sub->add_option("-t,--threads", o->n_threads, "Threads")->check(CLI::Range(1, 256));
  return [o] { return quantize(*o); };
}

}  // namespace hexllm::cli
