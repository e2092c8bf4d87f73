#include "golden.h"

#include "generator_fingerprint.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hexllm::test {

std::optional<std::string> golden_dir() {
  const char* d = std::getenv("HEXLLM_GOLDEN_DIR");
  const std::string dir = d != nullptr && *d != '\0' ? d : "../shared/golden";
  if (!std::filesystem::exists(dir + "/README.md")) return std::nullopt;
  return dir;
}

std::string temp_dir() {
  const char* t = std::getenv("HEXLLM_TEST_TMP");
  std::string dir = t != nullptr && *t != '\0' ? t : "/tmp/hexllm-test";
  std::filesystem::create_directories(dir);
  return dir;
}

std::string generated_model_path(const std::string& stem) {
  return temp_dir() + "/" + stem + "-" + HEXLLM_GENERATOR_FINGERPRINT + ".gguf";
}

std::string decompress(const std::string& golden, const std::string& relative_xz) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(golden) / relative_xz;
  fs::path out = fs::path(temp_dir()) / "golden" / relative_xz;
  out.replace_extension();  // drop .xz
  if (fs::exists(out)) return out.string();
  fs::create_directories(out.parent_path());
  const std::string tmp = out.string() + ".tmp." + std::to_string(::getpid());
  const std::string cmd = "xz -dc '" + src.string() + "' > '" + tmp + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot decompress " + src.string());
  fs::rename(tmp, out);  // atomic: a parallel test sees the whole file or none
  return out.string();
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot open " + path);
  const auto size = static_cast<size_t>(in.tellg());
  std::vector<float> v(size / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

double nmse(std::span<const float> ref, std::span<const float> got) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(ref[i]) - static_cast<double>(got[i]);
    num += d * d;
    den += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  return den > 0.0 ? num / den : num;
}

}  // namespace hexllm::test
