// Shapes-only plans of the real-size presets against /work/shared/golden/baseline.md §3 (values
// typed in from there), type mixes, and option errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "synth/synth.h"

namespace hexllm::synth {
namespace {

struct Expect {
  std::vector<int64_t> ne;
  Type type;
};

std::map<std::string, Expect> table(const ModelPlan& plan) {
  std::map<std::string, Expect> m;
  for (const TensorPlan& t : plan.tensors)
    EXPECT_TRUE(m.emplace(t.name, Expect{t.ne, t.type}).second) << t.name;
  return m;
}

void expect_same(const std::map<std::string, Expect>& want, const std::map<std::string, Expect>& got) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, w] : want) {
    const auto it = got.find(name);
    ASSERT_NE(it, got.end()) << "missing " << name;
    EXPECT_EQ(it->second.ne, w.ne) << name;
    EXPECT_EQ(type_name(it->second.type), std::string(type_name(w.type))) << name;
  }
}

ModelPlan plan_of(const std::string& preset, const std::string& type) {
  GenOptions o;
  o.preset = preset;
  o.type = type;
  return plan_model(o);
}

// The metadata of a plan as a parsed GGUF (header and keys only).
struct Meta {
  std::vector<uint8_t> bytes;
  gguf::File file;
  explicit Meta(const ModelPlan& p) : bytes(p.metadata.to_bytes()), file(gguf::File::parse(bytes, "plan")) {}
};

// baseline.md §3.2, Llama-3.2-1B: 147 tensors.
std::map<std::string, Expect> llama1b_expected(const std::string& mix) {
  const bool q4km = mix == "Q4_K_M";
  const Type mat = mix == "Q4_0"   ? Type::Q4_0
                   : mix == "Q8_0" ? Type::Q8_0
                   : mix == "F16"  ? Type::F16
                                   : Type::Q4_K;
  const Type embd = mix == "Q8_0" ? Type::Q8_0 : mix == "F16" ? Type::F16 : Type::Q6_K;
  std::map<std::string, Expect> m;
  m["token_embd.weight"] = {{2048, 128256}, embd};
  m["rope_freqs.weight"] = {{32}, Type::F32};
  m["output_norm.weight"] = {{2048}, Type::F32};
  const std::vector<int> more_bits = {0, 1, 4, 7, 10, 13, 14, 15};
  for (int il = 0; il < 16; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    const bool q6 = q4km && std::find(more_bits.begin(), more_bits.end(), il) != more_bits.end();
    m[b + "attn_norm.weight"] = {{2048}, Type::F32};
    m[b + "ffn_norm.weight"] = {{2048}, Type::F32};
    m[b + "attn_q.weight"] = {{2048, 2048}, mat};
    m[b + "attn_k.weight"] = {{2048, 512}, mat};
    m[b + "attn_v.weight"] = {{2048, 512}, q6 ? Type::Q6_K : mat};
    m[b + "attn_output.weight"] = {{2048, 2048}, mat};
    m[b + "ffn_gate.weight"] = {{2048, 8192}, mat};
    m[b + "ffn_up.weight"] = {{2048, 8192}, mat};
    m[b + "ffn_down.weight"] = {{8192, 2048}, q6 ? Type::Q6_K : mat};
  }
  return m;
}

TEST(SynthPlan, Llama32TensorTablesMatchBaseline) {
  for (const char* mix : {"Q4_0", "Q8_0", "Q4_K_M", "F16"}) {
    SCOPED_TRACE(mix);
    const ModelPlan p = plan_of("llama-3.2-1b", mix);
    EXPECT_EQ(p.tensors.size(), 147u);
    expect_same(llama1b_expected(mix), table(p));
    const Meta meta(p);
    const uint32_t ftype = std::string(mix) == "Q4_0"   ? 2
                           : std::string(mix) == "Q8_0" ? 7
                           : std::string(mix) == "F16"  ? 1
                                                        : 15;
    EXPECT_EQ(meta.file.get_uint("general.file_type"), ftype);
  }
}

TEST(SynthPlan, Llama32HyperparametersAndSizes) {
  const ModelPlan p = plan_of("llama-3.2-1b", "");
  EXPECT_EQ(p.type, "Q4_0");
  const Meta meta(p);
  const gguf::File& f = meta.file;
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 16u);
  EXPECT_EQ(f.get_uint("llama.context_length"), 131072u);
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 2048u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length"), 8192u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count"), 32u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 8u);
  EXPECT_EQ(f.get_uint("llama.attention.key_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.attention.value_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.rope.dimension_count"), 64u);
  EXPECT_EQ(f.get_uint("llama.vocab_size"), 128256u);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.get_float("llama.rope.freq_base")), 500000.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f.get_uint("general.file_type"), 2u);
  EXPECT_EQ(f.get_uint("general.quantization_version"), 2u);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "llama-bpe");
  ASSERT_NE(f.get_string_array("tokenizer.ggml.tokens"), nullptr);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), 128256u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->at(128000), "<|begin_of_text|>");
  EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type")->size(), 128256u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.bos_token_id"), 128000u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.eos_token_id"), 128001u);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token"), true);
  ASSERT_TRUE(f.get_string("tokenizer.chat_template").has_value());

  // rope_freqs.weight of baseline.md §3.1.
  const float want[32] = {1,         1,        1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1.651329f,
                          3.292263f, 9.66673f, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32};
  const TensorPlan* rope = nullptr;
  for (const TensorPlan& t : p.tensors)
    if (t.name == "rope_freqs.weight") rope = &t;
  ASSERT_NE(rope, nullptr);
  ASSERT_EQ(rope->values.size(), 32u);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(rope->values[i], want[i], 2e-6f * want[i]) << "pair " << i;

  // Parameter count of baseline.md §3.1 (it does not count the 32 rope_freqs values), and the
  // tensor bytes llama-bench reports (727.75 MiB; the exact sum from the §3.2 shapes and types).
  EXPECT_EQ(p.n_params() - 32, 1235814400u);
  EXPECT_EQ(p.tensor_bytes(), 763097216u);
  // The file differs from baseline's 770,924,736 bytes only by the size of the tokenizer data.
  const double file_size = static_cast<double>(meta.bytes.size() + p.tensor_bytes());
  EXPECT_NEAR(file_size / 770924736.0, 1.0, 0.02);
}

TEST(SynthPlan, Qwen25TensorTableAndHyperparameters) {
  const ModelPlan p = plan_of("qwen2.5-0.5b", "");
  EXPECT_EQ(p.type, "Q4_0");
  std::map<std::string, Expect> m;
  m["token_embd.weight"] = {{896, 151936}, Type::Q8_0};
  m["output_norm.weight"] = {{896}, Type::F32};
  for (int il = 0; il < 24; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    m[b + "attn_norm.weight"] = {{896}, Type::F32};
    m[b + "ffn_norm.weight"] = {{896}, Type::F32};
    m[b + "attn_q.weight"] = {{896, 896}, Type::Q4_0};
    m[b + "attn_k.weight"] = {{896, 128}, Type::Q4_0};
    m[b + "attn_v.weight"] = {{896, 128}, Type::Q4_0};
    m[b + "attn_q.bias"] = {{896}, Type::F32};
    m[b + "attn_k.bias"] = {{128}, Type::F32};
    m[b + "attn_v.bias"] = {{128}, Type::F32};
    m[b + "attn_output.weight"] = {{896, 896}, Type::Q4_0};
    m[b + "ffn_gate.weight"] = {{896, 4864}, Type::Q4_0};
    m[b + "ffn_up.weight"] = {{896, 4864}, Type::Q4_0};
    m[b + "ffn_down.weight"] = {{4864, 896}, Type::Q4_0};
  }
  EXPECT_EQ(p.tensors.size(), 290u);
  expect_same(m, table(p));
  EXPECT_EQ(p.n_params(), 494032768u);
  EXPECT_EQ(p.tensor_bytes(), 346206720u);  // 330.17 MiB as llama-bench reports

  const Meta meta(p);
  const gguf::File& f = meta.file;
  EXPECT_EQ(f.get_string("general.architecture"), "qwen2");
  EXPECT_EQ(f.get_uint("qwen2.block_count"), 24u);
  EXPECT_EQ(f.get_uint("qwen2.context_length"), 32768u);
  EXPECT_EQ(f.get_uint("qwen2.embedding_length"), 896u);
  EXPECT_EQ(f.get_uint("qwen2.feed_forward_length"), 4864u);
  EXPECT_EQ(f.get_uint("qwen2.attention.head_count"), 14u);
  EXPECT_EQ(f.get_uint("qwen2.attention.head_count_kv"), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.get_float("qwen2.rope.freq_base")), 1000000.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.get_float("qwen2.attention.layer_norm_rms_epsilon")), 1e-6f);
  // Keys the baseline files do not carry for qwen2 (head_dim = n_embd / n_head).
  EXPECT_EQ(f.find("qwen2.attention.key_length"), nullptr);
  EXPECT_EQ(f.find("qwen2.rope.dimension_count"), nullptr);
  EXPECT_EQ(f.find("qwen2.vocab_size"), nullptr);
  EXPECT_EQ(f.get_uint("general.file_type"), 2u);
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "qwen2");
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), 151936u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.bos_token_id"), 151643u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.eos_token_id"), 151643u);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token"), false);
  const double file_size = static_cast<double>(meta.bytes.size() + p.tensor_bytes());
  EXPECT_NEAR(file_size / 352151872.0, 1.0, 0.02);
}

TEST(SynthPlan, Qwen25KQuantFallbacks) {
  // Rows of 896 do not fit 256-element K-quant blocks: Q4_K -> Q5_0, Q6_K -> Q8_0
  // (llama-quantize's substitutes); ffn_down rows of 4864 = 19 * 256 keep the K-quants.
  const auto m = table(plan_of("qwen2.5-0.5b", "Q4_K_M"));
  EXPECT_EQ(m.at("token_embd.weight").type, Type::Q8_0);
  EXPECT_EQ(m.at("blk.0.attn_q.weight").type, Type::Q5_0);
  EXPECT_EQ(m.at("blk.0.attn_v.weight").type, Type::Q8_0);  // Q6_K layer (more bits) -> Q8_0
  EXPECT_EQ(m.at("blk.3.attn_v.weight").type, Type::Q5_0);  // 3 >= 24/8, (3 - 3) % 3 != 2
  EXPECT_EQ(m.at("blk.0.ffn_down.weight").type, Type::Q6_K);
  EXPECT_EQ(m.at("blk.3.ffn_down.weight").type, Type::Q4_K);
}

TEST(SynthPlan, SmallPresetMixes) {
  // tiny has 4 layers: use_more_bits(i, 4) holds for i >= 7*4/8 = 3 and (i - 0) % 3 == 2.
  const auto km = table(plan_of("tiny", "Q4_K_M"));
  EXPECT_EQ(km.at("token_embd.weight").type, Type::Q6_K);
  EXPECT_EQ(km.at("blk.0.attn_v.weight").type, Type::Q4_K);
  EXPECT_EQ(km.at("blk.1.ffn_down.weight").type, Type::Q4_K);
  EXPECT_EQ(km.at("blk.2.attn_v.weight").type, Type::Q6_K);
  EXPECT_EQ(km.at("blk.3.ffn_down.weight").type, Type::Q6_K);
  EXPECT_EQ(km.at("blk.3.attn_q.weight").type, Type::Q4_K);
  EXPECT_EQ(km.at("blk.3.attn_norm.weight").type, Type::F32);

  GenOptions o;
  o.preset = "tiny";
  o.type = "Q4_0";
  auto m = table(plan_model(o));
  EXPECT_EQ(m.at("token_embd.weight").type, Type::Q6_K);
  EXPECT_EQ(m.count("output.weight"), 0u);
  o.untied_output = true;
  m = table(plan_model(o));
  EXPECT_EQ(m.at("token_embd.weight").type, Type::Q4_0);
  EXPECT_EQ(m.at("output.weight").type, Type::Q6_K);
  EXPECT_EQ(m.at("output.weight").ne, (std::vector<int64_t>{256, 1016}));
  o.untied_output = false;
  o.pure = true;
  m = table(plan_model(o));
  EXPECT_EQ(m.at("token_embd.weight").type, Type::Q4_0);

  // The router of a MoE stays F32 in every file type.
  o = GenOptions{};
  o.preset = "tiny-qwen3moe";
  o.type = "Q8_0";
  m = table(plan_model(o));
  EXPECT_EQ(m.at("blk.0.ffn_gate_inp.weight").type, Type::F32);
  EXPECT_EQ(m.at("blk.0.ffn_gate_exps.weight").type, Type::Q8_0);
}

TEST(SynthPlan, OptionErrorsNameTheProblem) {
  GenOptions o;
  o.preset = "nope";
  try {
    plan_model(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
    for (const std::string& n : preset_names()) EXPECT_NE(msg.find(n), std::string::npos) << msg;
  }
  o.preset = "llama-3.2-1b";
  o.type = "Q5_1";
  try {
    plan_model(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'Q5_1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Q4_K_M"), std::string::npos) << msg;
  }
  o.preset = "tiny";
  o.type = "Q2_K";
  EXPECT_THROW(plan_model(o), Error);
  o.type = "";
  o.identical_experts = true;
  EXPECT_THROW(plan_model(o), Error);
  EXPECT_THROW(preset_types("nope"), Error);
}

// llama-quantize takes "q4_0" for Q4_0: so does gen-model, and the plan keeps the canonical name.
TEST(SynthPlan, TypeNamesAreCaseInsensitive) {
  for (const char* spelled : {"q4_0", "Q4_0", "q4_K_m"}) {
    const ModelPlan lower = plan_of("llama-3.2-1b", spelled);
    const ModelPlan upper = plan_of("llama-3.2-1b", std::string(spelled) == "q4_K_m" ? "Q4_K_M" : "Q4_0");
    EXPECT_EQ(lower.type, upper.type) << spelled;
    ASSERT_EQ(lower.tensors.size(), upper.tensors.size());
    for (size_t i = 0; i < lower.tensors.size(); ++i) EXPECT_EQ(lower.tensors[i].type, upper.tensors[i].type);
  }
}

TEST(SynthPlan, PresetList) {
  const std::vector<std::string> want = {"llama-3.2-1b", "qwen2.5-0.5b",  "tiny",       "tiny-qwen2",
                                         "tiny-qwen3",   "tiny-qwen3moe", "tiny-gemma3"};
  EXPECT_EQ(preset_names(), want);
  EXPECT_EQ(preset_types("tiny").front(), "Q8_0");
  EXPECT_EQ(preset_types("llama-3.2-1b"), (std::vector<std::string>{"Q4_0", "Q8_0", "Q4_K_M", "F16"}));
  EXPECT_EQ(preset_types("tiny-gemma3").front(), "F16");
}

}  // namespace
}  // namespace hexllm::synth
