#include "synth/type_mix.h"

#include "base/strings.h"

namespace hexllm::synth {

namespace {

const FileType kFileTypes[] = {
    {"F32", 0, Type::F32},    {"F16", 1, Type::F16},        {"Q4_0", 2, Type::Q4_0},
    {"Q4_1", 3, Type::Q4_1},  {"Q8_0", 7, Type::Q8_0},      {"Q5_0", 8, Type::Q5_0},
    {"Q5_1", 9, Type::Q5_1},  {"Q4_K", 14, Type::Q4_K},     {"Q4_K_M", 15, Type::Q4_K},
    {"Q6_K", 18, Type::Q6_K}, {"IQ4_NL", 25, Type::IQ4_NL}, {"BF16", 32, Type::BF16},
};

bool fits(Type t, int64_t row_length) { return row_length % block_size(t) == 0; }

// llama-quantize's substitutes for K-quants whose 256-element blocks do not divide the row.
Type fallback(Type t, int64_t row_length) {
  if (fits(t, row_length)) return t;
  if (t == Type::Q4_K && fits(Type::Q5_0, row_length)) return Type::Q5_0;
  if (t == Type::Q6_K && fits(Type::Q8_0, row_length)) return Type::Q8_0;
  return Type::F16;
}

}  // namespace

const FileType* find_file_type(const std::string& name) {
  for (const FileType& ft : kFileTypes)
    if (iequals(name, ft.name)) return &ft;
  return nullptr;
}

bool use_more_bits(int64_t layer, int64_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

Type choose_type(const FileType& ft, const MixInput& in, bool pure) {
  if (in.role == Role::Vector || in.role == Role::Router) return Type::F32;
  const Type base = ft.base;
  if (base == Type::F32 || base == Type::F16 || base == Type::BF16 || pure)
    return fallback(base, in.row_length);
  Type t = base;
  if (in.output_role) {
    if (base != Type::Q8_0) t = Type::Q6_K;
  } else if (std::string(ft.name) == "Q4_K_M" && (in.role == Role::AttnV || in.role == Role::FfnDown) &&
             use_more_bits(in.layer, in.n_layer)) {
    t = Type::Q6_K;
  }
  return fallback(t, in.row_length);
}

}  // namespace hexllm::synth
