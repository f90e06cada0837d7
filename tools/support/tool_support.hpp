// What the command-line tools (xal-info, xal-smi, xal-exporter) share: the
// options that choose backends, an xal session, error text and formatting.
// Everything here uses the public ABI only.
#ifndef XAL_TOOLS_SUPPORT_TOOL_SUPPORT_HPP_
#define XAL_TOOLS_SUPPORT_TOOL_SUPPORT_HPP_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "xal/xal.h"

namespace xal::tools {

// Which backends to load; empty strings leave it to the environment
// (XAL_BACKENDS, XAL_BACKEND_PATH, XAL_DEVICE_SELECTOR).
struct BackendOptions {
  std::string backend;
  std::string backend_path;
  std::string selector;
};

// Adds --backend and --backend-path (not --selector) to `app`, writing
// into `opt`, which must outlive the parse.
void add_backend_options(CLI::App& app, BackendOptions& opt);

// Sets --version to print "<tool>, ABI <major>.<minor>".
void add_version_flag(CLI::App& app, const std::string& tool);

// xal_init with `opt` (validation off, as a tool only reads), and
// xal_shutdown when it goes out of scope. Not copyable; one at a time per
// process, as xal_init is.
class Session {
 public:
  // When xal_init fails, ok() is false and `err` has a line
  // "<tool>: xal_init failed: <last_error_text>".
  Session(const std::string& tool, const BackendOptions& opt, std::ostream& err);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

// The exit status of a tool whose --backend did not load.
inline constexpr int kExitBackendNotLoaded = 2;

// With --backend given (`opt.backend` not empty), after a Session started:
// 0 when every backend xal considered is LOADED; otherwise
// kExitBackendNotLoaded, with "<tool>: backend 'X' is UNAVAILABLE: reason"
// (or "no backend matched") on `err`. 0 when --backend was not given.
int check_backend_option(const std::string& tool, const BackendOptions& opt,
                         std::ostream& err);

// "XAL_ERROR_...: message (vendor code N NAME)" from the calling thread's
// last error; the status name alone when there is no message.
std::string last_error_text(xal_status_t status);

// Throws std::runtime_error "<what> failed: <last_error_text>" unless
// `status` is XAL_SUCCESS.
void check(xal_status_t status, const std::string& what);

// A device's memory and compute share, as xal-info and xal-smi show them.
struct MemoryReading {
  // xal_mem_get_info; nullopt when the call failed (the reason in
  // mem_error).
  std::optional<uint64_t> mem_free;
  std::optional<uint64_t> mem_total;
  std::string mem_error;
  // xal_device_get_compute_share: a partition's share, 100 for a card (and
  // when the call fails).
  uint32_t compute_percent = 100;
};

// Reads `device`'s memory and compute share into `out`; a failing call is
// recorded there, never thrown. Thread-safe as the calls it makes.
void read_memory(xal_device_t device, MemoryReading& out);

// "LOADED", "UNAVAILABLE", "FAILED" (or "UNKNOWN").
const char* backend_state_name(uint32_t state);

// The same in lower case ("loaded", ...), for JSON values and labels.
std::string backend_state_label(uint32_t state);

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string format_uuid(const uint8_t (&uuid)[16]);

// "1.0" from major<<16|minor.
std::string format_abi_version(uint32_t version);

// Flushes std::cout and C's stdout. False, with "<tool>: cannot write to
// stdout: <reason>" on `err`, when what was printed could not be written
// (a full disk, say): the tool then exits 1 rather than 0.
bool flush_stdout(const std::string& tool, std::ostream& err);

}  // namespace xal::tools

#endif  // XAL_TOOLS_SUPPORT_TOOL_SUPPORT_HPP_
