// What hosts_transport.cpp and hosts_alltoallv.cpp share: errors as a
// status and message, host memory as a byte tensor, a call of the leaders'
// Gloo bounded by the timeout, and the entry macros. Internal.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "hosts_transport.hpp"

namespace xal::torch_backend::hosts {

// `n` bytes at p as a uint8 tensor (not owned).
inline at::Tensor bytes_of(void* p, size_t n) {
  return at::from_blob(p, {static_cast<int64_t>(n)}, at::TensorOptions().dtype(at::kByte));
}

// Writes `why` into the entry's message and returns s.
inline xal_status_t fail(xal_status_t s, const std::string& why, char* message,
                         size_t message_size) {
  if (message && message_size) std::snprintf(message, message_size, "%s", why.c_str());
  return s;
}

// Starts a leaders' call with `start` and waits for it up to timeout_ms.
template <class Start>
xal_status_t leaders_call(const char* what, uint32_t timeout_ms, Start start, char* message,
                          size_t message_size) {
  try {
    c10::intrusive_ptr<c10d::Work> work = start();
    work->wait(std::chrono::milliseconds(timeout_ms));
    return XAL_SUCCESS;
  } catch (const std::exception& e) {
    const std::string text = e.what();
    const bool timed_out = text.find("imed out") != std::string::npos ||
                           text.find("imeout") != std::string::npos;
    return fail(timed_out ? XAL_ERROR_TIMEOUT : XAL_ERROR_ABORTED,
                std::string("between hosts (Gloo, ") + what + "): " +
                    text.substr(0, text.find('\n')),
                message, message_size);
  }
}

}  // namespace xal::torch_backend::hosts

// Inside a HostsTransport entry (t: the transport): a failure breaks it.
#define XAL_HOSTS_CHECK(call)                          \
  do {                                                 \
    if (xal_status_t s_ = (call); s_) {                \
      xal_status_t none_ = XAL_SUCCESS;                \
      t.broken_.compare_exchange_strong(none_, s_);    \
      return s_;                                       \
    }                                                  \
  } while (0)

// An entry's start: fails at once when aborted or broken.
#define XAL_HOSTS_BEGIN()                                                               \
  HostsTransport& t = *static_cast<HostsTransport*>(user);                              \
  if (t.aborted_.load())                                                                \
    return fail(XAL_ERROR_ABORTED, "aborted (xal_comm_abort)", message, message_size);  \
  if (xal_status_t broken_ = t.broken_.load(); broken_ != XAL_SUCCESS)                  \
    return fail(broken_, "an earlier call between hosts failed", message, message_size)
