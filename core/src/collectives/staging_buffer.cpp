#include "staging_buffer.hpp"

#include "../host_memory.hpp"

namespace xal::core {

StagingBuffer::~StagingBuffer() {
  for (void* p : retired_) host_.free(p);
  if (current_) host_.free(current_);
  clear_pending();
}

void* StagingBuffer::get(size_t bytes) {
  if (bytes <= bytes_ && current_) return current_;
  // Grow by at least half, so that slowly growing sizes do not retire a
  // buffer on every call.
  size_t want = bytes;
  if (bytes_ && want < bytes_ + bytes_ / 2) want = bytes_ + bytes_ / 2;
  void* p = nullptr;
  if (host_.allocate(want, 0, &p) != XAL_SUCCESS) return nullptr;
  if (current_) retired_.push_back(current_);
  current_ = p;
  bytes_ = want;
  return current_;
}

}  // namespace xal::core
