#include "shared_tensors.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <mutex>

#include "shared_blocks.hpp"

namespace xal::torch_backend {

namespace {

constexpr uint8_t kPriority = 1;  // above torch's default CPU allocator (0)

void free_block(void* p) { free_shared_block(p); }

class SharedTensorAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const size_t min = min_bytes_.load();
    if (n > 0 && min > 0 && n >= min) {
      if (void* p = alloc_shared_block(n))
        return {p, p, &free_block, c10::Device(c10::DeviceType::CPU)};
    }
    return fallback_->allocate(n);  // small, or no memfd to be had: ordinary memory
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  std::atomic<size_t> min_bytes_{0};
  c10::Allocator* fallback_ = nullptr;
};

std::mutex g_mu;
SharedTensorAllocator g_allocator;  // lives as long as the process

}  // namespace

void use_shared_tensors(size_t min_bytes) {
  std::lock_guard lock(g_mu);
  if (!g_allocator.fallback_) g_allocator.fallback_ = c10::GetCPUAllocator();
  g_allocator.min_bytes_.store(min_bytes);
  c10::SetCPUAllocator(min_bytes > 0 ? static_cast<c10::Allocator*>(&g_allocator)
                                     : g_allocator.fallback_,
                       kPriority);
}

size_t shared_tensors_min_bytes() {
  return c10::GetCPUAllocator() == &g_allocator ? g_allocator.min_bytes_.load() : 0;
}

bool is_shared_memory(const void* p, size_t bytes) {
  return find_shared_block(p, bytes).has_value();
}

}  // namespace xal::torch_backend
