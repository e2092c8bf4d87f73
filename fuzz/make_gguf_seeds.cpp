// Writes a GGUF seed corpus for gguf_fuzz: small valid files (every value type, arrays,
// several tensor types, alignments, v2 and v3) plus truncated and bit-flipped variants.
// Usage: make_gguf_seeds OUT_DIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"

using namespace hexllm;
using namespace hexllm::gguf;

namespace {

template <class T>
Value array_of(ValueType elem, std::vector<T> v) {
  Value out;
  out.type = ValueType::ARRAY;
  out.array_type = elem;
  out.array_len = v.size();
  out.raw.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.raw.data(), v.data(), out.raw.size());
  return out;
}

std::vector<uint8_t> bytes_of(uint64_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 13 + seed);
  return v;
}

void add(Writer& w, const char* name, Type type, std::vector<int64_t> ne, unsigned seed) {
  uint64_t n = row_size(type, ne[0]);
  for (size_t d = 1; d < ne.size(); ++d) n *= static_cast<uint64_t>(ne[d]);
  const std::vector<uint8_t> data = bytes_of(n, seed);
  w.add_tensor(name, type, ne, data.data());
}

std::vector<std::pair<std::string, std::vector<uint8_t>>> valid_files() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;

  Writer scalars;
  scalars.set_u8("u8", 250);
  scalars.set_i8("i8", -3);
  scalars.set_u16("u16", 65000);
  scalars.set_i16("i16", -300);
  scalars.set_u32("u32", 70000);
  scalars.set_i32("i32", -70000);
  scalars.set_u64("u64", 1ull << 40);
  scalars.set_i64("i64", -(1ll << 40));
  scalars.set_f32("f32", 1.5f);
  scalars.set_f64("f64", -2.25);
  scalars.set_bool("bool", true);
  scalars.set_string("general.architecture", "llama");
  scalars.set_string("utf8", "\xe4\xb8\x96\xe7\x95\x8c");
  out.emplace_back("scalars", scalars.to_bytes());

  Writer arrays;
  arrays.copy_kv({"a.u8", array_of<uint8_t>(ValueType::UINT8, {1, 2, 255})});
  arrays.copy_kv({"a.i8", array_of<int8_t>(ValueType::INT8, {-1, 5})});
  arrays.copy_kv({"a.u16", array_of<uint16_t>(ValueType::UINT16, {9})});
  arrays.copy_kv({"a.i16", array_of<int16_t>(ValueType::INT16, {-9, 9})});
  arrays.copy_kv({"a.u32", array_of<uint32_t>(ValueType::UINT32, {1u << 31})});
  arrays.set_i32_array("a.i32", {-5, 6, 7});
  arrays.copy_kv({"a.u64", array_of<uint64_t>(ValueType::UINT64, {~0ull})});
  arrays.copy_kv({"a.i64", array_of<int64_t>(ValueType::INT64, {-1})});
  arrays.set_f32_array("a.f32", {0.5f, -1.0f});
  arrays.copy_kv({"a.f64", array_of<double>(ValueType::FLOAT64, {1e300})});
  arrays.copy_kv({"a.bool", array_of<uint8_t>(ValueType::BOOL, {0, 1})});
  arrays.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "", "\xe2\x96\x81the"});
  arrays.set_string_array("a.empty", {});
  out.emplace_back("arrays", arrays.to_bytes());

  Writer tensors;
  tensors.set_string("general.architecture", "llama");
  add(tensors, "token_embd.weight", Type::Q4_0, {32, 4}, 1);
  add(tensors, "blk.0.attn_norm.weight", Type::F32, {8}, 2);
  add(tensors, "blk.0.attn_q.weight", Type::Q8_0, {32, 2}, 3);
  add(tensors, "blk.0.ffn_up.weight", Type::Q4_K, {256, 1}, 4);
  add(tensors, "output.weight", Type::F16, {8, 3}, 5);
  add(tensors, "bf", Type::BF16, {3, 1, 1, 2}, 6);
  out.emplace_back("tensors", tensors.to_bytes());

  for (uint32_t alignment : {1u, 64u}) {
    Writer w;
    w.set_u32("general.alignment", alignment);
    w.set_string("general.name", "aligned");
    add(w, "a", Type::F32, {3}, 7);
    add(w, "b", Type::I8, {5, 2}, 8);
    add(w, "c", Type::Q6_K, {256}, 9);
    out.emplace_back("align" + std::to_string(alignment), w.to_bytes());
  }

  // Version 2 has the same layout as version 3 for little-endian files.
  std::vector<uint8_t> v2 = out.back().second;
  v2[4] = 2;
  out.emplace_back("v2", v2);
  return out;
}

void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) fail("%s: cannot write", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    uint32_t rng = 12345;  // fixed seed: the corpus is reproducible
    auto next = [&rng] { return rng = rng * 1664525u + 1013904223u; };
    int count = 0;
    for (const auto& [name, bytes] : valid_files()) {
      File::parse(bytes, name);  // the valid seeds must parse
      write_file(dir / (name + ".gguf"), bytes);
      for (size_t cut : {size_t{3}, size_t{23}, bytes.size() / 2, bytes.size() - 1})
        write_file(dir / (name + ".cut" + std::to_string(cut) + ".gguf"),
                   std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut)));
      for (int k = 0; k < 4; ++k) {
        std::vector<uint8_t> b = bytes;
        const size_t at = next() % b.size();
        b[at] ^= static_cast<uint8_t>(1u << (next() % 8));
        write_file(dir / (name + ".flip" + std::to_string(at) + ".gguf"), b);
      }
      count += 9;
    }
    std::printf("make_gguf_seeds: wrote %d files to %s\n", count, dir.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "make_gguf_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
