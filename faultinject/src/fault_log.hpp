// The injection log (XAL_FAULT_LOG): one JSON object per line, appended
// with a single write(2) so that lines of concurrent threads and processes
// never interleave. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "engine.hpp"

namespace xal::fault {

class FaultLog {
 public:
  FaultLog() = default;
  ~FaultLog();
  FaultLog(const FaultLog&) = delete;
  FaultLog& operator=(const FaultLog&) = delete;

  // Opens `path` for appending; returns false (and sets *error) on failure.
  bool open(const std::string& path, std::string* error);
  bool is_open() const { return fd_ >= 0; }

  // Writes the line of one injection.
  void write(const Decision& d, std::string_view operation, int64_t device,
             std::optional<uint64_t> bytes, double time_ms,
             std::string_view backend);

  // Writes {"event":"start_failed","pid":...,"status":...,"reason":...}:
  // the backend did not start, so nothing of this process is injected.
  void write_start_failure(std::string_view status, std::string_view reason);

 private:
  void append(const std::string& line);

  int fd_ = -1;
};

}  // namespace xal::fault
