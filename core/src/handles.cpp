// The slot pool behind every handle.
#include "handles.hpp"

#include <sys/mman.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <vector>

namespace xal::core {

namespace {

constexpr size_t kCommitChunk = 256 * 1024;  // bytes committed at a time

// Free-list state, guarded by its mutex. Function-local so that it is ready
// whenever the first handle is made; intentionally never destroyed, since
// plugin threads may still release handles while the process exits.
struct PoolState {
  std::mutex mu;
  std::deque<void*> quarantine;  // FIFO of released slots
  size_t next = 0;               // first never-used slot
  std::vector<uint16_t> uses;    // by slot: times reused (mod kGenerations)
};

PoolState& state() {
  alignas(PoolState) static unsigned char storage[sizeof(PoolState)];
  static PoolState* s = std::construct_at(reinterpret_cast<PoolState*>(storage));
  return *s;
}

SlotPool::Slot reuse(PoolState& st) {
  void* slot = st.quarantine.front();
  st.quarantine.pop_front();
  std::memset(slot, 0, SlotPool::kSlotSize);
  const size_t index = (reinterpret_cast<uintptr_t>(slot) - g_slot_base) / SlotPool::kSlotSize;
  st.uses[index] = static_cast<uint16_t>((st.uses[index] + 1) % SlotPool::kGenerations);
  return {slot, st.uses[index]};
}

}  // namespace

SlotPool::Slot SlotPool::allocate() {
  PoolState& st = state();
  std::lock_guard lock(st.mu);
  if (st.quarantine.size() > kQuarantine) return reuse(st);
  if (g_slot_base == 0) {
    st.uses.assign(kSlotCount, 1);  // generation 1: no handle equals its object's address
    void* p = mmap(nullptr, kSlotSize * kSlotCount, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    __atomic_store_n(&g_slot_base, reinterpret_cast<uintptr_t>(p), __ATOMIC_RELEASE);
  }
  if (st.next >= kSlotCount) {
    if (st.quarantine.empty()) throw std::bad_alloc();
    return reuse(st);
  }
  const size_t offset = st.next * kSlotSize;
  if (offset + kSlotSize > g_slot_committed) {
    if (mprotect(reinterpret_cast<void*>(g_slot_base + g_slot_committed),
                 kCommitChunk, PROT_READ | PROT_WRITE) != 0)
      throw std::bad_alloc();
    __atomic_store_n(&g_slot_committed, g_slot_committed + kCommitChunk,
                     __ATOMIC_RELEASE);
  }
  ++st.next;
  return {reinterpret_cast<void*>(g_slot_base + offset), st.uses[st.next - 1]};
}

void SlotPool::release(void* slot) noexcept {
  try {
    PoolState& st = state();
    std::lock_guard lock(st.mu);
    st.quarantine.push_back(slot);
  } catch (...) {
    // A slot that cannot be queued is simply never reused.
  }
}

}  // namespace xal::core
