// An input as a file for parsers that take a path: an anonymous in-memory
// file (memfd), named /proc/self/fd/N, removed when the object goes.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"

namespace xal::fuzz {

class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size)
      : fd_(memfd_create("xal-fuzz-input", MFD_CLOEXEC)) {
    XAL_FUZZ_CHECK(fd_ >= 0, "memfd_create failed");
    size_t done = 0;
    while (done < size) {
      const ssize_t n = write(fd_, data + done, size - done);
      XAL_FUZZ_CHECK(n > 0, "writing the input to a memfd failed");
      done += static_cast<size_t>(n);
    }
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace xal::fuzz
