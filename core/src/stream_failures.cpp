#include "stream_failures.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace xal::core {
namespace {

struct Failure {
  xal_status_t status;
  std::string message;
};

struct Failures {
  std::mutex mu;
  std::unordered_map<const xal_bstream_t*, Failure> by_stream;
  std::atomic<size_t> count{0};  // by_stream.size(), read without the lock
};

Failures& failures() {
  static Failures instance;
  return instance;
}

}  // namespace

void note_stream_failure(const xal_bstream_t* stream, xal_status_t status,
                         const std::string& message) noexcept {
  try {
    Failures& f = failures();
    std::lock_guard lock(f.mu);
    if (f.by_stream.try_emplace(stream, Failure{status, message}).second)
      f.count.store(f.by_stream.size(), std::memory_order_release);
  } catch (...) {
    // Out of memory: the failure stays in the communicator's async error.
  }
}

xal_status_t take_stream_failure(const xal_bstream_t* stream, std::string* out_message) {
  Failures& f = failures();
  if (f.count.load(std::memory_order_acquire) == 0) return XAL_SUCCESS;
  std::lock_guard lock(f.mu);
  auto it = f.by_stream.find(stream);
  if (it == f.by_stream.end()) return XAL_SUCCESS;
  const xal_status_t status = it->second.status;
  *out_message = std::move(it->second.message);
  f.by_stream.erase(it);
  f.count.store(f.by_stream.size(), std::memory_order_release);
  return status;
}

void forget_stream_failure(const xal_bstream_t* stream) noexcept {
  std::string ignored;
  try {
    (void)take_stream_failure(stream, &ignored);
  } catch (...) {
  }
}

}  // namespace xal::core
