// Bit-exact dequantization against llama.cpp: the golden `inp_embd` activation is llama.cpp's
// dequantized `token_embd.weight` rows of the prompt tokens (golden README §4.3, §6). We read the
// same rows from the GGUF file, dequantize them with our code and compare every bit.
#include "golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/dequant.h"
#include "quant/quantize.h"
#include "quant/types.h"

namespace hexllm::quant {
namespace {

struct GoldenModel {
  const char* name;
  Type embd_type;  // the token_embd.weight type this model exercises (README §3.2)
};

class QuantGolden : public ::testing::TestWithParam<GoldenModel> {};

TEST_P(QuantGolden, TokenEmbeddingRowsMatchLlamaCppBitForBit) {
  GOLDEN_OR_SKIP(golden);
  const GoldenModel& m = GetParam();
  const std::string gguf_path = test::decompress(golden, std::string("models/") + m.name + ".gguf.xz");
  const gguf::File file = gguf::File::open(gguf_path);
  const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr) << gguf_path;
  ASSERT_EQ(embd->type, m.embd_type) << "token_embd.weight of " << m.name << " is " << type_name(embd->type);
  const int64_t n_embd = embd->ne[0], n_vocab = embd->ne[1];
  const size_t row_bytes = row_size(embd->type, n_embd);
  const uint8_t* data = file.tensor_data(*embd);

  for (const char* prompt : {"short", "long"}) {
    const std::string case_name = std::string(m.name) + "__" + prompt;
    const nlohmann::json c = test::read_json(golden + "/cases/" + case_name + ".json");
    const std::vector<float> acts =
        test::read_f32(golden + "/cases/" + c["activations_file"].get<std::string>());
    const nlohmann::json* inp = nullptr;
    for (const nlohmann::json& a : c["activations"])
      if (a["name"] == "inp_embd") inp = &a;
    ASSERT_NE(inp, nullptr) << case_name << ": no inp_embd activation";
    const std::vector<int64_t> tokens = c["tokens"].get<std::vector<int64_t>>();
    ASSERT_EQ((*inp)["shape"][0].get<int64_t>(), (int64_t)tokens.size()) << case_name;
    ASSERT_EQ((*inp)["shape"][1].get<int64_t>(), n_embd) << case_name;
    const size_t base = (*inp)["offset"].get<size_t>() / sizeof(float);
    ASSERT_LE(base + tokens.size() * (size_t)n_embd, acts.size()) << case_name;

    std::vector<float> row((size_t)n_embd);
    for (size_t p = 0; p < tokens.size(); p++) {
      ASSERT_GE(tokens[p], 0);
      ASSERT_LT(tokens[p], n_vocab);
      dequantize_row(embd->type, data + (size_t)tokens[p] * row_bytes, row.data(), n_embd);
      const float* want = acts.data() + base + p * (size_t)n_embd;
      int mismatches = 0;
      for (int64_t i = 0; i < n_embd; i++) {
        if (std::memcmp(&want[i], &row[(size_t)i], sizeof(float)) != 0 && mismatches++ < 3)
          ADD_FAILURE() << case_name << " position " << p << " (token " << tokens[p] << ") element " << i
                        << ": llama.cpp " << want[i] << ", ours " << row[(size_t)i];
      }
      ASSERT_EQ(mismatches, 0) << case_name << " position " << p;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, QuantGolden,
                         ::testing::Values(GoldenModel{"llama-spm-256-Q4_0", Type::Q4_0},
                                           GoldenModel{"llama-spm-256-Q8_0", Type::Q8_0},
                                           GoldenModel{"llama-spm-256-Q4_K", Type::Q4_K},
                                           GoldenModel{"llama-spm-f32", Type::F16},
                                           GoldenModel{"qwen3-q4emb", Type::Q4_0}),
                         [](const ::testing::TestParamInfo<GoldenModel>& param) {
                           std::string s = param.param.name;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

// Quality of our quantizers against llama.cpp's on the same weights. The llama-spm-256 models are
// one F32 model quantized by llama-quantize to Q8_0, Q4_0 and Q4_K (README §3.1). The Q8_0
// version, dequantized, stands in for the F32 source (its own error, ~0.4% RMS, adds in
// quadrature to the 4-bit errors, ~7%, and barely moves them). We quantize it with our code
// and compare our squared error with that of llama.cpp's file for the same tensors.
struct QualityCase {
  const char* model;  // llama.cpp's quantization of the same weights
  Type type;
  double max_ratio;  // allowed RMSE(ours) / RMSE(llama.cpp)
};

class QuantGoldenQuality : public ::testing::TestWithParam<QualityCase> {};

TEST_P(QuantGoldenQuality, RmseComparableToLlamaCpp) {
  GOLDEN_OR_SKIP(golden);
  const QualityCase& qc = GetParam();
  const gguf::File ref = gguf::File::open(test::decompress(golden, "models/llama-spm-256-Q8_0.gguf.xz"));
  const gguf::File theirs =
      gguf::File::open(test::decompress(golden, std::string("models/") + qc.model + ".gguf.xz"));
  double err_ours = 0, err_theirs = 0;
  int64_t n_values = 0;
  for (const gguf::TensorInfo& t : ref.tensors()) {
    if (t.type != Type::Q8_0) continue;  // the 1-D norm weights stay F32
    const gguf::TensorInfo* other = theirs.find_tensor(t.name);
    ASSERT_NE(other, nullptr) << t.name;
    ASSERT_EQ(other->type, qc.type) << t.name;
    ASSERT_EQ(other->ne[0], t.ne[0]) << t.name;
    const int64_t n = t.ne[0];
    const int64_t rows = std::min<int64_t>(t.n_elements() / n, 2048);  // token_embd has 32000
    std::vector<float> x((size_t)n), mine((size_t)n), llama((size_t)n);
    std::vector<uint8_t> q(row_size(qc.type, n));
    for (int64_t r = 0; r < rows; r++) {
      dequantize_row(Type::Q8_0, ref.tensor_data(t) + (size_t)r * row_size(Type::Q8_0, n), x.data(), n);
      dequantize_row(qc.type, theirs.tensor_data(*other) + (size_t)r * row_size(qc.type, n), llama.data(), n);
      quantize_row(qc.type, x.data(), q.data(), n);
      dequantize_row(qc.type, q.data(), mine.data(), n);
      for (int64_t i = 0; i < n; i++) {
        err_ours += ((double)mine[(size_t)i] - x[(size_t)i]) * ((double)mine[(size_t)i] - x[(size_t)i]);
        err_theirs += ((double)llama[(size_t)i] - x[(size_t)i]) * ((double)llama[(size_t)i] - x[(size_t)i]);
      }
      n_values += n;
    }
  }
  ASSERT_GT(n_values, 0);
  const double rmse_ours = std::sqrt(err_ours / (double)n_values);
  const double rmse_theirs = std::sqrt(err_theirs / (double)n_values);
  std::printf("%s over %lld values: RMSE ours %.6g, llama.cpp %.6g (ratio %.4f)\n", type_name(qc.type),
              (long long)n_values, rmse_ours, rmse_theirs, rmse_ours / rmse_theirs);
  EXPECT_LE(rmse_ours, qc.max_ratio * rmse_theirs);
}

// Q4_0 is llama.cpp's own algorithm: equal up to the Q8_0 stand-in. Q4_K is our own search.
INSTANTIATE_TEST_SUITE_P(Models, QuantGoldenQuality,
                         ::testing::Values(QualityCase{"llama-spm-256-Q4_0", Type::Q4_0, 1.01},
                                           QualityCase{"llama-spm-256-Q4_K", Type::Q4_K, 1.02}),
                         [](const ::testing::TestParamInfo<QualityCase>& param) {
                           return std::string(type_name(param.param.type));
                         });

}  // namespace
}  // namespace hexllm::quant
