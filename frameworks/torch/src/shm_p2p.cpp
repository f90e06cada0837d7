// ShmTransport's point-to-point entries (xal_transport.h, ABI 1.1): see
// shm_transport.hpp for the protocol and shm_layout.hpp for the cells.
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "entry_guard.hpp"
#include "shm_layout.hpp"
#include "shm_transport.hpp"

namespace xal::torch_backend {

using namespace shm;

char* ShmTransport::cell_data(uint32_t from, uint32_t to, uint32_t cell) const {
  return p2p_data_ + ((size_t{from} * size_ + to) * kMailSlots + cell) * cell_bytes_;
}

// One side is done with the cell; the second frees it for the next message.
void ShmTransport::finish_cell(uint32_t from, uint32_t to, uint32_t cell) {
  Channel& ch = *header_->channel(from, to);
  MailSlot& m = ch.cells[cell];
  if (m.done.fetch_add(1, std::memory_order_acq_rel) != 1) return;
  m.filled.store(0, std::memory_order_relaxed);
  m.taken.store(0, std::memory_order_relaxed);
  m.mismatch.store(0, std::memory_order_relaxed);
  m.done.store(0, std::memory_order_relaxed);
  m.state.store(kFree, std::memory_order_release);
  ch.freed.fetch_add(1, std::memory_order_release);
  futex_wake(&ch.freed);
}

int ShmTransport::offered_from(uint32_t first) const {
  for (uint32_t i = 0; i < size_; ++i) {
    const uint32_t p = (first + i) % size_;
    if (p == rank_) continue;
    const Channel& ch = *header_->channel(p, rank_);
    for (const MailSlot& m : ch.cells)
      if (m.state.load(std::memory_order_acquire) == kOffered) return static_cast<int>(p);
  }
  return -1;
}

template <class Ready>
xal_status_t ShmTransport::wait_for(std::atomic<uint32_t>* word, Ready ready, uint32_t peer,
                                    const char* what, int64_t deadline, std::string* why) {
  const ProcSlot& other = header_->procs()[peer];
  const uint64_t my_ns = header_->procs()[rank_].pidns;
  int64_t next_liveness = 0;
  for (int spins = 0;; ++spins) {
    const uint32_t seen = word->load(std::memory_order_acquire);
    if (ready()) return XAL_SUCCESS;
    if (spins < kSpins) {
      cpu_relax();
      continue;
    }
    if (xal_status_t s = check_broken(why); s) return s;
    const int64_t now = now_ns();
    if (now >= deadline) {
      *why = std::string(what) + " with process " + std::to_string(peer) +
             " did not complete in time (timeout)";
      set_broken(XAL_ERROR_TIMEOUT, *why);
      return XAL_ERROR_TIMEOUT;
    }
    if (now >= next_liveness) {
      next_liveness = now + kLivenessPeriodNs;
      if (my_ns != 0 && other.pidns == my_ns && process_ended(other.pid)) {
        if (ready()) return XAL_SUCCESS;
        *why = "process " + std::to_string(peer) + " (pid " + std::to_string(other.pid) +
               ") exited during " + what;
        set_broken(XAL_ERROR_ABORTED, *why);
        return XAL_ERROR_ABORTED;
      }
    }
    futex_wait(word, seen, std::min(deadline - now, kFutexSliceNs));
  }
}

#define XAL_SHM_P2P_BEGIN(what)                                                      \
  ShmTransport& t = *static_cast<ShmTransport*>(user);                               \
  std::string why;                                                                   \
  auto fail = [&](xal_status_t s) {                                                  \
    if (message && message_size)                                                     \
      std::snprintf(message, message_size, "shared memory %s: %s", what, why.c_str()); \
    return s;                                                                        \
  };                                                                                 \
  if (xal_status_t s0_ = t.check_broken(&why); s0_) return fail(s0_);                \
  if (peer >= t.size_ || peer == t.rank_) {                                          \
    why = "process " + std::to_string(peer) + " is not another process of " +        \
          std::to_string(t.size_);                                                   \
    return fail(XAL_ERROR_INVALID_ARGUMENT);                                         \
  }                                                                                  \
  const int64_t deadline = now_ns() + int64_t{timeout_ms} * 1'000'000

int ShmTransport::try_claim(uint32_t peer) {
  Channel& ch = *header_->channel(rank_, peer);
  for (uint32_t c = 0; c < kMailSlots; ++c) {
    uint32_t expected = kFree;
    if (ch.cells[c].state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel))
      return static_cast<int>(c);
  }
  return -1;
}

void ShmTransport::join_streamers(bool all) {
  std::vector<Streamer> finished;
  {
    std::lock_guard lock(streamers_mu_);
    for (auto it = streamers_.begin(); it != streamers_.end();) {
      if (all || it->done->load()) {
        finished.push_back(std::move(*it));
        it = streamers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Streamer& s : finished) s.thread.join();
}

xal_status_t ShmTransport::send_now(const char* in, size_t bytes, uint32_t peer, uint64_t tag,
                                    int claimed, int64_t deadline, std::string* why) {
  Channel& ch = *header_->channel(rank_, peer);
  int cell = claimed;
  if (cell < 0) {
    auto claim = [&] { return (cell = try_claim(peer)) >= 0; };
    if (xal_status_t s = wait_for(&ch.freed, claim, peer, "send (a free cell)", deadline, why); s)
      return s;
  }
  const auto c = static_cast<uint32_t>(cell);
  MailSlot& m = ch.cells[c];
  std::atomic_ref<uint64_t>(m.tag).store(tag, std::memory_order_relaxed);
  std::atomic_ref<uint64_t>(m.bytes).store(bytes, std::memory_order_relaxed);
  char* data = cell_data(rank_, peer, c);
  const size_t chunk = cell_bytes_;
  const size_t chunks = bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
  for (size_t k = 0; k < chunks; ++k) {
    if (k > 0) {
      // The receiver has read chunk k-1 (or refused the message).
      auto ready = [&] {
        return m.taken.load(std::memory_order_acquire) >= k ||
               m.mismatch.load(std::memory_order_acquire) != 0;
      };
      if (xal_status_t s = wait_for(&m.taken, ready, peer, "send", deadline, why); s) return s;
      if (m.mismatch.load(std::memory_order_acquire)) {
        *why = "process " + std::to_string(peer) + " expects another size than the " +
               std::to_string(bytes) + " bytes sent";
        finish_cell(rank_, peer, c);
        return XAL_ERROR_COLLECTIVE_MISMATCH;
      }
    }
    const size_t off = k * chunk;
    const size_t n = std::min(chunk, bytes - std::min(bytes, off));
    if (n) std::memcpy(data, in + off, n);
    m.filled.store(static_cast<uint32_t>(k + 1), std::memory_order_release);
    if (k == 0) {
      m.state.store(kOffered, std::memory_order_release);
      ch.posted.fetch_add(1, std::memory_order_release);
      futex_wake(&ch.posted);
    } else {
      futex_wake(&m.filled);
    }
  }
  // The last chunk is in the cell: the receiver takes it when it comes.
  finish_cell(rank_, peer, c);
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::send(void* user, const void* buf, size_t bytes, uint32_t peer,
                                uint64_t tag, uint32_t timeout_ms, char* message,
                                size_t message_size) {
  return guarded_entry("shared memory send", message, message_size, [&]() -> xal_status_t {
    XAL_SHM_P2P_BEGIN("send");
    const auto* in = static_cast<const char*>(buf);
    if (bytes <= t.cell_bytes_) {
      if (const int cell = t.try_claim(peer); cell >= 0) {
        if (xal_status_t s = t.send_now(in, bytes, peer, tag, cell, deadline, &why); s)
          return fail(s);
        return XAL_SUCCESS;
      }
    }
    // A copy, handed over by a thread of its own.
    t.join_streamers(/*all=*/false);
    auto copy = std::make_shared<std::vector<char>>(in, in + bytes);
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lock(t.streamers_mu_);
    t.streamers_.reserve(t.streamers_.size() + 1);  // the push_back below cannot throw
    std::thread thread([&t, copy, done, peer, tag, deadline] {
      try {
        std::string why;
        static_cast<void>(t.send_now(copy->data(), copy->size(), peer, tag, -1, deadline, &why));
      } catch (...) {
        t.abort(&t);  // the message is lost: the transport is broken for every process
      }
      done->store(true);
    });
    t.streamers_.push_back(Streamer{std::move(thread), std::move(done)});
    return XAL_SUCCESS;
  });
}

xal_status_t ShmTransport::recv(void* user, void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                                uint32_t timeout_ms, char* message, size_t message_size) {
  return guarded_entry("shared memory recv", message, message_size, [&]() -> xal_status_t {
    XAL_SHM_P2P_BEGIN("recv");
    Channel& ch = *t.header_->channel(peer, t.rank_);
    uint32_t cell = kMailSlots;
    auto match = [&] {
      for (uint32_t c = 0; c < kMailSlots; ++c) {
        MailSlot& m = ch.cells[c];
        if (m.state.load(std::memory_order_acquire) != kOffered ||
            std::atomic_ref<uint64_t>(m.tag).load(std::memory_order_relaxed) != tag)
          continue;
        uint32_t expected = kOffered;
        if (m.state.compare_exchange_strong(expected, kMatched, std::memory_order_acq_rel)) {
          // Freed and offered again with another tag since the check above
          // (another receiving thread took it meanwhile): give it back.
          if (std::atomic_ref<uint64_t>(m.tag).load(std::memory_order_relaxed) != tag) {
            m.state.store(kOffered, std::memory_order_release);
            futex_wake(&ch.posted);
            continue;
          }
          cell = c;
          return true;
        }
      }
      return false;
    };
    if (xal_status_t s = t.wait_for(&ch.posted, match, peer, "recv", deadline, &why); s)
      return fail(s);
    MailSlot& m = ch.cells[cell];
    const uint64_t sent = std::atomic_ref<uint64_t>(m.bytes).load(std::memory_order_relaxed);
    if (sent != bytes) {
      why = "the receive expects " + std::to_string(bytes) + " bytes from process " +
            std::to_string(peer) + ", the send has " + std::to_string(sent);
      m.mismatch.store(1, std::memory_order_release);
      futex_wake(&m.taken);
      t.finish_cell(peer, t.rank_, cell);
      return fail(XAL_ERROR_COLLECTIVE_MISMATCH);
    }
    const char* data = t.cell_data(peer, t.rank_, cell);
    auto* out = static_cast<char*>(buf);
    const size_t chunk = t.cell_bytes_;
    const size_t chunks = bytes == 0 ? 1 : (bytes + chunk - 1) / chunk;
    for (size_t k = 0; k < chunks; ++k) {
      auto ready = [&] { return m.filled.load(std::memory_order_acquire) >= k + 1; };
      if (xal_status_t s = t.wait_for(&m.filled, ready, peer, "recv", deadline, &why); s)
        return fail(s);
      const size_t off = k * chunk;
      const size_t n = std::min(chunk, bytes - std::min(bytes, off));
      if (n) std::memcpy(out + off, data, n);
      m.taken.store(static_cast<uint32_t>(k + 1), std::memory_order_release);
      futex_wake(&m.taken);
    }
    t.finish_cell(peer, t.rank_, cell);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::torch_backend
