#include "foreign_memory.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <mutex>

#include "errors.h"

namespace xal::mock {

namespace {

// A descriptor that polls readable once process `pid` has ended, or -1.
int open_pidfd(int32_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool process_gone(int32_t pid, int pidfd) {
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

ForeignMemory::~ForeignMemory() { clear(); }

bool ForeignMemory::add_host(uint64_t base, uint64_t bytes) {
  std::unique_lock lock(mu_);
  auto after = ranges_.lower_bound(base);
  if (after != ranges_.end() && after->first < base + bytes) return false;
  if (after != ranges_.begin() && std::prev(after)->first + std::prev(after)->second.bytes > base)
    return false;
  ranges_.emplace(base, Range{bytes});
  return true;
}

uint64_t ForeignMemory::open_ipc(int32_t owner_pid, int fd, uint64_t offset, uint64_t bytes,
                                 uint64_t file_dev, uint64_t file_ino) {
  const std::string path = "/proc/" + std::to_string(owner_pid) + "/fd/" + std::to_string(fd);
  // O_NONBLOCK: a handle naming a FIFO or a device must not block here.
  const int file = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (file < 0)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "mem_ipc_open: cannot reach the memory of process " + std::to_string(owner_pid) +
                    " (" + path + ": " + std::strerror(errno) +
                    "): it has ended, or belongs to another user");
  struct stat st {};
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t length = offset + bytes - begin;
  if (fstat(file, &st) == 0 && (static_cast<uint64_t>(st.st_dev) != file_dev ||
                                static_cast<uint64_t>(st.st_ino) != file_ino)) {
    close(file);
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "mem_ipc_open: " + path + " is another file than the device memory the handle "
                "was made for (the exporter ended and its process id was reused?)");
  }
  if (fstat(file, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset + bytes) {
    close(file);
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                "mem_ipc_open: the handle names memory past the end of process " +
                    std::to_string(owner_pid) + "'s device memory");
  }
  void* map = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, file,
                   static_cast<off_t>(begin));
  const int map_errno = errno;
  close(file);
  if (map == MAP_FAILED)
    throw Error(XAL_ERROR_INVALID_ARGUMENT,
                std::string("mem_ipc_open: cannot map the memory: ") + std::strerror(map_errno));
  Range r;
  r.bytes = bytes;
  r.mapping = map;
  r.mapping_bytes = length;
  r.owner_pid = owner_pid;
  r.pidfd = open_pidfd(owner_pid);
  const uint64_t base = reinterpret_cast<uint64_t>(map) + (offset - begin);
  std::unique_lock lock(mu_);
  ranges_.emplace(base, r);
  return base;
}

void ForeignMemory::release(Range& r) noexcept {
  if (r.mapping) munmap(r.mapping, r.mapping_bytes);
  if (r.pidfd >= 0) close(r.pidfd);
  r.mapping = nullptr;
  r.pidfd = -1;
}

bool ForeignMemory::remove(uint64_t base) {
  Range r;
  {
    std::unique_lock lock(mu_);
    auto it = ranges_.find(base);
    if (it == ranges_.end()) return false;
    r = it->second;
    ranges_.erase(it);
  }
  release(r);
  return true;
}

void ForeignMemory::clear() {
  std::map<uint64_t, Range> all;
  {
    std::unique_lock lock(mu_);
    all.swap(ranges_);
  }
  for (auto& [base, r] : all) release(r);
}

std::optional<ForeignMemory::Hit> ForeignMemory::find(uint64_t ptr, uint64_t bytes) const {
  std::shared_lock lock(mu_);
  auto it = ranges_.upper_bound(ptr);
  if (it == ranges_.begin()) return std::nullopt;
  --it;
  const Range& r = it->second;
  if (ptr - it->first > r.bytes || bytes > r.bytes - (ptr - it->first)) return std::nullopt;
  Hit hit;
  hit.owner_pid = r.owner_pid;
  hit.owner_gone = r.mapping != nullptr && process_gone(r.owner_pid, r.pidfd);
  return hit;
}

bool ForeignMemory::empty() const {
  std::shared_lock lock(mu_);
  return ranges_.empty();
}

}  // namespace xal::mock
