#include "backend/backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "base/error.h"

namespace hexllm::backend {

namespace {

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(size_t bytes) : size_(bytes) {
    const size_t rounded = (bytes + 127) / 128 * 128;
    data_ = std::aligned_alloc(128, rounded == 0 ? 128 : rounded);
    if (data_ == nullptr) fail("cannot allocate %zu bytes of host memory", bytes);
    std::memset(data_, 0, rounded);
  }
  ~HostBuffer() override { std::free(data_); }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_;
};

}  // namespace

std::unique_ptr<Buffer> alloc_host_buffer(size_t bytes) { return std::make_unique<HostBuffer>(bytes); }

std::unique_ptr<Buffer> Backend::alloc_buffer(MemoryKind kind, size_t bytes) {
  (void)kind;
  return alloc_host_buffer(bytes);
}

}  // namespace hexllm::backend
