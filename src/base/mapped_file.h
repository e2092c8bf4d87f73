// Read-only memory map of a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace hexllm {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws hexllm::Error naming the path and the system error.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Takes the pages of [data, data + bytes) (clipped to the mapping, whole pages around it) out
  // of this process's resident set; they stay in the page cache. The bytes stay readable: the
  // mapping is read-only and private, so a later read faults the file's page back in. For
  // callers that have copied what they need elsewhere. Bytes outside the mapping: no-op.
  void drop_resident_pages(const void* data, size_t bytes) const;

 private:
  void release();
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hexllm
