// Trace events in fixed-size chunks. Each thread's events and a session's
// merged trace live in chunks of kChunkBytes, each one anonymous mapping of
// its own, taken from and given back to a small pool kept across sessions.
// A session's trace is never one large block of the heap, so traced
// xal_init .. xal_shutdown sessions, one after another, leave the heap as
// they found it. Internal to the core.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <type_traits>
#include <vector>

#include "trace_writer.hpp"

namespace xal::core::trace {

inline constexpr size_t kChunkBytes = size_t{64} << 10;
inline constexpr size_t kChunkEvents = kChunkBytes / sizeof(Event);
// Chunks the process's pool keeps mapped between sessions (2 MiB).
inline constexpr size_t kPoolChunks = 32;

static_assert(kChunkEvents >= 64, "an event is too large for a chunk");

// Room for kChunkEvents events, uninitialised: one anonymous mapping of
// kChunkBytes, unmapped by the destructor. Move-only; a moved-from chunk
// owns nothing. Not thread-safe (one owner at a time).
class Chunk {
 public:
  Chunk() noexcept = default;
  ~Chunk();
  Chunk(Chunk&& o) noexcept;
  Chunk& operator=(Chunk&& o) noexcept;
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  // Maps a new chunk; throws std::bad_alloc when the kernel refuses.
  static Chunk map();
  // Chunks mapped in the process now (in stores and pools). Thread-safe.
  static size_t mapped() noexcept;

  Event* slots() const noexcept { return slots_; }
  explicit operator bool() const noexcept { return slots_ != nullptr; }

 private:
  explicit Chunk(Event* slots) noexcept : slots_(slots) {}
  Event* slots_ = nullptr;
};

// A free list of at most `keep` chunks. Thread-safe; outlives every store
// that uses it.
class ChunkPool {
 public:
  explicit ChunkPool(size_t keep);
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  // A chunk from the free list (the one given back last), or a new mapping;
  // the caller owns it. Throws std::bad_alloc when none can be mapped.
  Chunk take();
  // Takes `chunk` back: kept when the list has room, unmapped otherwise.
  void give(Chunk chunk) noexcept;
  // Chunks on the free list now.
  size_t free_chunks() const;

 private:
  mutable std::mutex mu_;
  std::vector<Chunk> free_;  // `keep` reserved up front
  size_t keep_;
};

template <bool Const>
class EventStoreIter;

// Events in order, kChunkEvents to a chunk; every chunk but the last full.
// Owns its events and chunks (chunks come from and go back to `pool`).
// Not thread-safe: the owner serialises every call.
class EventStore {
 public:
  using iterator = EventStoreIter<false>;
  using const_iterator = EventStoreIter<true>;

  explicit EventStore(ChunkPool& pool) noexcept : pool_(&pool) {}
  ~EventStore() { clear(); }
  EventStore(const EventStore&) = delete;
  EventStore& operator=(const EventStore&) = delete;

  // Appends `e` (moved from). Throws std::bad_alloc when a new chunk is
  // needed and none can be had; the store is then unchanged.
  void push_back(Event&& e);
  // Moves every event of `from` to the end, in order, giving each of its
  // chunks back as soon as it is emptied. `from` is left empty, also when
  // this throws std::bad_alloc (the events not moved are then dropped).
  void append_from(EventStore& from);
  // Destroys the events and gives every chunk back; keeps the chunk table's
  // capacity for the next events.
  void clear() noexcept;

  // Events held.
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // Chunks held (mapped) by this store.
  size_t chunks() const noexcept { return chunks_.size(); }
  // Event `i` (< size()), still owned by the store; valid until the store
  // changes size.
  Event& operator[](size_t i) noexcept {
    return chunks_[i / kChunkEvents].slots()[i % kChunkEvents];
  }
  const Event& operator[](size_t i) const noexcept {
    return chunks_[i / kChunkEvents].slots()[i % kChunkEvents];
  }

  // Random-access iterators over the events in order.
  iterator begin() noexcept;
  iterator end() noexcept;
  const_iterator begin() const noexcept;
  const_iterator end() const noexcept;

 private:
  ChunkPool* pool_;
  std::vector<Chunk> chunks_;
  size_t size_ = 0;
};

// A random-access iterator over an EventStore (std::sort runs on it).
template <bool Const>
class EventStoreIter {
  using Store = std::conditional_t<Const, const EventStore, EventStore>;

 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = Event;
  using difference_type = std::ptrdiff_t;
  using pointer = std::conditional_t<Const, const Event*, Event*>;
  using reference = std::conditional_t<Const, const Event&, Event&>;

  EventStoreIter() noexcept = default;
  EventStoreIter(Store* store, size_t index) noexcept
      : store_(store), i_(static_cast<difference_type>(index)) {}

  reference operator*() const noexcept { return (*store_)[static_cast<size_t>(i_)]; }
  pointer operator->() const noexcept { return &**this; }
  reference operator[](difference_type n) const noexcept { return *(*this + n); }

  EventStoreIter& operator++() noexcept { ++i_; return *this; }
  EventStoreIter& operator--() noexcept { --i_; return *this; }
  EventStoreIter operator++(int) noexcept { auto o = *this; ++i_; return o; }
  EventStoreIter operator--(int) noexcept { auto o = *this; --i_; return o; }
  EventStoreIter& operator+=(difference_type n) noexcept { i_ += n; return *this; }
  EventStoreIter& operator-=(difference_type n) noexcept { i_ -= n; return *this; }
  friend EventStoreIter operator+(EventStoreIter a, difference_type n) noexcept { return a += n; }
  friend EventStoreIter operator+(difference_type n, EventStoreIter a) noexcept { return a += n; }
  friend EventStoreIter operator-(EventStoreIter a, difference_type n) noexcept { return a -= n; }
  friend difference_type operator-(const EventStoreIter& a, const EventStoreIter& b) noexcept {
    return a.i_ - b.i_;
  }
  friend bool operator==(const EventStoreIter& a, const EventStoreIter& b) noexcept {
    return a.i_ == b.i_;
  }
  friend auto operator<=>(const EventStoreIter& a, const EventStoreIter& b) noexcept {
    return a.i_ <=> b.i_;
  }

 private:
  Store* store_ = nullptr;
  difference_type i_ = 0;
};

inline EventStore::iterator EventStore::begin() noexcept { return {this, 0}; }
inline EventStore::iterator EventStore::end() noexcept { return {this, size_}; }
inline EventStore::const_iterator EventStore::begin() const noexcept { return {this, 0}; }
inline EventStore::const_iterator EventStore::end() const noexcept { return {this, size_}; }

}  // namespace xal::core::trace
