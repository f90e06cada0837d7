// The direct same-host path of point-to-point messages (p2p_direct.hpp).
#include "p2p_direct.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../error.hpp"
#include "../handles.hpp"
#include "xal_common/stream_copy.hpp"

namespace xal::core {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kMagic[8] = "XALP2P1";
enum : uint32_t { kMapped = 1, kNoExport = 2 };
enum : uint64_t { kDone = 0x656e6f64, kPayload = 0x64616f6c, kMismatch = 0x6874616d };

// What the sender puts on the message's tag instead of the data.
struct Descriptor {
  char magic[8];
  uint64_t tag;     // the message's tag (with the magic: what plain data of
                    // this size is most unlikely to hold)
  uint32_t mode;    // kMapped: `handle` names the allocation; kNoExport
  uint32_t reserved;
  uint64_t offset;  // of the data in the allocation
  uint64_t bytes;   // the message's size
  xal_ipc_handle_t handle;
};

// Whether `d` is the descriptor of the message tagged `tag`. Pure.
bool is_descriptor(const Descriptor& d, uint64_t tag) {
  return std::memcmp(d.magic, kMagic, sizeof kMagic) == 0 && d.tag == tag &&
         (d.mode == kMapped || d.mode == kNoExport);
}

// The time left of one message, at least 1 ms for each call.
class Deadline {
 public:
  explicit Deadline(uint32_t ms) : end_(Clock::now() + std::chrono::milliseconds(ms)) {}
  uint32_t left() const {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now()).count();
    return static_cast<uint32_t>(std::clamp<int64_t>(ms, 1, 0xffffffff));
  }

 private:
  Clock::time_point end_;
};

// Fills d.handle and d.offset when [e.ptr, +e.bytes) lies in one
// allocation xal made on e.device that the backend can export. Thread-safe.
bool export_allocation(const DirectEnd& e, Descriptor* d) {
  if (!e.device->hdr.table->mem_ipc_get) return false;
  DeviceState& st = *e.device->state;
  const auto range = st.registry.containing(e.ptr, e.bytes);
  if (!range) return false;
  {
    std::lock_guard lock(st.foreign_mu);
    if (st.foreign.count(range->base)) return false;  // imported or opened memory
  }
  const char* op = t_operation;
  const xal_status_t s =
      xal_mem_get_ipc_handle(to_handle<xal_device_t>(e.device), range->base, &d->handle);
  t_operation = op;
  if (s != XAL_SUCCESS) return false;
  d->offset = e.ptr - range->base;
  return true;
}

// The receiver's copy out of the mapping: common::stream_copy, with
// streaming stores from 4 MiB (a message that large is not in the caches,
// and stores that skip reading the destination first move a third less
// memory traffic). It stays on this thread: the peer process copies its own
// receives at the same time (a sendrecv, an alltoallv), so the cores are
// busy already (docs/PERFORMANCE.md, "Point-to-point and v-collectives":
// split over the cores it took more time). Thread-safe.
void copy_out(void* dst, const std::byte* src, size_t bytes) {
  common::stream_copy(dst, src, bytes);
}

}  // namespace

bool DirectPath::enabled_by_env() {
  const char* v = std::getenv("XAL_P2P_DIRECT");
  return !(v && std::strcmp(v, "0") == 0);
}

bool DirectPath::export_ok(uint32_t peer) const {
  std::lock_guard lock(mu_);
  return !unmappable_.count(peer);
}

void DirectPath::no_export(uint32_t peer) {
  std::lock_guard lock(mu_);
  unmappable_.insert(peer);
}

xal_status_t DirectPath::send(const DirectEnd& e, const DirectWire& w, std::string* why) {
  const Deadline deadline(timeout_ms_);
  Descriptor d{};
  std::memcpy(d.magic, kMagic, sizeof kMagic);
  d.tag = e.tag;
  d.bytes = e.bytes;
  d.mode = export_ok(e.peer_process) && export_allocation(e, &d) ? kMapped : kNoExport;
  if (xal_status_t s = w.send(&d, sizeof d, DirectWire::kMessage, deadline.left(), why); s)
    return s;
  if (d.mode == kNoExport) {  // the bytes follow at once; no reply to wait for
    ++payloads_;
    return w.send(e.view, e.bytes, DirectWire::kPayload, deadline.left(), why);
  }
  uint64_t reply = 0;
  if (xal_status_t s = w.recv(&reply, sizeof reply, DirectWire::kReply, deadline.left(), why); s)
    return s;
  switch (reply) {
    case kDone:
      ++mapped_;
      return XAL_SUCCESS;
    case kPayload:
      // The receiver cannot map this process's memory: later messages to
      // it say so at once.
      if (d.mode == kMapped) no_export(e.peer_process);
      ++payloads_;
      return w.send(e.view, e.bytes, DirectWire::kPayload, deadline.left(), why);
    case kMismatch:
      *why = cat("the send has ", e.bytes, " bytes, the matching receive another size");
      return XAL_ERROR_COLLECTIVE_MISMATCH;
    default:
      *why = cat("the receiver's reply ", hex(reply), " is none of the direct path's");
      return XAL_ERROR_BACKEND;
  }
}

xal_status_t DirectPath::recv(const DirectEnd& e, const DirectWire& w, std::string* why) {
  const Deadline deadline(timeout_ms_);
  Descriptor d{};
  if (xal_status_t s = w.recv(&d, sizeof d, DirectWire::kMessage, deadline.left(), why); s) {
    if (s == XAL_ERROR_COLLECTIVE_MISMATCH)
      *why = cat("the receive expects ", e.bytes, " bytes, the send has a different size (",
                 *why, ")");
    return s;
  }
  if (!is_descriptor(d, e.tag)) {
    *why = cat("the receive expects ", e.bytes, " bytes, the send has ", sizeof d,
               " (or XAL_P2P_DIRECT differs between the processes)");
    return XAL_ERROR_COLLECTIVE_MISMATCH;
  }
  auto reply = [&](uint64_t r, std::string* w_why) {
    return w.send(&r, sizeof r, DirectWire::kReply, deadline.left(), w_why);
  };
  if (d.bytes != e.bytes) {
    std::string ignored;
    if (d.mode == kMapped) {
      static_cast<void>(reply(kMismatch, &ignored));  // the sender waits for it
    } else if (d.bytes <= (size_t{1} << 30)) {
      // The bytes come anyway: take them, so that the pair stays in step.
      std::vector<std::byte> scratch(d.bytes);
      static_cast<void>(w.recv(scratch.data(), scratch.size(), DirectWire::kPayload,
                               deadline.left(), &ignored));
    }
    *why = cat("the receive expects ", e.bytes, " bytes, the send has ", d.bytes);
    return XAL_ERROR_COLLECTIVE_MISMATCH;
  }
  if (d.mode == kNoExport) {
    ++payloads_;
    return w.recv(e.view, e.bytes, DirectWire::kPayload, deadline.left(), why);
  }
  {
    std::string unmapped;  // why not: the bytes then come as payload
    const auto m = cache_.open(e.device, d.handle, &unmapped);
    if (m && m->host && d.offset <= m->bytes && e.bytes <= m->bytes - d.offset) {
      copy_out(e.view, static_cast<const std::byte*>(m->host) + d.offset, e.bytes);
      ++mapped_;
      return reply(kDone, why);
    }
  }
  ++payloads_;
  if (xal_status_t s = reply(kPayload, why); s) return s;
  return w.recv(e.view, e.bytes, DirectWire::kPayload, deadline.left(), why);
}

xal_status_t DirectPath::recv_small(const DirectEnd& e, const DirectWire& w, std::string* why) {
  xal_status_t s = w.recv(e.view, e.bytes, DirectWire::kMessage, timeout_ms_, why);
  if (s == XAL_SUCCESS && e.bytes == sizeof(Descriptor)) {
    // A receive of exactly a descriptor's size met a descriptor: the sizes
    // disagree across the threshold. Answer it as a mismatch (a mapped
    // sender waits for that; the bytes of an unexported one follow).
    Descriptor d{};
    std::memcpy(&d, e.view, sizeof d);
    if (is_descriptor(d, e.tag)) {
      std::string ignored;
      if (d.mode == kMapped) {
        const uint64_t r = kMismatch;
        static_cast<void>(w.send(&r, sizeof r, DirectWire::kReply, timeout_ms_, &ignored));
      } else if (d.bytes <= (size_t{1} << 30)) {
        std::vector<std::byte> scratch(d.bytes);
        static_cast<void>(w.recv(scratch.data(), scratch.size(), DirectWire::kPayload,
                                 timeout_ms_, &ignored));
      }
      *why = cat("the receive expects ", e.bytes, " bytes, the send has ", d.bytes);
      s = XAL_ERROR_COLLECTIVE_MISMATCH;
    }
  }
  // Any other mismatch sends nothing back: the sender, if it sent a
  // descriptor (its size at or above the threshold, this one's below),
  // ends with TIMEOUT within the communicator's timeout.
  return s;
}

}  // namespace xal::core
