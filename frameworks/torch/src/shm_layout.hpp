// The layout of the shared-memory segment of a ShmTransport and the waiting
// primitives its processes use on it (futexes on the shared mapping,
// deadlines, whether a peer process has ended). Internal to
// shm_transport.cpp and shm_p2p.cpp.
//
// Segment: the header (Header, one ProcSlot per process, one Channel per
// ordered pair of processes), then the collectives' two buffer sets (one
// slot per process and a result slot each), then the point-to-point data:
// kMailSlots cells of `cell_bytes` per channel.
#pragma once

#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "shm_transport.hpp"

namespace xal::torch_backend::shm {

constexpr uint64_t kMagic = 0x78616c746f726369ull;  // "xaltorci": with point-to-point
constexpr size_t kWhyBytes = 160;
constexpr int64_t kLivenessPeriodNs = 50'000'000;  // how often peers' pids are checked
constexpr int64_t kFutexSliceNs = 20'000'000;      // longest single futex wait
constexpr int kSpins = 128;                        // busy polls before sleeping
constexpr uint32_t kMailSlots = 4;                 // messages in flight per ordered pair
constexpr int64_t kCloseGraceNs = 10'000'000'000;  // unreceived sends at release
constexpr size_t kZeroCopyMinBytes = size_t{256} << 10;  // allreduce in place from shared blocks

inline int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// The inode of this process's pid namespace (0 if unknown): pids are only
// compared within one namespace.
inline uint64_t pid_namespace() {
  struct stat st {};
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

// True when process `pid` has ended (gone, or a zombie nobody reaped yet).
inline bool process_ended(int32_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::ifstream f(path);
  if (!f) return true;
  std::string line;
  std::getline(f, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  return state == 'Z' || state == 'X';
}

inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct alignas(64) ProcSlot {
  std::atomic<uint32_t> arrived;  // barriers passed (futex word)
  std::atomic<uint32_t> waiters;  // processes sleeping on `arrived`
  int32_t pid;
  uint32_t why_ready;             // 1 once `why` is written (atomic_ref)
  uint64_t pidns;
  std::atomic<uint64_t> scratch[2];
  char why[kWhyBytes];
  // Zero-copy allreduce (shm_zero_copy.cpp): the process's buffer, a
  // shared block others can map; written before a barrier, read after it.
  uint32_t zc_offered;  // 1: the fields below name the buffer
  uint32_t zc_mapped;   // 1: this process mapped every other's buffer
  int32_t zc_fd;
  uint32_t zc_reserved;
  uint64_t zc_id, zc_block_bytes, zc_offset;
};

// One message in flight from one process to another. The sender claims a
// free cell (FREE -> WRITING), writes its tag and size and the first chunk
// and offers it (OFFERED); a receiver with that tag takes it (MATCHED) and
// the two hand the rest over chunk by chunk through `filled` and `taken`
// (chunks written and read, futex words). Whichever side finishes second
// (`done` reaching 2) frees the cell.
enum MailState : uint32_t { kFree = 0, kWriting = 1, kOffered = 2, kMatched = 3 };

struct alignas(64) MailSlot {
  std::atomic<uint32_t> state;
  std::atomic<uint32_t> filled;
  std::atomic<uint32_t> taken;
  std::atomic<uint32_t> done;
  std::atomic<uint32_t> mismatch;  // 1: the receiver expects another size
  uint32_t reserved;
  uint64_t tag;
  uint64_t bytes;
};

// The messages from one process to another.
struct alignas(64) Channel {
  std::atomic<uint32_t> posted;  // offers made (futex word for receivers)
  std::atomic<uint32_t> freed;   // cells freed (futex word for senders)
  MailSlot cells[kMailSlots];
};

// Offsets of a segment for `size` processes and collective slots of
// `slot_bytes`; every process computes the same.
struct Layout {
  size_t header_bytes, slot_bytes, cell_bytes, p2p_offset, total;
  Layout(uint32_t size, size_t slot)
      : header_bytes(align_up(128 + sizeof(ProcSlot) * size + sizeof(Channel) * size * size, 4096)),
        slot_bytes(slot),
        cell_bytes(std::clamp<size_t>(slot / 8, 4096, size_t{512} << 10) / 64 * 64),
        p2p_offset(2 * (size_t{size} + 1) * slot),
        total(header_bytes + p2p_offset + size_t{size} * size * kMailSlots * cell_bytes) {}
};

}  // namespace xal::torch_backend::shm

namespace xal::torch_backend {

struct ShmTransport::Header {
  uint64_t magic;
  uint32_t size;
  uint32_t reserved;
  uint64_t slot_bytes;
  std::atomic<uint32_t> attached;
  std::atomic<uint32_t> broken;  // 0, or the first failing process + 1
  std::atomic<int32_t> broken_status;
  uint32_t reserved2;
  shm::ProcSlot* procs() {
    return reinterpret_cast<shm::ProcSlot*>(reinterpret_cast<char*>(this) + 64 * 2);
  }
  // The channel from process `from` to process `to`.
  shm::Channel* channel(uint32_t from, uint32_t to) {
    auto* first = reinterpret_cast<shm::Channel*>(reinterpret_cast<char*>(procs() + size));
    return first + size_t{from} * size + to;
  }
};
static_assert(sizeof(ShmTransport::Header) <= 128, "header fits its two cache lines");

}  // namespace xal::torch_backend
