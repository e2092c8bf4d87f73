// `hexllm inspect`: the metadata and tensor table of a GGUF file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "gguf/gguf.h"

namespace hexllm::cli {

namespace {

std::string value_text(const gguf::Value& v) {
  using VT = gguf::ValueType;
  switch (v.type) {
    case VT::STRING:
      return "\"" + (v.str.size() > 80 ? v.str.substr(0, 77) + "..." : v.str) + "\"";
    case VT::BOOL:
      return v.u ? "true" : "false";
    case VT::FLOAT32:
    case VT::FLOAT64:
      return strprintf("%g", v.f);
    case VT::ARRAY: {
      std::string s = strprintf("[%s x %llu]", gguf::value_type_name(v.array_type),
                                static_cast<unsigned long long>(v.array_len));
      if (!v.strings.empty()) {
        s += " ";
        for (size_t i = 0; i < v.strings.size() && i < 5; ++i) s += (i ? ", \"" : "\"") + v.strings[i] + "\"";
        if (v.strings.size() > 5) s += ", ...";
      }
      return s;
    }
    case VT::INT8:
    case VT::INT16:
    case VT::INT32:
    case VT::INT64:
      return std::to_string(v.i);
    default:
      return std::to_string(v.u);
  }
}

int inspect(const std::string& path) {
  const gguf::File f = gguf::File::open(path);
  std::printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, alignment %llu, data at offset %llu\n\n",
              path.c_str(), f.version(), f.metadata().size(), f.tensors().size(),
              static_cast<unsigned long long>(f.alignment()), static_cast<unsigned long long>(f.data_offset()));
  for (const gguf::KeyValue& kv : f.metadata())
    std::printf("  %-48s %-8s %s\n", kv.key.c_str(), gguf::value_type_name(kv.value.type), value_text(kv.value).c_str());
  std::printf("\n  %-4s %-40s %-7s %-28s %12s %12s\n", "#", "tensor", "type", "shape", "offset", "bytes");
  size_t total = 0;
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const gguf::TensorInfo& t = f.tensors()[i];
    std::string shape = "[";
    for (uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
    shape += "]";
    std::printf("  %-4zu %-40s %-7s %-28s %12llu %12llu\n", i, t.name.c_str(), type_name(t.type), shape.c_str(),
                static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(t.nbytes));
    total += t.nbytes;
  }
  std::printf("\n  total tensor bytes: %zu (%.2f MiB)\n", total, static_cast<double>(total) / (1 << 20));
  return 0;
}

}  // namespace

Action add_inspect_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("inspect", "Print a GGUF file's metadata and tensor table");
  sub->add_option("model", *path, "GGUF file")->required();
  return [path] { return inspect(*path); };
}

}  // namespace hexllm::cli
