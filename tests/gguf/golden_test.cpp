// Golden models and vocabularies produced by llama.cpp: every tensor's name, type and shape
// and the metadata in models/models.json, and the vocabulary sizes in the golden README.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf.h"
#include "test_tmp.h"

namespace hexllm::gguf {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() {
  const char* env = std::getenv("HEXLLM_GOLDEN_DIR");
  return env != nullptr ? fs::path(env) : fs::path();
}

#define SKIP_WITHOUT_GOLDEN()                                                                       \
  do {                                                                                              \
    if (golden_dir().empty() || !fs::is_directory(golden_dir() / "models"))                         \
      GTEST_SKIP() << "*** HEXLLM_GOLDEN_DIR is not set or has no models/ folder (" << golden_dir() \
                   << "): golden GGUF tests SKIPPED ***";                                           \
  } while (0)

// Decompresses NAME.xz into $HEXLLM_TEST_TMP/golden once (written under a unique name and
// renamed, so tests running in parallel never see a partial file).
fs::path decompressed(const fs::path& xz) {
  const fs::path dir = test::test_tmp() / "golden";
  fs::create_directories(dir);
  const fs::path out = dir / xz.stem();  // strips ".xz"
  if (fs::exists(out)) return out;
  const fs::path part = out.string() + ".part." + std::to_string(::getpid());
  const std::string cmd = "xz -dc '" + xz.string() + "' > '" + part.string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    fs::remove(part);
    ADD_FAILURE() << "failed: " << cmd;
    return {};
  }
  fs::rename(part, out);
  return out;
}

nlohmann::json load_models_json() {
  std::ifstream in(golden_dir() / "models" / "models.json");
  return nlohmann::json::parse(in);
}

// Compares one metadata entry of models.json with the parsed file.
void check_metadata(const File& f, const std::string& key, const nlohmann::json& want) {
  SCOPED_TRACE(key);
  const KeyValue* kv = f.find(key);
  ASSERT_NE(kv, nullptr);
  if (want.is_boolean()) {
    EXPECT_EQ(f.get_bool(key), want.get<bool>());
  } else if (want.is_number_integer()) {
    EXPECT_EQ(f.get_int(key), want.get<int64_t>());
  } else if (want.is_number_float()) {
    // models.json holds the stored float32 widened to double, printed exactly.
    EXPECT_EQ(f.get_float(key), want.get<double>());
  } else if (want.is_string()) {
    const std::string s = want.get<std::string>();
    if (s.rfind("array[", 0) == 0) {
      EXPECT_EQ(kv->value.type, ValueType::ARRAY);
      EXPECT_EQ(std::to_string(kv->value.array_len), s.substr(6, s.size() - 7));
    } else if (const size_t cut = s.find("...(truncated)"); cut != std::string::npos) {
      EXPECT_EQ(f.get_string(key).value_or("").substr(0, cut), s.substr(0, cut));
    } else {
      EXPECT_EQ(f.get_string(key), s);
    }
  } else {
    ADD_FAILURE() << "unexpected JSON value " << want.dump();
  }
}

TEST(GgufGolden, ModelsMatchModelsJson) {
  SKIP_WITHOUT_GOLDEN();
  const nlohmann::json models = load_models_json();
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(golden_dir() / "models")) {
    const fs::path xz = entry.path();
    if (xz.extension() != ".xz") continue;
    const std::string file = xz.stem().string();              // NAME.gguf
    const std::string name = fs::path(file).stem().string();  // NAME
    SCOPED_TRACE(name);
    ASSERT_TRUE(models.contains(name)) << "no models.json entry for " << xz;
    const nlohmann::json& m = models[name];
    const fs::path path = decompressed(xz);
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(fs::file_size(path), m["size"].get<uint64_t>());

    const File f = File::open(path.string());
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.get_string("general.architecture"), m["arch"].get<std::string>());

    const nlohmann::json& tensors = m["tensors"];
    ASSERT_EQ(f.tensors().size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const nlohmann::json& want = tensors[i];
      const TensorInfo& t = f.tensors()[i];
      SCOPED_TRACE(want["name"].get<std::string>());
      EXPECT_EQ(t.name, want["name"].get<std::string>()) << "tensor order";
      EXPECT_STREQ(type_name(t.type), want["type"].get<std::string>().c_str());
      const nlohmann::json& ne = want["ne"];
      ASSERT_EQ(t.n_dims, ne.size());
      for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < ne.size() ? ne[d].get<int64_t>() : 1);
      EXPECT_EQ(t.offset % f.alignment(), 0u);
      EXPECT_LE(f.data_offset() + t.offset + t.nbytes, fs::file_size(path));
    }
    for (const auto& [key, value] : m["gguf_metadata"].items()) check_metadata(f, key, value);
    for (const auto& [key, value] : m["tokenizer_metadata"].items()) check_metadata(f, key, value);
    ++seen;
  }
  EXPECT_EQ(seen, static_cast<int>(models.size())) << "every models.json entry has a .gguf.xz";
}

TEST(GgufGolden, VocabSizes) {
  SKIP_WITHOUT_GOLDEN();
  // n_vocab per file, from section 5 of the golden README.
  const std::pair<const char*, size_t> vocabs[] = {
      {"ggml-vocab-llama-spm.gguf", 32000}, {"ggml-vocab-llama-bpe.gguf", 128256},
      {"ggml-vocab-qwen2.gguf", 151936},    {"ggml-vocab-gpt-2.gguf", 50257},
      {"ggml-vocab-phi-3.gguf", 32064},
  };
  for (const auto& [file, n_vocab] : vocabs) {
    SCOPED_TRACE(file);
    const fs::path path = decompressed(golden_dir() / "vocab" / (std::string(file) + ".xz"));
    ASSERT_FALSE(path.empty());
    const File f = File::open(path.string());
    const std::vector<std::string>* tokens = f.get_string_array("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->size(), n_vocab);
    EXPECT_TRUE(f.get_string("tokenizer.ggml.model").has_value());
  }
}

}  // namespace
}  // namespace hexllm::gguf
