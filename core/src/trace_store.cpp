// Trace events in fixed-size chunks: the chunks (anonymous mappings), their
// pool and the store.
#include "trace_store.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <utility>

namespace xal::core::trace {
namespace {

std::atomic<size_t> g_mapped{0};

}  // namespace

Chunk::~Chunk() {
  if (slots_) {
    ::munmap(slots_, kChunkBytes);
    g_mapped.fetch_sub(1, std::memory_order_relaxed);
  }
}

Chunk::Chunk(Chunk&& o) noexcept : slots_(std::exchange(o.slots_, nullptr)) {}

Chunk& Chunk::operator=(Chunk&& o) noexcept {
  if (this != &o) {
    Chunk old(std::move(*this));
    slots_ = std::exchange(o.slots_, nullptr);
  }
  return *this;
}

Chunk Chunk::map() {
  // A mapping of its own, not malloc: the heap never holds a chunk, and
  // glibc's mmap threshold, which rises with each large block freed, is
  // left alone.
  void* p = ::mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  g_mapped.fetch_add(1, std::memory_order_relaxed);
  return Chunk(static_cast<Event*>(p));
}

size_t Chunk::mapped() noexcept { return g_mapped.load(std::memory_order_relaxed); }

ChunkPool::ChunkPool(size_t keep) : keep_(keep) { free_.reserve(keep); }

Chunk ChunkPool::take() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      Chunk c = std::move(free_.back());
      free_.pop_back();
      return c;
    }
  }
  return Chunk::map();
}

void ChunkPool::give(Chunk chunk) noexcept {
  if (!chunk) return;
  std::lock_guard lock(mu_);
  // Never past `keep`, which is reserved: push_back does not allocate.
  if (free_.size() < keep_) free_.push_back(std::move(chunk));
}  // otherwise `chunk` is unmapped here

size_t ChunkPool::free_chunks() const {
  std::lock_guard lock(mu_);
  return free_.size();
}

void EventStore::push_back(Event&& e) {
  const size_t slot = size_ % kChunkEvents;
  if (slot == 0) {  // the last chunk is full (or there is none)
    if (chunks_.size() == chunks_.capacity())
      chunks_.reserve(std::max<size_t>(8, chunks_.capacity() * 2));
    chunks_.push_back(pool_->take());  // cannot reallocate: reserved above
  }
  std::construct_at(chunks_.back().slots() + slot, std::move(e));
  ++size_;
}

void EventStore::append_from(EventStore& from) {
  if (&from == this) return;
  try {
    for (size_t c = 0; c < from.chunks_.size(); ++c) {
      Event* src = from.chunks_[c].slots();
      const size_t n = std::min(kChunkEvents, from.size_ - c * kChunkEvents);
      for (size_t i = 0; i < n; ++i) push_back(std::move(src[i]));
      std::destroy_n(src, n);
      from.pool_->give(std::move(from.chunks_[c]));
    }
  } catch (...) {
    from.clear();
    throw;
  }
  from.chunks_.clear();
  from.size_ = 0;
}

void EventStore::clear() noexcept {
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (!chunks_[c]) continue;  // emptied and given back by append_from
    std::destroy_n(chunks_[c].slots(), std::min(kChunkEvents, size_ - c * kChunkEvents));
    pool_->give(std::move(chunks_[c]));
  }
  chunks_.clear();
  size_ = 0;
}

}  // namespace xal::core::trace
