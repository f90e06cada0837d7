// The xal session seen from Python: between xal.init and xal.shutdown.
//
// Every init starts a new generation. Each object the bindings hand out
// keeps the generation it was made in, and its handle reaches xal only while
// that generation is current, so that a handle made before xal.shutdown is
// never passed to xal afterwards (it raises NotInitialized or InvalidHandle).
// Calls run with the GIL released, under a shared lock that init and
// shutdown take exclusively: a shutdown never overtakes a call in flight.
// The lock is only ever taken with the GIL released, or held briefly by a
// thread that needs nothing else (no lock order with the GIL).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include "xal/xal.h"

namespace xalpy {

namespace nb = nanobind;

// A failing status with its detail; the bindings turn it into the
// xal.Error subclass of the status (errors.cpp).
class Error : public std::exception {
 public:
  explicit Error(const xal_error_info_t& info) : info_(info) {}
  // Detail made by the bindings (a closed object, a stale handle, a range
  // outside a buffer): no backend, no vendor code.
  Error(xal_status_t status, const char* operation, const std::string& message);
  const xal_error_info_t& info() const { return info_; }
  const char* what() const noexcept override { return info_.message; }

 private:
  xal_error_info_t info_;
};

namespace session {

std::shared_mutex& mutex();
// True while xal is initialised and `gen` is its generation (0: any).
// Read under mutex(), or with the GIL for a hint.
bool current(uint64_t gen);
// The current generation; 0 when xal is not initialised.
uint64_t generation();
// The error for an object of generation `gen` that is not current.
Error stale(uint64_t gen, const char* operation);

}  // namespace session

// The calling thread's xal_last_error.
xal_error_info_t last_error();

// Runs `f` (one xal call) with the GIL released, under the shared lock,
// once `gen` is current. Throws Error for a stale object or a status < 0;
// returns XAL_SUCCESS or XAL_NOT_READY. Called with the GIL held.
template <class F>
xal_status_t call(uint64_t gen, const char* operation, F&& f) {
  xal_status_t status = XAL_SUCCESS;
  xal_error_info_t info{};
  bool is_stale = false;
  {
    nb::gil_scoped_release nogil;
    std::shared_lock lock(session::mutex());
    if (!session::current(gen)) {
      is_stale = true;
    } else {
      status = std::forward<F>(f)();
      if (status < 0) info = last_error();
    }
  }
  if (is_stale) throw session::stale(gen, operation);
  if (status < 0) {
    if (info.status != status) {  // the detail is of an earlier call
      throw Error(status, operation,
                  std::string(xal_status_name(status)) + " (xal gave no detail)");
    }
    throw Error(info);
  }
  return status;
}

// Runs `f` like call() but never throws: for releases in destructors. The
// GIL may be held or not; nothing runs when `gen` is not current.
template <class F>
void quiet_call(uint64_t gen, F&& f) noexcept {
  auto run = [&] {
    std::shared_lock lock(session::mutex());
    if (session::current(gen)) (void)std::forward<F>(f)();
  };
  if (PyGILState_Check()) {
    nb::gil_scoped_release nogil;
    run();
  } else {
    run();
  }
}

// A Python str from C text that may not be UTF-8 (bad bytes replaced).
nb::str text(const char* s);

// Throws Error(XAL_ERROR_INVALID_ARGUMENT / OUT_OF_BOUNDS, ...).
[[noreturn]] void invalid(const char* operation, const std::string& message);
[[noreturn]] void out_of_bounds(const char* operation, const std::string& message);

}  // namespace xalpy
