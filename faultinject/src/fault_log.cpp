#include "fault_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "profiles.hpp"

namespace xal::fault {
namespace {

// One line of JSON. Strings that are not valid UTF-8 (rule names and paths
// are bytes) get U+FFFD in place of the bad bytes instead of throwing.
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace

FaultLog::~FaultLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool FaultLog::open(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                        0644);
  if (fd < 0) {
    *error = "cannot open fault log '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  return true;
}

void FaultLog::write(const Decision& d, std::string_view operation,
                     int64_t device, std::optional<uint64_t> bytes,
                     double time_ms, std::string_view backend) {
  if (fd_ < 0) return;
  nlohmann::json j;
  j["time_ms"] = time_ms;
  j["pid"] = static_cast<int64_t>(::getpid());
  j["backend"] = std::string(backend);
  j["rule"] = d.rule_name;
  j["rule_index"] = d.rule_index;
  j["operation"] = std::string(operation);
  if (device >= 0) {
    j["device"] = device;
  } else {
    j["device"] = nullptr;
  }
  j["action"] = std::string(action_name(d.action));
  const bool has_error = d.action == Action::error ||
                         d.action == Action::async_error ||
                         d.action == Action::device_lost ||
                         d.action == Action::hang;
  if (has_error) {
    j["status"] = status_to_name(d.error.status);
    j["vendor_code"] = d.error.vendor_code;
    j["vendor_name"] = d.error.vendor_name;
    j["sticky"] = d.error.sticky;
  } else {
    j["status"] = "XAL_SUCCESS";
  }
  if (d.action == Action::delay) j["delay_ms"] = d.delay_ms;
  if (d.action == Action::hang) j["timeout_ms"] = d.timeout_ms;
  if (d.action == Action::bitflip) {
    auto flips = nlohmann::json::array();
    for (const auto& f : d.flips) {
      flips.push_back({{"offset", f.offset}, {"mask", f.mask}});
    }
    j["flips"] = flips;
  }
  if (bytes) j["bytes"] = *bytes;
  j["call"] = d.call;
  j["match"] = d.match;
  append(dump_line(j));
}

void FaultLog::write_start_failure(std::string_view status,
                                   std::string_view reason) {
  nlohmann::json j;
  j["event"] = "start_failed";
  j["pid"] = static_cast<int64_t>(::getpid());
  j["status"] = std::string(status);
  j["reason"] = std::string(reason);
  append(dump_line(j));
}

// One write(2) per line, so that lines of threads and processes never mix.
void FaultLog::append(const std::string& line) {
  if (fd_ < 0) return;
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace xal::fault
