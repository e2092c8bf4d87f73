// The hexllm command line, run as a user would: good and bad flags, bad files, oversized
// prompts. Every failure must be a clear message naming what is wrong and a non-zero exit.
#include <gtest/gtest.h>

#include <cstring>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "golden.h"
#include "gguf/gguf.h"

namespace hexllm {
namespace {

struct CliResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs hexllm with `args` (already shell-quoted) and the cache folder pointed into the test dir.
CliResult run(const std::string& args) {
  const std::string dir = test::temp_dir();
  const std::string out = dir + "/cli.out." + std::to_string(::getpid());
  const std::string err = dir + "/cli.err." + std::to_string(::getpid());
  const std::string cmd = "HEXLLM_CACHE_DIR='" + dir + "/cache' " + std::string(HEXLLM_BIN) + " " + args + " >'" +
                          out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

// The built-in tiny model, generated once through the CLI.
const std::string& tiny_model() {
  static const std::string path = [] {
    const std::string p = test::generated_model_path("cli-tiny");
    if (!std::filesystem::exists(p)) {
      const CliResult r = run("gen-model --preset tiny -o '" + p + "'");
      if (r.exit_code != 0) ADD_FAILURE() << r.err;
    }
    return p;
  }();
  return path;
}

void expect_error(const CliResult& r, const std::string& needle) {
  EXPECT_NE(r.exit_code, 0) << "stdout: " << r.out;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr does not mention '" << needle << "':\n" << r.err;
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
}

TEST(Cli, RunGeneratesTextAndReportsSpeed) {
  const CliResult r = run("run -m '" + tiny_model() + "' -p 'Once upon a time' -n 8 --seed 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_GT(r.out.size(), std::string("Once upon a time").size());
  EXPECT_NE(r.err.find("load time"), std::string::npos);
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos);
}

TEST(Cli, RunWithoutModelUsesTheBuiltInDefault) {
  const CliResult r = run("run -p 'Hello' -n 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(test::temp_dir() + "/cache/tiny.gguf"));
}

TEST(Cli, GreedyRunIsDeterministicAcrossDevices) {
  const std::string base = "run -m '" + tiny_model() + "' -p 'The quick brown fox' -n 12 --temp 0";
  const CliResult a = run(base + " --device ref");
  const CliResult b = run(base + " --device htp");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Cli, HtpProfileCountsEveryMatmulOfTheRun) {
  // tiny: 4 layers x 7 matmuls + the lm head per graph; the prompt is one graph, then one graph
  // per generated token after the first (-n 4: 3 more graphs). Unfused, every one is a MUL_MAT.
  const std::string base = "run -m '" + tiny_model() + "' -p 'Hello' -n 4 --temp 0 --htp-profile";
  const CliResult r = run(base + " --htp-fuse none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.err.find("HTP profile"), std::string::npos) << r.err;
  const size_t at = r.err.find("\n  MUL_MAT ");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(std::stoll(r.err.substr(at + 10)), 4 * (4 * 7 + 1)) << r.err;
  EXPECT_NE(r.err.find("per call"), std::string::npos) << r.err;
  // Fused (the default): Q, K, V in one op and gate, up and SWIGLU in one, on every layer.
  const CliResult f = run(base);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  for (const char* op : {"\n  MUL_MAT_QKV ", "\n  MUL_MAT_FFN "}) {
    const size_t p = f.err.find(op);
    ASSERT_NE(p, std::string::npos) << op << f.err;
    EXPECT_EQ(std::stoll(f.err.substr(p + std::strlen(op))), 4 * 4) << op << f.err;
  }
}

// One row per variant: all on, the graph cache off, each fusion off, all off; the all-on row's
// ratios are 1 by construction (each round divides by itself).
TEST(Cli, BenchAblationTablesEveryVariant) {
  const CliResult r = run("bench -m '" + tiny_model() + "' -p 16 -n 4 -r 2 -t 1 --ablate --no-roofline");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"| all on ", "| all on (control) ", "| graph cache off ", "| reorder off ", "| fuse: no rms_norm_mul ", "| fuse: no qkv ", "| all off "})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing:\n" << r.out;
  EXPECT_NE(r.out.find("|  1.000 |"), std::string::npos) << r.out;
  expect_error(run("bench -m '" + tiny_model() + "' -p 16 -n 4 --ablate --device ref"), "--ablate");
}

// The roofline: the machine's peaks, and each run also against what the machine gave beside it
// (one figure per repetition): tg against the read bandwidth, pp against the int8 dot rate
// (where the CPU has an int8 probe: x86 with AVX2).
TEST(Cli, BenchRooflineProbesBesideEveryRun) {
  const CliResult r = run("bench -m '" + tiny_model() + "' -p 16 -n 4 -r 3 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 thread: read bandwidth "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of the bandwidth probed beside each run (median of 3)"), std::string::npos) << r.out;
  const bool int8_probe = r.out.find("int8 dot peak 0 GOP/s") == std::string::npos;
  EXPECT_EQ(r.out.find("of the int8 rate probed beside each run (median of 3)") != std::string::npos, int8_probe)
      << r.out;
}

// --htp-devices 1,2 with -t 2: one row per device count, the two threads divided among them.
TEST(Cli, BenchRowsForEveryDeviceCount) {
  const CliResult r = run("bench -m '" + tiny_model() + "' -p 16 -n 4 -r 1 -t 2 --htp-devices 1,2 --no-roofline");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row : {"|       1 x 2 |   pp16 |", "|       1 x 2 |    tg4 |", "|       2 x 1 |   pp16 |",
                          "|       2 x 1 |    tg4 |"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing:\n" << r.out;
  expect_error(run("bench -m '" + tiny_model() + "' -p 16 -n 4 --htp-devices 1,9"), "--htp-devices: '9'");
  expect_error(run("bench -m '" + tiny_model() + "' -p 16 -n 4 --htp-devices 1,2 --ablate"), "--ablate");
}

TEST(Cli, EvalWritesEveryPositionsLogits) {
  const std::string logits = test::temp_dir() + "/cli-eval.f32";
  const CliResult r = run("eval -m '" + tiny_model() + "' --tokens 1,2,3,4,5 --logits '" + logits + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const size_t n_vocab = j["n_vocab"];
  EXPECT_EQ(j["positions"].size(), 5u);
  EXPECT_EQ(std::filesystem::file_size(logits), 5 * n_vocab * sizeof(float));
}

TEST(Cli, TokenizePrintsIds) {
  const CliResult r = run("tokenize -m '" + tiny_model() + "' -p 'hello world' --ids");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.front(), '[');
}

TEST(Cli, InspectListsTensors) {
  const CliResult r = run("inspect '" + tiny_model() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("token_embd.weight"), std::string::npos);
  EXPECT_NE(r.out.find("general.architecture"), std::string::npos);
}

TEST(Cli, QuantizeThenRun) {
  const std::string q = test::temp_dir() + "/cli-tiny-q4_0.gguf";
  CliResult r = run("quantize '" + tiny_model() + "' '" + q + "' Q4_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const gguf::File f = gguf::File::open(q);
  EXPECT_EQ(f.find_tensor("blk.0.attn_q.weight")->type, Type::Q4_0);
  EXPECT_EQ(f.find_tensor("blk.0.attn_norm.weight")->type, Type::F32);
  r = run("run -m '" + q + "' -p 'Hi' -n 4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Cli, PerplexityReportsAnEstimate) {
  const std::string text = test::temp_dir() + "/cli-ppl.txt";
  std::ofstream(text) << std::string(200, 'a') + " the cat sat on the mat. " + std::string(2000, 'b');
  const CliResult r = run("perplexity -m '" + tiny_model() + "' -f '" + text + "' -c 64 --chunks 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Final estimate: PPL = "), std::string::npos) << r.out;
}

// ---- bad input: a clear message and a non-zero exit, never a crash ----

TEST(CliErrors, MissingModelFile) { expect_error(run("run -m /nonexistent/model.gguf -p hi"), "/nonexistent/model.gguf"); }

TEST(CliErrors, MalformedModelFile) {
  const std::string bad = test::temp_dir() + "/cli-bad.gguf";
  std::ofstream(bad) << "GGUF but not really a model";
  expect_error(run("run -m '" + bad + "' -p hi"), "cli-bad.gguf");
}

TEST(CliErrors, UnsupportedArchitectureIsNamed) {
  gguf::Writer w;
  w.set_string("general.architecture", "mamba");
  const std::string path = test::temp_dir() + "/cli-mamba.gguf";
  w.write(path);
  expect_error(run("run -m '" + path + "' -p hi"), "unsupported architecture 'mamba'");
}

TEST(CliErrors, InvalidFlagValues) {
  expect_error(run("run -m '" + tiny_model() + "' -p hi -t 0"), "--threads");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --top-p 2"), "--top-p");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --temp -1"), "--temp");
  expect_error(run("run -m '" + tiny_model() + "' -p hi -c abc"), "--ctx-size");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --device gpu"), "--device");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --htp-vtcm lots"), "--htp-vtcm");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --htp-reorder maybe"), "--htp-reorder");
  expect_error(run("run -m '" + tiny_model() + "' -p hi --htp-fuse qkv,gemm"), "gemm");
  expect_error(run("run --no-such-flag"), "no-such-flag");
  expect_error(run("quantize '" + tiny_model() + "' /tmp/x.gguf Q9_9"), "Q9_9");
}

TEST(CliErrors, EmptyPrompt) { expect_error(run("run -m '" + tiny_model() + "' -p ''"), "empty prompt"); }

TEST(CliErrors, PromptLongerThanContext) {
  std::string words;
  for (int i = 0; i < 200; ++i) words += "word ";
  expect_error(run("run -m '" + tiny_model() + "' -c 32 -p '" + words + "'"), "context");
  const CliResult r = run("run -m '" + tiny_model() + "' -c 32 -n 4 --truncate -p '" + words + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliErrors, TokenIdOutsideVocabulary) {
  expect_error(run("eval -m '" + tiny_model() + "' --tokens 1,99999999"), "outside the vocabulary");
  expect_error(run("eval -m '" + tiny_model() + "' --tokens 1,x"), "'x'");
}

}  // namespace
}  // namespace hexllm
