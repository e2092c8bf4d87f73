// GGUF v2/v3 reader (mmap, validated before use) and writer.
// Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "quant/types.h"

namespace hexllm::gguf {

// A malformed or unsupported file. The message names the file, the field and the byte offset.
class FormatError : public Error {
 public:
  using Error::Error;
};

enum class ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

const char* value_type_name(ValueType t);

// One metadata value. Scalars are widened into `i`/`u`/`f`; arrays keep their element type
// and either decoded strings or the raw little-endian element bytes.
struct Value {
  ValueType type = ValueType::UINT8;
  ValueType array_type = ValueType::UINT8;  // element type when type == ARRAY
  uint64_t u = 0;                           // unsigned integers and bool
  int64_t i = 0;                            // signed integers (also set for unsigned that fit)
  double f = 0;                             // floats
  std::string str;                          // STRING
  std::vector<std::string> strings;         // ARRAY of STRING
  std::vector<uint8_t> raw;                 // ARRAY of numbers/bools: packed little-endian elements
  uint64_t array_len = 0;

  bool is_integer() const;
  bool is_float() const;
};

struct KeyValue {
  std::string key;
  Value value;
  uint64_t offset = 0;  // byte offset of the key in the file (for error messages)
};

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};  // ggml order: ne[0] is the row length
  Type type = Type::F32;
  uint64_t offset = 0;  // relative to the start of the data section
  uint64_t nbytes = 0;
  uint64_t info_offset = 0;  // byte offset of this tensor info in the file

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class File {
 public:
  // Maps and validates the whole file; throws FormatError (or hexllm::Error for I/O).
  static File open(const std::string& path);
  // Validates an in-memory image (the bytes must outlive the File); `name` labels errors.
  static File parse(std::span<const uint8_t> bytes, const std::string& name);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  const std::vector<KeyValue>& metadata() const { return kv_; }
  const KeyValue* find(std::string_view key) const;

  // Typed getters. Absent key: nullopt. Present with the wrong type: FormatError naming the
  // key, its offset, the expected and the actual type.
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;      // any integer type
  std::optional<uint64_t> get_uint(std::string_view key) const;    // any non-negative integer
  std::optional<double> get_float(std::string_view key) const;     // float or integer
  std::optional<bool> get_bool(std::string_view key) const;
  // Arrays: absent key gives nullptr/empty optional; wrong element type throws.
  const std::vector<std::string>* get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  const uint8_t* tensor_data(const TensorInfo& t) const { return bytes_.data() + data_offset_ + t.offset; }
  // For bytes of a file read from disk: their pages leave the resident set
  // (MappedFile::drop_resident_pages); everything stays readable. Otherwise nothing happens.
  void drop_resident_pages(const void* data, size_t bytes) const;

 private:
  std::shared_ptr<MappedFile> map_;  // null when parsed from memory
  std::span<const uint8_t> bytes_;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kv_;
  std::vector<TensorInfo> tensors_;
  // Name -> index into tensors_. Views point into bytes_, which every copy of the File shares.
  std::unordered_map<std::string_view, size_t> tensor_index_;

  friend class Parser;
};

// Builds a GGUF v3 file. Keys and tensors are written in insertion order; tensor data is
// aligned to `general.alignment` (32 unless set).
class Writer {
 public:
  void set_u8(const std::string& key, uint8_t v);
  void set_i8(const std::string& key, int8_t v);
  void set_u16(const std::string& key, uint16_t v);
  void set_i16(const std::string& key, int16_t v);
  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_i64(const std::string& key, int64_t v);
  void set_f32(const std::string& key, float v);
  void set_f64(const std::string& key, double v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  void set_string_array(const std::string& key, const std::vector<std::string>& v);
  void set_f32_array(const std::string& key, const std::vector<float>& v);
  void set_i32_array(const std::string& key, const std::vector<int32_t>& v);
  // Copies a key (any type, arrays included) from a parsed file.
  void copy_kv(const KeyValue& kv);

  // `data` must hold row_size(type, ne[0]) * ne[1] * ne[2] * ne[3] bytes; it is copied.
  void add_tensor(const std::string& name, Type type, std::span<const int64_t> ne, const void* data);
  // Registers a tensor whose bytes are produced later by `fill` while writing (large models
  // are generated without holding every tensor in memory at once).
  using FillFn = std::function<void(uint8_t* dst, size_t nbytes)>;
  void add_tensor_lazy(const std::string& name, Type type, std::span<const int64_t> ne, FillFn fill);

  // Writes the file atomically (temp file + rename); throws hexllm::Error on I/O failure.
  void write(const std::string& path) const;
  // The same bytes in memory (tests, fuzz seeds).
  std::vector<uint8_t> to_bytes() const;

 private:
  struct PendingKV;
  struct PendingTensor;
  // Serializes the whole file through `out` (called with consecutive byte ranges).
  void emit(const std::function<void(const void*, size_t)>& out) const;
  void put(const std::string& key, Value v);
  std::vector<std::shared_ptr<PendingKV>> kvs_;
  std::vector<std::shared_ptr<PendingTensor>> tensors_;
};

}  // namespace hexllm::gguf
