#include "shm_transport.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

#include "shm_layout.hpp"
#include "xal_common/reduce.hpp"

namespace xal::torch_backend {

using namespace shm;

namespace {

std::string errno_text(const char* what, const std::string& name) {
  return std::string(what) + "(" + name + "): " + std::strerror(errno);
}

}  // namespace

std::unique_ptr<ShmTransport> ShmTransport::open(const std::string& name, bool creator,
                                                 uint32_t rank, uint32_t size,
                                                 size_t slot_bytes) {
  if (size == 0 || rank >= size) throw std::runtime_error("xal shm transport: bad rank/size");
  slot_bytes = std::max<size_t>(align_up(slot_bytes, 64 * size_t{size}), 64 * size_t{size});
  const Layout layout(size, slot_bytes);
  const size_t total = layout.total;
  const int fd = creator ? shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                         : shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw std::runtime_error("xal shm transport: " + errno_text("shm_open", name));
  if (creator && ftruncate(fd, static_cast<off_t>(total)) != 0) {
    const std::string why = errno_text("ftruncate", name);
    close(fd);
    shm_unlink(name.c_str());
    throw std::runtime_error("xal shm transport: " + why);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != total) {
    close(fd);
    if (creator) shm_unlink(name.c_str());
    throw std::runtime_error("xal shm transport: segment " + name + " has " +
                             std::to_string(st.st_size) + " bytes, expected " +
                             std::to_string(total) + " (processes disagree on the group size "
                             "or XAL_TORCH_SHM_SLOT_BYTES)");
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    if (creator) shm_unlink(name.c_str());
    throw std::runtime_error("xal shm transport: " + errno_text("mmap", name));
  }
  auto* h = static_cast<Header*>(base);
  if (creator) {
    new (h) Header{};
    h->size = size;
    for (uint32_t p = 0; p < size; ++p) new (&h->procs()[p]) ProcSlot{};
    for (uint32_t c = 0; c < size * size; ++c) new (h->channel(0, 0) + c) Channel{};
    h->slot_bytes = slot_bytes;
    h->magic = kMagic;
  } else if (h->magic != kMagic || h->size != size || h->slot_bytes != slot_bytes) {
    munmap(base, total);
    throw std::runtime_error("xal shm transport: segment " + name +
                             " was made for another group (size or slot bytes differ)");
  }
  ProcSlot& me = h->procs()[rank];
  me.pid = static_cast<int32_t>(getpid());
  me.pidns = pid_namespace();
  h->attached.fetch_add(1);
  return std::unique_ptr<ShmTransport>(
      new ShmTransport(name, creator, rank, size, slot_bytes, base, total));
}

ShmTransport::ShmTransport(std::string name, bool creator, uint32_t rank, uint32_t size,
                           size_t slot_bytes, void* base, size_t bytes)
    : name_(std::move(name)), creator_(creator), rank_(rank), size_(size),
      slot_bytes_(slot_bytes), base_(base), bytes_(bytes), header_(static_cast<Header*>(base)),
      data_(static_cast<char*>(base) + Layout(size, slot_bytes).header_bytes),
      cell_bytes_(Layout(size, slot_bytes).cell_bytes),
      p2p_data_(data_ + Layout(size, slot_bytes).p2p_offset),
      ranks_per_process_(size, 1) {}

ShmTransport::~ShmTransport() {
  // Messages still being handed over get a while to reach their receivers;
  // then the transport is aborted, so that their streamers give up.
  const int64_t grace = now_ns() + kCloseGraceNs;
  for (;;) {
    {
      std::lock_guard lock(streamers_mu_);
      if (std::all_of(streamers_.begin(), streamers_.end(),
                      [](const Streamer& s) { return s.done->load(); }))
        break;
    }
    if (now_ns() >= grace) {
      aborted_.store(true);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  join_streamers(/*all=*/true);
  if (creator_ && !unlinked_) shm_unlink(name_.c_str());
  munmap(base_, bytes_);
}

void ShmTransport::wait_attached_and_unlink(uint32_t timeout_ms) {
  if (!creator_) return;
  const int64_t deadline = now_ns() + int64_t{timeout_ms} * 1'000'000;
  while (header_->attached.load() < size_) {
    if (now_ns() >= deadline) {
      throw std::runtime_error("xal shm transport: only " +
                               std::to_string(header_->attached.load()) + " of " +
                               std::to_string(size_) + " processes opened " + name_ +
                               " within " + std::to_string(timeout_ms) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  shm_unlink(name_.c_str());
  unlinked_ = true;
}

xal_comm_transport_t ShmTransport::table() {
  xal_comm_transport_t t{};
  t.struct_size = sizeof t;
  t.user = this;
  t.process_rank = rank_;
  t.process_count = size_;
  t.ranks_per_process = ranks_per_process_.data();
  t.allreduce = &ShmTransport::allreduce;
  t.broadcast = &ShmTransport::broadcast;
  t.allgatherv = &ShmTransport::allgatherv;
  t.alltoallv = &ShmTransport::alltoallv;
  t.abort = &ShmTransport::abort;
  t.release = &ShmTransport::release;
  // reduce and reduce_scatter: NULL, xal runs them as an allreduce.
  t.send = &ShmTransport::send;
  t.recv = &ShmTransport::recv;
  t.split = &ShmTransport::split;  // shm_split.cpp
  return t;
}

char* ShmTransport::slot(uint64_t round, uint32_t p) const {
  return data_ + ((round & 1) * (size_t{size_} + 1) + p) * slot_bytes_;
}
char* ShmTransport::result(uint64_t round) const { return slot(round, size_); }

void ShmTransport::set_broken(xal_status_t s, const std::string& why) {
  {
    std::lock_guard lock(broken_mu_);
    if (broken_ == XAL_SUCCESS) broken_ = s, broken_why_ = why;
  }
  uint32_t expected = 0;
  if (header_->broken.compare_exchange_strong(expected, rank_ + 1)) {
    header_->broken_status.store(s);
    ProcSlot& me = header_->procs()[rank_];
    std::snprintf(me.why, sizeof me.why, "%s", why.c_str());
    std::atomic_ref<uint32_t>(me.why_ready).store(1, std::memory_order_release);
  }
  for (uint32_t q = 0; q < size_; ++q) futex_wake(&header_->procs()[q].arrived);
}

xal_status_t ShmTransport::check_broken(std::string* why) {
  {
    std::lock_guard lock(broken_mu_);
    if (broken_ != XAL_SUCCESS) return *why = broken_why_, broken_;
  }
  if (aborted_.load()) {
    set_broken(XAL_ERROR_ABORTED, "aborted (xal_comm_abort)");
    std::lock_guard lock(broken_mu_);
    return *why = broken_why_, broken_;
  }
  const uint32_t b = header_->broken.load();
  if (b != 0 && b != rank_ + 1) {
    ProcSlot& other = header_->procs()[b - 1];
    std::string detail = "process " + std::to_string(b - 1) + " failed";
    if (std::atomic_ref<uint32_t>(other.why_ready).load(std::memory_order_acquire))
      detail += std::string(": ") + std::string(other.why, strnlen(other.why, sizeof other.why));
    std::lock_guard lock(broken_mu_);
    if (broken_ == XAL_SUCCESS) broken_ = XAL_ERROR_ABORTED, broken_why_ = detail;
    return *why = broken_why_, broken_;
  }
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::barrier(const char* what, int64_t deadline, std::string* why) {
  ProcSlot* procs = header_->procs();
  const uint32_t target = ++next_;
  procs[rank_].arrived.store(target);
  if (procs[rank_].waiters.load() > 0) futex_wake(&procs[rank_].arrived);
  const uint64_t my_ns = procs[rank_].pidns;
  int64_t next_liveness = 0;
  for (uint32_t q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    ProcSlot& peer = procs[q];
    int spins = 0;
    for (;;) {
      const uint32_t seen = peer.arrived.load(std::memory_order_acquire);
      if (static_cast<int32_t>(seen - target) >= 0) break;
      if (++spins < kSpins) {
        cpu_relax();
        continue;
      }
      if (xal_status_t s = check_broken(why); s) return s;
      const int64_t now = now_ns();
      if (now >= deadline) {
        *why = std::string("process ") + std::to_string(q) + " did not reach " + what +
               " in time (timeout)";
        set_broken(XAL_ERROR_TIMEOUT, *why);
        return XAL_ERROR_TIMEOUT;
      }
      if (now >= next_liveness) {
        next_liveness = now + kLivenessPeriodNs;
        if (my_ns != 0 && peer.pidns == my_ns && process_ended(peer.pid)) {
          // It may have arrived, finished the call and exited since `seen`
          // was read (a barrier followed by exit): that is no failure.
          if (static_cast<int32_t>(peer.arrived.load(std::memory_order_acquire) - target) >= 0)
            break;
          *why = "process " + std::to_string(q) + " (pid " + std::to_string(peer.pid) +
                 ") exited during " + what;
          set_broken(XAL_ERROR_ABORTED, *why);
          return XAL_ERROR_ABORTED;
        }
      }
      peer.waiters.fetch_add(1);
      futex_wait(&peer.arrived, seen, std::min(deadline - now, kFutexSliceNs));
      peer.waiters.fetch_sub(1);
    }
  }
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::finish(const char* what, xal_status_t s, const std::string& why,
                                  char* message, size_t message_size) {
  if (s != XAL_SUCCESS && message && message_size)
    std::snprintf(message, message_size, "shared memory %s: %s", what, why.c_str());
  return s;
}

#define XAL_SHM_BARRIER(what)                                   \
  do {                                                          \
    if (xal_status_t s_ = t.barrier(what, deadline, &why); s_) \
      return t.finish(what, s_, why, message, message_size);    \
  } while (0)

#define XAL_SHM_BEGIN(what)                                                        \
  ShmTransport& t = *static_cast<ShmTransport*>(user);                             \
  std::string why;                                                                 \
  if (xal_status_t s0_ = t.check_broken(&why); s0_)                                \
    return t.finish(what, s0_, why, message, message_size);                        \
  const int64_t deadline = now_ns() + int64_t{timeout_ms} * 1'000'000

xal_status_t ShmTransport::allreduce(void* user, const void* send, void* recv, size_t count,
                                     xal_dtype_t dtype, xal_op_t op, uint32_t timeout_ms,
                                     char* message, size_t message_size) {
  XAL_SHM_BEGIN("allreduce");
  const size_t es = common::dtype_size(dtype);
  if (es == 0 || op == XAL_OP_AVG)
    return t.finish("allreduce", XAL_ERROR_INVALID_ARGUMENT, "bad dtype or op", message,
                    message_size);
  if (count * es >= kZeroCopyMinBytes) {
    bool done = false;
    if (xal_status_t s = t.zero_copy_allreduce(send, recv, count, dtype, op, deadline, &why,
                                               &done);
        s != XAL_SUCCESS)
      return t.finish("allreduce", s, why, message, message_size);
    if (done) return XAL_SUCCESS;
  }
  const size_t per_round = t.slot_bytes_ / es;
  const auto* in = static_cast<const char*>(send);
  auto* out = static_cast<char*>(recv);
  // Each process reduces one share of every round. Its own share never
  // passes through the segment: it is read from `send` and written to
  // `recv` as well as to the result slot (fewer bytes copied per call).
  // Rounds overlap: after barrier k a process copies out round k-2's
  // result, reduces its share of round k-1 and copies in round k (the
  // buffer set of round k-2, which nobody reads any more), so that a call
  // of R rounds passes R+1 barriers instead of 2R.
  const size_t rounds = (count + per_round - 1) / per_round;
  const uint64_t r0 = t.round_;
  t.round_ += rounds;
  struct Share {
    size_t off, n, start, end;
  };
  auto share = [&](size_t k) {
    Share sh{};
    sh.off = k * per_round;
    sh.n = std::min(per_round, count - sh.off);
    const size_t base = sh.n / t.size_, rem = sh.n % t.size_;
    sh.start = t.rank_ * base + std::min<size_t>(t.rank_, rem);
    sh.end = sh.start + base + (t.rank_ < rem ? 1 : 0);
    return sh;
  };
  auto copy_in = [&](size_t k) {
    const Share sh = share(k);
    char* mine = t.slot(r0 + k, t.rank_);
    std::memcpy(mine, in + sh.off * es, sh.start * es);
    std::memcpy(mine + sh.end * es, in + (sh.off + sh.end) * es, (sh.n - sh.end) * es);
  };
  auto reduce_share = [&](size_t k) {
    const Share sh = share(k);
    if (sh.end == sh.start) return;
    std::vector<const void*> srcs(t.size_);
    for (uint32_t q = 0; q < t.size_; ++q)
      srcs[q] = q == t.rank_ ? in + (sh.off + sh.start) * es : t.slot(r0 + k, q) + sh.start * es;
    void* dst[] = {t.result(r0 + k) + sh.start * es, out + (sh.off + sh.start) * es};
    common::reduce(dtype, op, dst, srcs, sh.end - sh.start, 1);
  };
  auto copy_out = [&](size_t k) {
    const Share sh = share(k);
    std::memcpy(out + sh.off * es, t.result(r0 + k), sh.start * es);
    std::memcpy(out + (sh.off + sh.end) * es, t.result(r0 + k) + sh.end * es,
                (sh.n - sh.end) * es);
  };
  if (rounds == 0) return XAL_SUCCESS;
  copy_in(0);
  for (size_t k = 1; k <= rounds; ++k) {
    XAL_SHM_BARRIER("allreduce");
    if (k >= 2) copy_out(k - 2);
    reduce_share(k - 1);
    if (k < rounds) copy_in(k);
  }
  XAL_SHM_BARRIER("allreduce");
  copy_out(rounds - 1);
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::broadcast(void* user, void* buf, size_t bytes, uint32_t root,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  XAL_SHM_BEGIN("broadcast");
  auto* b = static_cast<char*>(buf);
  for (size_t off = 0; off < bytes; off += t.slot_bytes_) {
    const size_t n = std::min(t.slot_bytes_, bytes - off);
    const uint64_t r = t.round_++;
    if (t.rank_ == root) std::memcpy(t.result(r), b + off, n);
    XAL_SHM_BARRIER("broadcast");
    if (t.rank_ != root) std::memcpy(b + off, t.result(r), n);
  }
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::allgatherv(void* user, void* recv, const size_t* bytes,
                                      const size_t* displs, uint32_t timeout_ms, char* message,
                                      size_t message_size) {
  XAL_SHM_BEGIN("allgatherv");
  auto* out = static_cast<char*>(recv);
  size_t most = 0;
  for (uint32_t p = 0; p < t.size_; ++p) most = std::max(most, bytes[p]);
  auto piece = [&](uint32_t p, size_t off) {
    return bytes[p] > off ? std::min(t.slot_bytes_, bytes[p] - off) : size_t{0};
  };
  for (size_t off = 0; off < most; off += t.slot_bytes_) {
    const uint64_t r = t.round_++;
    std::memcpy(t.slot(r, t.rank_), out + displs[t.rank_] + off, piece(t.rank_, off));
    XAL_SHM_BARRIER("allgatherv");
    for (uint32_t p = 0; p < t.size_; ++p)
      if (p != t.rank_) std::memcpy(out + displs[p] + off, t.slot(r, p), piece(p, off));
  }
  return XAL_SUCCESS;
}

xal_status_t ShmTransport::alltoallv(void* user, const void* send, const size_t* send_bytes,
                                     const size_t* send_displs, void* recv,
                                     const size_t* recv_bytes, const size_t* recv_displs,
                                     uint32_t timeout_ms, char* message, size_t message_size) {
  XAL_SHM_BEGIN("alltoallv");
  const size_t sub = t.slot_bytes_ / t.size_ / 64 * 64;
  uint64_t local = 0;
  for (uint32_t q = 0; q < t.size_; ++q)
    local = std::max<uint64_t>({local, send_bytes[q], recv_bytes[q]});
  // Every process's largest piece, so that all run as many rounds.
  const uint64_t r0 = t.round_++;
  ProcSlot* procs = t.header_->procs();
  procs[t.rank_].scratch[r0 & 1].store(local, std::memory_order_relaxed);
  XAL_SHM_BARRIER("alltoallv");
  uint64_t most = 0;
  for (uint32_t q = 0; q < t.size_; ++q)
    most = std::max(most, procs[q].scratch[r0 & 1].load(std::memory_order_relaxed));
  const auto* in = static_cast<const char*>(send);
  auto* out = static_cast<char*>(recv);
  auto piece = [&](size_t total, size_t off) {
    return total > off ? std::min(sub, total - off) : size_t{0};
  };
  for (size_t off = 0; off < most; off += sub) {
    const uint64_t r = t.round_++;
    char* mine = t.slot(r, t.rank_);
    for (uint32_t q = 0; q < t.size_; ++q)
      std::memcpy(mine + q * sub, in + send_displs[q] + off, piece(send_bytes[q], off));
    XAL_SHM_BARRIER("alltoallv");
    for (uint32_t p = 0; p < t.size_; ++p)
      std::memcpy(out + recv_displs[p] + off, t.slot(r, p) + t.rank_ * sub,
                  piece(recv_bytes[p], off));
  }
  return XAL_SUCCESS;
}

void ShmTransport::abort(void* user) {
  ShmTransport& t = *static_cast<ShmTransport*>(user);
  t.aborted_.store(true);
  // Tell the others at once; the leader thread records it for itself at
  // its next check.
  uint32_t expected = 0;
  if (t.header_->broken.compare_exchange_strong(expected, t.rank_ + 1))
    t.header_->broken_status.store(XAL_ERROR_ABORTED);
  for (uint32_t q = 0; q < t.size_; ++q) futex_wake(&t.header_->procs()[q].arrived);
}

void ShmTransport::release(void* user) { delete static_cast<ShmTransport*>(user); }

}  // namespace xal::torch_backend
