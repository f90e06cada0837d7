// ForeignMemory: memory a mock device uses but does not own (ABI 1.1
// interop): host memory a framework imported (xal_mem_import with
// XAL_MEM_IMPORT_HOST) and allocations of another process mapped from an
// IPC handle. A mock device pointer is a host address, so both are used in
// place. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>

namespace xal::mock {

class ForeignMemory {
 public:
  ForeignMemory() = default;
  ~ForeignMemory();  // unmaps what open_ipc mapped
  ForeignMemory(const ForeignMemory&) = delete;
  ForeignMemory& operator=(const ForeignMemory&) = delete;

  // Adds caller-owned host memory [base, base+bytes). False when it
  // overlaps a range already here.
  bool add_host(uint64_t base, uint64_t bytes);
  // Maps `bytes` at `offset` of process `owner_pid`'s memory file `fd` (its
  // arena), which must still be the file (file_dev, file_ino) the handle was
  // made for, and returns the address. Throws Error(INVALID_ARGUMENT) with
  // the reason when the process or its file cannot be reached, or the
  // descriptor names another file.
  uint64_t open_ipc(int32_t owner_pid, int fd, uint64_t offset, uint64_t bytes,
                    uint64_t file_dev, uint64_t file_ino);
  // Forgets (and for IPC unmaps) the range starting at `base`; false when
  // there is none.
  bool remove(uint64_t base);
  // Forgets every range (device reset keeps nothing of the caller's).
  void clear();

  // The range holding [ptr, ptr+bytes): nullopt when none. `owner_gone`
  // is set when it is IPC memory whose exporting process has ended.
  struct Hit {
    bool owner_gone = false;
    int32_t owner_pid = 0;
  };
  std::optional<Hit> find(uint64_t ptr, uint64_t bytes) const;
  bool empty() const;

 private:
  struct Range {
    uint64_t bytes = 0;
    // IPC only: the page-aligned mapping, and the exporter (pidfd, -1 when
    // the kernel has none: then kill(pid, 0) answers).
    void* mapping = nullptr;
    size_t mapping_bytes = 0;
    int32_t owner_pid = 0;
    int pidfd = -1;
  };
  static void release(Range& r) noexcept;

  mutable std::shared_mutex mu_;
  std::map<uint64_t, Range> ranges_;  // by base address
};

}  // namespace xal::mock
