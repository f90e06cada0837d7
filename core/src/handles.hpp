// Handle storage: every public handle object lives in a fixed-size slot of
// one reserved virtual region, so that checking a handle is a range test and
// a read of its magic word, and a NULL, destroyed or wrong-kind handle is
// recognised without touching unmapped memory. Destroyed slots wait in a
// FIFO quarantine before reuse, and each reuse of a slot gets the next
// generation, which the handle carries in its low bits (slots are aligned
// to kSlotSize, so the slot's address leaves them free): a handle from an
// earlier use of the slot does not match the object now there. A stale
// handle can only pass as live again after its slot has been reused
// kGenerations times, that is after more than kQuarantine * kGenerations
// (4 million) destroys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "xal/xal_backend.h"

namespace xal::core {

enum class Kind : uint32_t {
  kDevice = 1,
  kStream = 2,
  kEvent = 3,
  kModule = 4,
  kKernel = 5,
  kComm = 6,
};

inline constexpr uint32_t kMagicBase = 0x58414c00u;  // "XAL\0"
inline constexpr uint32_t magic_of(Kind kind) {
  return kMagicBase | static_cast<uint32_t>(kind);
}

// The first bytes of every handle object. `table` comes first (plugin ABI
// contract: a handle starts with its backend's table).
struct HandleHeader {
  const xal_backend_table_t* table;
  uint32_t magic;  // magic_of(kind) while live, 0 once destroyed
  uint32_t kind;
  uint32_t generation;  // of the slot: the public handle's low bits
};

// The reserved region: set once by the first allocation, never unmapped.
// Read without locks by every handle check.
inline uintptr_t g_slot_base = 0;
inline size_t g_slot_committed = 0;  // bytes committed from g_slot_base

class SlotPool {
 public:
  static constexpr size_t kSlotSize = 1024;
  static constexpr size_t kSlotCount = size_t{1} << 17;  // 128 MiB reserved
  static constexpr size_t kQuarantine = 4096;
  static constexpr uint32_t kGenerations = kSlotSize;  // fit the low bits

  struct Slot {
    void* memory;
    uint32_t generation;  // one more than the slot's last use (mod kGenerations)
  };
  // A zeroed slot; throws std::bad_alloc when the region is exhausted.
  // Thread-safe.
  static Slot allocate();
  // Returns a slot (its header already cleared) to the quarantine.
  // Thread-safe.
  static void release(void* slot) noexcept;

  // Whether `p` is the start of a slot of the region. Lock-free.
  static bool contains(const void* p) noexcept {
    const uintptr_t off =
        reinterpret_cast<uintptr_t>(p) - __atomic_load_n(&g_slot_base, __ATOMIC_ACQUIRE);
    return off < __atomic_load_n(&g_slot_committed, __ATOMIC_ACQUIRE) &&
           (off & (kSlotSize - 1)) == 0;
  }
};

// The slot a public handle names and the generation it carries.
inline const HandleHeader* slot_of(const void* handle, uint32_t* out_generation) noexcept {
  const uintptr_t value = reinterpret_cast<uintptr_t>(handle);
  *out_generation = static_cast<uint32_t>(value & (SlotPool::kSlotSize - 1));
  return reinterpret_cast<const HandleHeader*>(value & ~uintptr_t{SlotPool::kSlotSize - 1});
}

// The header at the slot `handle` names, when the slot holds a live object
// of the handle's generation; nullptr otherwise. Never faults.
inline HandleHeader* live_header(const void* handle) noexcept {
  uint32_t generation = 0;
  const HandleHeader* h = slot_of(handle, &generation);
  if (handle == nullptr || !SlotPool::contains(h)) return nullptr;
  const uint32_t m = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
  if ((m & 0xffffff00u) != kMagicBase || (m & 0xffu) == 0) return nullptr;
  if (__atomic_load_n(&h->generation, __ATOMIC_RELAXED) != generation) {
    return nullptr;  // an earlier use of the slot
  }
  return const_cast<HandleHeader*>(h);
}

// The live object of kind T::kKind that `handle` names, or nullptr. Never
// faults.
template <class T>
inline T* handle_cast(const void* handle) noexcept {
  HandleHeader* h = live_header(handle);
  if (h == nullptr || h->kind != static_cast<uint32_t>(T::kKind)) return nullptr;
  return reinterpret_cast<T*>(h);
}

// The header of a live handle of any kind, or nullptr.
inline HandleHeader* handle_header(const void* handle) noexcept { return live_header(handle); }

// The public handle of a live object: its slot's address and generation.
template <class Handle, class T>
inline Handle to_handle(const T* obj) noexcept {
  if (obj == nullptr) return nullptr;
  return reinterpret_cast<Handle>(reinterpret_cast<uintptr_t>(obj) | obj->hdr.generation);
}

// Constructs a T in a fresh slot and marks it live.
template <class T, class... A>
T* make_handle(const xal_backend_table_t* table, A&&... args) {
  static_assert(sizeof(T) <= SlotPool::kSlotSize, "handle object too large");
  const SlotPool::Slot slot = SlotPool::allocate();
  T* obj;
  try {
    obj = std::construct_at(static_cast<T*>(slot.memory), std::forward<A>(args)...);
  } catch (...) {
    SlotPool::release(slot.memory);
    throw;
  }
  obj->hdr.table = table;
  obj->hdr.kind = static_cast<uint32_t>(T::kKind);
  obj->hdr.generation = slot.generation;
  __atomic_store_n(&obj->hdr.magic, magic_of(T::kKind), __ATOMIC_RELEASE);
  return obj;
}

// Marks the handle dead, destroys the object and quarantines its slot.
template <class T>
void destroy_handle(T* obj) noexcept {
  if (!obj) return;
  __atomic_store_n(&obj->hdr.magic, 0u, __ATOMIC_RELEASE);
  std::destroy_at(obj);
  auto* h = reinterpret_cast<HandleHeader*>(obj);
  __atomic_store_n(&h->magic, 0u, __ATOMIC_RELEASE);
  SlotPool::release(obj);
}

}  // namespace xal::core
