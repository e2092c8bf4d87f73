// libFuzzer entry point: parse arbitrary bytes as GGUF, then touch every metadata value and
// every tensor byte so ASan sees any out-of-range view. Files that parse are re-written with
// gguf::Writer and must parse again to the same metadata and tensor bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/gguf.h"

using namespace hexllm;
using namespace hexllm::gguf;

namespace {

volatile uint64_t g_sink;

// Calls the typed getter that fits the value; range errors (e.g. u64 > int64) are FormatErrors.
uint64_t touch_value(const File& f, const KeyValue& kv) {
  uint64_t h = kv.key.size() + kv.value.u + static_cast<uint64_t>(kv.value.i);
  const Value& v = kv.value;
  for (char c : v.str) h = h * 31 + static_cast<unsigned char>(c);
  for (const std::string& s : v.strings)
    for (char c : s) h = h * 31 + static_cast<unsigned char>(c);
  for (uint8_t b : v.raw) h = h * 31 + b;
  try {
    switch (v.type) {
      case ValueType::STRING: h += f.get_string(kv.key)->size(); break;
      case ValueType::BOOL: h += *f.get_bool(kv.key); break;
      case ValueType::FLOAT32:
      case ValueType::FLOAT64: h += static_cast<uint64_t>(*f.get_float(kv.key) != 0); break;
      case ValueType::ARRAY:
        if (v.array_type == ValueType::STRING)
          h += f.get_string_array(kv.key)->size();
        else if (v.array_type == ValueType::FLOAT32 || v.array_type == ValueType::FLOAT64)
          h += f.get_float_array(kv.key)->size();
        else if (v.array_type != ValueType::BOOL)
          h += f.get_int_array(kv.key)->size();
        break;
      default:
        h += static_cast<uint64_t>(*f.get_int(kv.key));
        h += *f.get_uint(kv.key);
        break;
    }
  } catch (const FormatError&) {
  }
  return h;
}

void rewrite_and_compare(const File& f) {
  Writer w;
  for (const KeyValue& kv : f.metadata()) w.copy_kv(kv);
  for (const TensorInfo& t : f.tensors())
    w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, t.n_dims), f.tensor_data(t));
  const std::vector<uint8_t> bytes = w.to_bytes();
  const File g = File::parse(bytes, "rewritten.gguf");
  if (g.metadata().size() != f.metadata().size() || g.tensors().size() != f.tensors().size())
    __builtin_trap();
  for (size_t i = 0; i < f.metadata().size(); ++i) {
    const Value& a = f.metadata()[i].value;
    const Value& b = g.metadata()[i].value;
    if (f.metadata()[i].key != g.metadata()[i].key || a.type != b.type || a.str != b.str ||
        a.strings != b.strings || a.raw != b.raw || a.array_len != b.array_len || a.u != b.u || a.i != b.i ||
        std::memcmp(&a.f, &b.f, sizeof a.f) != 0)
      __builtin_trap();
  }
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const TensorInfo& a = f.tensors()[i];
    const TensorInfo& b = g.tensors()[i];
    if (a.name != b.name || a.type != b.type || a.nbytes != b.nbytes ||
        std::memcmp(f.tensor_data(a), g.tensor_data(b), a.nbytes) != 0)
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const File f = File::parse({data, size}, "fuzz.gguf");
    uint64_t h = f.version() + f.alignment() + f.data_offset();
    for (const KeyValue& kv : f.metadata()) h += touch_value(f, kv);
    for (const TensorInfo& t : f.tensors()) {
      if (f.find_tensor(t.name) != &t) __builtin_trap();
      if (f.data_offset() + t.offset + t.nbytes > size) __builtin_trap();
      h += static_cast<uint64_t>(t.n_elements()) + row_size(t.type, t.ne[0]);
      const uint8_t* p = f.tensor_data(t);
      for (uint64_t i = 0; i < t.nbytes; ++i) h += p[i];
    }
    g_sink = h;
    rewrite_and_compare(f);
  } catch (const FormatError&) {
  } catch (const Error&) {
  }
  return 0;
}
