// The transport's point-to-point and split (xal_transport.h, ABI 1.1) over
// MPI: non-blocking sends and matched probes polled like the collectives
// (until done, the timeout, or abort), and MPI_Comm_split once every
// process is known to be in the split.
//
// Matching: a message's 64-bit tag maps to an MPI tag above the
// collectives' own (16 and up, modulo MPI_TAG_UB): messages of one pair of
// processes with the same MPI tag pair in order (MPI's non-overtaking
// rule), and the core's tags of messages in flight at once differ. A
// message over the piece limit travels as several, in order. The receiver
// probes each piece first: one of another size is received into scratch
// memory and reported as XAL_ERROR_COLLECTIVE_MISMATCH (no truncation
// error, which MPI's default handler would make fatal).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <thread>

#include "mpi_transport.hpp"
#include "pieces.hpp"

namespace xal::mpi {

namespace {

constexpr int kFirstP2pTag = 16;

char* at(void* p, size_t bytes) { return static_cast<char*>(p) + bytes; }
const char* at(const void* p, size_t bytes) { return static_cast<const char*>(p) + bytes; }

}  // namespace

int MpiTransport::p2p_tag(uint64_t tag) {
  int ub = tag_ub_.load();
  if (ub == 0) {
    int* value = nullptr;
    int flag = 0;
    {
      MpiLock lock(serialize_);
      MPI_Comm_get_attr(comm_, MPI_TAG_UB, &value, &flag);
    }
    ub = flag && value ? *value : 32767;
    tag_ub_.store(ub);
  }
  return kFirstP2pTag + static_cast<int>(tag % static_cast<uint64_t>(ub - kFirstP2pTag + 1));
}

xal_status_t MpiTransport::broken_status(const char* what, char* message, size_t message_size) {
  std::lock_guard lock(broken_mu_);
  if (broken_ == XAL_SUCCESS) return XAL_SUCCESS;
  std::snprintf(message, message_size, "MPI %s: %s", what, broken_why_.c_str());
  return broken_;
}

xal_status_t MpiTransport::p2p_result(const char* what, xal_status_t s, const std::string& why,
                                      char* message, size_t message_size) {
  if (s == XAL_SUCCESS) return s;
  std::snprintf(message, message_size, "MPI %s: %s", what, why.c_str());
  if (s == XAL_ERROR_COLLECTIVE_MISMATCH) return s;  // that message only
  std::lock_guard lock(broken_mu_);
  if (broken_ == XAL_SUCCESS) broken_ = s, broken_why_ = why;
  return s;
}

xal_status_t MpiTransport::send(void* user, const void* buf, size_t bytes, uint32_t peer,
                                uint64_t tag, uint32_t timeout_ms, char* message,
                                size_t message_size) {
  MpiTransport& t = self(user);
  if (xal_status_t s = t.broken_status("send", message, message_size); s) return s;
  if (t.aborted_.load())
    return t.p2p_result("send", XAL_ERROR_ABORTED, "aborted (xal_comm_abort)", message, message_size);
  const int mpi_tag = t.p2p_tag(tag);
  const size_t pieces = std::max<size_t>(1, piece_count(bytes, t.limit_));
  std::vector<MPI_Request> requests;
  int rc = MPI_SUCCESS;
  {
    MpiLock lock(t.serialize_);
    for (size_t i = 0; i < pieces && rc == MPI_SUCCESS; ++i) {
      const Piece p = bytes ? piece_at(i, bytes, t.limit_) : Piece{};
      rc = MPI_Isend(at(buf, p.offset), static_cast<int>(p.count), MPI_BYTE,
                     static_cast<int>(peer), mpi_tag, t.comm_, &requests.emplace_back());
    }
  }
  std::string why;
  const xal_status_t s =
      rc != MPI_SUCCESS
          ? (why = mpi_error(rc), XAL_ERROR_BACKEND)
          : wait_requests(requests, Clock::now() + std::chrono::milliseconds(timeout_ms),
                          timeout_ms, t.serialize_, &t.aborted_, &why);
  return t.p2p_result("send", s, why, message, message_size);
}

xal_status_t MpiTransport::recv(void* user, void* buf, size_t bytes, uint32_t peer, uint64_t tag,
                                uint32_t timeout_ms, char* message, size_t message_size) {
  MpiTransport& t = self(user);
  if (xal_status_t s = t.broken_status("recv", message, message_size); s) return s;
  const int mpi_tag = t.p2p_tag(tag);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto start = Clock::now();
  const size_t pieces = std::max<size_t>(1, piece_count(bytes, t.limit_));
  for (size_t i = 0; i < pieces; ++i) {
    const Piece p = bytes ? piece_at(i, bytes, t.limit_) : Piece{};
    // Probe until the piece is there (or the deadline, or abort).
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status status;
    for (;;) {
      int found = 0;
      int rc;
      {
        MpiLock lock(t.serialize_);
        rc = MPI_Improbe(static_cast<int>(peer), mpi_tag, t.comm_, &found, &msg, &status);
      }
      if (rc != MPI_SUCCESS)
        return t.p2p_result("recv", XAL_ERROR_BACKEND, mpi_error(rc), message, message_size);
      if (found) break;
      if (t.aborted_.load())
        return t.p2p_result("recv", XAL_ERROR_ABORTED, "aborted (xal_comm_abort)", message,
                            message_size);
      const auto now = Clock::now();
      if (now >= deadline)
        return t.p2p_result("recv", XAL_ERROR_TIMEOUT,
                            "no message from process " + std::to_string(peer) + " within " +
                                std::to_string(timeout_ms) + " ms",
                            message, message_size);
      poll_pause(now - start);
    }
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    const bool fits = static_cast<size_t>(got) == p.count;
    std::unique_ptr<char[]> drop;
    if (!fits) drop = std::make_unique<char[]>(static_cast<size_t>(std::max(got, 1)));
    MPI_Request request = MPI_REQUEST_NULL;
    int rc;
    {
      MpiLock lock(t.serialize_);
      rc = MPI_Imrecv(fits ? at(buf, p.offset) : drop.get(), got, MPI_BYTE, &msg, &request);
    }
    std::string why;
    xal_status_t s = rc != MPI_SUCCESS ? (why = mpi_error(rc), XAL_ERROR_BACKEND)
                                       : wait_requests({&request, 1}, deadline, timeout_ms,
                                                       t.serialize_, &t.aborted_, &why);
    if (s == XAL_SUCCESS && !fits) {
      s = XAL_ERROR_COLLECTIVE_MISMATCH;
      why = "the receive expects " + std::to_string(bytes) + " bytes from process " +
            std::to_string(peer) + ", the send has a different size (a piece of " +
            std::to_string(got) + " bytes where " + std::to_string(p.count) + " were expected)";
    }
    if (s != XAL_SUCCESS) {
      // A receive left pending may still write the scratch memory.
      if (s != XAL_ERROR_COLLECTIVE_MISMATCH && drop) static_cast<void>(drop.release());
      return t.p2p_result("recv", s, why, message, message_size);
    }
  }
  return XAL_SUCCESS;
}

xal_status_t MpiTransport::split(void* user, int32_t color, int32_t key,
                                 xal_comm_transport_t* out_child, char* message,
                                 size_t message_size) {
  MpiTransport& t = self(user);
  *out_child = xal_comm_transport_t{};
  if (xal_status_t s = t.broken_status("split", message, message_size); s) return s;
  // Every process's (color, key), within the timeout of a creation; then
  // every process is in the split and the blocking MPI_Comm_split cannot
  // wait for one that never comes.
  const size_t np = t.ranks_.size();
  auto mine = std::make_unique<int[]>(2);
  mine[0] = color < 0 ? -1 : color;
  mine[1] = key;
  auto all = std::make_unique<int[]>(2 * np);
  MPI_Request request = MPI_REQUEST_NULL;
  int rc;
  {
    MpiLock lock(t.serialize_);
    rc = MPI_Iallgather(mine.get(), 2, MPI_INT, all.get(), 2, MPI_INT, t.comm_, &request);
  }
  std::string why;
  // The entry has no timeout argument: XAL_COMM_TIMEOUT_MS, else 300 s.
  uint32_t split_timeout_ms = 300000;
  if (const char* v = std::getenv("XAL_COMM_TIMEOUT_MS"))
    if (const unsigned long n = std::strtoul(v, nullptr, 10); n > 0 && n <= 0xffffffffUL)
      split_timeout_ms = static_cast<uint32_t>(n);
  xal_status_t s = rc != MPI_SUCCESS ? (why = mpi_error(rc), XAL_ERROR_BACKEND)
                                     : wait_request(request, split_timeout_ms, t.serialize_,
                                                    &t.aborted_, &why);
  if (s != XAL_SUCCESS) {
    static_cast<void>(mine.release());  // a pending request may still use them
    static_cast<void>(all.release());
    return t.p2p_result("split", s, why, message, message_size);
  }
  MPI_Comm child = MPI_COMM_NULL;
  {
    MpiLock lock(t.serialize_);
    rc = MPI_Comm_split(t.comm_, color < 0 ? MPI_UNDEFINED : color, key, &child);
  }
  if (rc != MPI_SUCCESS) return t.p2p_result("split", XAL_ERROR_BACKEND, mpi_error(rc), message, message_size);
  if (color < 0) return XAL_SUCCESS;
  // The child's processes as MPI_Comm_split orders them: by key, then rank.
  std::vector<size_t> members;
  for (size_t p = 0; p < np; ++p)
    if (all[2 * p] == color) members.push_back(p);
  std::stable_sort(members.begin(), members.end(),
                   [&](size_t a, size_t b) { return all[2 * a + 1] < all[2 * b + 1]; });
  std::vector<uint32_t> ranks;
  int child_rank = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    ranks.push_back(t.ranks_[members[i]]);
    if (members[i] == static_cast<size_t>(t.rank_)) child_rank = static_cast<int>(i);
  }
  auto made = std::make_unique<MpiTransport>(child, child_rank, std::move(ranks), t.serialize_,
                                             t.limit_);
  *out_child = made->table();
  static_cast<void>(made.release());  // the child's release deletes it
  return XAL_SUCCESS;
}

}  // namespace xal::mpi
