// HostsTransport's send and recv (xal_transport.h, ABI 1.1): between the
// processes of one host through the host's shared-memory transport; between
// hosts through torch's Gloo over every rank of the group (`everyone`).
// A message between hosts is two Gloo messages: its header (size and the
// core's 64-bit tag) under the reserved tag of RemoteHeaders, which the
// receiving side takes from any rank as it comes (hosts_headers.hpp), then
// its bytes under the core's tag folded into Gloo's range (messages of one
// pair pair by tag; the tags in flight at once differ). A receive of
// another size takes the bytes into scratch memory, so that the pair stays
// in step, and fails with COLLECTIVE_MISMATCH naming both sizes.
#include <ATen/ATen.h>

#include <chrono>
#include <string>

#include "entry_guard.hpp"
#include "hosts_common.hpp"
#include "hosts_transport.hpp"

namespace xal::torch_backend {

using namespace hosts;

namespace {

// The core's 64-bit tag folded into Gloo's (non-negative int) range, every
// bit counted: the core sets high bits for a message's other channels.
int gloo_tag(uint64_t tag) {
  return static_cast<int>((tag ^ (tag >> 30) ^ (tag >> 60)) & ((uint64_t{1} << 30) - 1));
}

}  // namespace

xal_status_t HostsTransport::wait_remote(const char* what, uint32_t peer,
                                         c10::intrusive_ptr<c10d::Work> work,
                                         uint32_t timeout_ms, char* message,
                                         size_t message_size) {
  std::list<c10::intrusive_ptr<c10d::Work>>::iterator it;
  {
    std::lock_guard lock(pending_mu_);
    it = pending_.insert(pending_.end(), work);
  }
  xal_status_t s = XAL_SUCCESS;
  if (aborted_.load()) {
    s = fail(XAL_ERROR_ABORTED, "aborted (xal_comm_abort)", message, message_size);
    try {
      work->abort();
    } catch (const std::exception&) {
    }
  } else {
    s = leaders_call(what, timeout_ms, [&] { return work; }, message, message_size);
    if (s != XAL_SUCCESS && aborted_.load())
      s = fail(XAL_ERROR_ABORTED, "aborted (xal_comm_abort)", message, message_size);
  }
  {
    std::lock_guard lock(pending_mu_);
    pending_.erase(it);
  }
  if (s != XAL_SUCCESS && message && message_size) {
    const std::string detail = message;
    fail(s, std::string(what) + " with process " + std::to_string(peer) + ": " + detail, message,
         message_size);
  }
  return s;
}

xal_status_t HostsTransport::send_remote(const void* buf, size_t bytes, uint32_t peer,
                                         uint64_t tag, uint32_t timeout_ms, char* message,
                                         size_t message_size) {
  HostsTransport& t = *this;  // for XAL_HOSTS_CHECK
  const int gtag = gloo_tag(tag);
  XAL_HOSTS_CHECK(wait_remote("send between hosts", peer,
                              headers_->send(static_cast<int>(peer), bytes, tag), timeout_ms,
                              message, message_size));
  if (bytes == 0) return XAL_SUCCESS;
  std::vector<at::Tensor> data{bytes_of(const_cast<void*>(buf), bytes)};
  XAL_HOSTS_CHECK(wait_remote("send between hosts", peer,
                              everyone_->send(data, static_cast<int>(peer), gtag), timeout_ms,
                              message, message_size));
  return XAL_SUCCESS;
}

xal_status_t HostsTransport::recv_remote(void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                                         uint32_t timeout_ms, char* message,
                                         size_t message_size) {
  HostsTransport& t = *this;  // for XAL_HOSTS_CHECK
  const int gtag = gloo_tag(tag);
  int64_t sent = 0;
  std::string why;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  XAL_HOSTS_CHECK([&] {
    const xal_status_t s = headers_->take(static_cast<int>(peer), tag, deadline, &sent, &why);
    if (s == XAL_SUCCESS) return s;
    return fail(s, "recv between hosts with process " + std::to_string(peer) + ": " + why,
                message, message_size);
  }());
  const bool same = sent == static_cast<int64_t>(bytes);
  if (sent > 0) {
    at::Tensor into = same ? bytes_of(buf, bytes) : at::empty({sent}, at::kByte);
    std::vector<at::Tensor> data{into};
    XAL_HOSTS_CHECK(wait_remote("recv between hosts", peer,
                                everyone_->recv(data, static_cast<int>(peer), gtag), timeout_ms,
                                message, message_size));
  }
  if (same) return XAL_SUCCESS;
  return fail(XAL_ERROR_COLLECTIVE_MISMATCH,
              "recv between hosts: process " + std::to_string(peer) + " sent " +
                  std::to_string(sent) + " bytes to a receive of " + std::to_string(bytes),
              message, message_size);
}

template <class Local, class Remote>
xal_status_t HostsTransport::p2p_entry(void* user, const char* what, uint32_t peer, Local local,
                                       Remote remote, char* message, size_t message_size) {
  return guarded_entry(what, message, message_size, [&]() -> xal_status_t {
    XAL_HOSTS_BEGIN();
    if (peer >= t.host_of_.size())
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  std::string(what) + ": process " + std::to_string(peer) + " of " +
                      std::to_string(t.host_of_.size()),
                  message, message_size);
    if (t.host_of_[peer] == t.host_)
      return local(t.local_, static_cast<uint32_t>(t.local_index(static_cast<int>(peer))));
    if (!t.everyone_)
      return fail(XAL_ERROR_NOT_SUPPORTED,
                  std::string(what) + " between hosts needs a group over every rank (made by "
                                      "xal_torch)",
                  message, message_size);
    return remote(t);
  });
}

xal_status_t HostsTransport::send(void* user, const void* buf, size_t bytes, uint32_t peer,
                                  uint64_t tag, uint32_t timeout_ms, char* message,
                                  size_t message_size) {
  return p2p_entry(
      user, "send", peer,
      [&](const xal_comm_transport_t& l, uint32_t p) {
        return l.send(l.user, buf, bytes, p, tag, timeout_ms, message, message_size);
      },
      [&](HostsTransport& t) {
        return t.send_remote(buf, bytes, peer, tag, timeout_ms, message, message_size);
      },
      message, message_size);
}

xal_status_t HostsTransport::recv(void* user, void* buf, size_t bytes, uint32_t peer,
                                  uint64_t tag, uint32_t timeout_ms, char* message,
                                  size_t message_size) {
  return p2p_entry(
      user, "recv", peer,
      [&](const xal_comm_transport_t& l, uint32_t p) {
        return l.recv(l.user, buf, bytes, p, tag, timeout_ms, message, message_size);
      },
      [&](HostsTransport& t) {
        return t.recv_remote(buf, bytes, peer, tag, timeout_ms, message, message_size);
      },
      message, message_size);
}

}  // namespace xal::torch_backend
