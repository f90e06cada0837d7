// A fake in-process transport for xal_comm_create_transport's tests: two
// "processes" are two sets of testdev devices in this process, linked by a
// Hub (threads meeting in memory). Shared by transport_comm_test.cpp and
// transport_reduce_test.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "xal/xal_transport.h"
#include "xal_common/reduce.hpp"

namespace transport_fake {

using namespace xal_test;

// The meeting point of the fake processes. Each transport call is: deposit
// pointers, meet, read the others, meet again.
struct Hub {
  explicit Hub(uint32_t n) : size(n), a(n), b(n), c(n) {}
  const uint32_t size;
  std::mutex mu;
  std::condition_variable cv;
  uint32_t count = 0;
  uint64_t gen = 0;
  std::atomic<bool> aborted{false};
  std::vector<const void*> a;
  std::vector<const size_t*> b, c;

  xal_status_t meet(uint32_t timeout_ms, char* msg, size_t msg_size) {
    std::unique_lock lock(mu);
    const uint64_t g = gen;
    if (++count == size) {
      count = 0;
      ++gen;
      cv.notify_all();
      return XAL_SUCCESS;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (gen == g) {
      if (aborted) return snprintf(msg, msg_size, "fake: aborted"), XAL_ERROR_ABORTED;
      if (cv.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                     std::chrono::milliseconds(10))) ==
              std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline)
        return snprintf(msg, msg_size, "fake: peer missing"), XAL_ERROR_TIMEOUT;
    }
    return XAL_SUCCESS;
  }
};

struct Proc {
  Hub* hub;
  uint32_t me;
  std::vector<uint32_t> ranks;
  int released = 0;
  // Calls of each entry, and the last reduce_scatter's counts.
  std::atomic<int> allreduces{0}, reduces{0}, reduce_scatters{0};
  // What allreduce returns at once instead of exchanging (XAL_SUCCESS: it
  // exchanges).
  std::atomic<xal_status_t> fail_with{XAL_SUCCESS};
  // The allreduce call (numbered from 1) that returns only `slow_ms` after
  // its exchange is done (0: none).
  std::atomic<int> slow_call{0};
  int slow_ms = 0;
  std::vector<size_t> scatter_counts;
  xal_comm_transport_t t{};
};

inline Proc& P(void* u) { return *static_cast<Proc*>(u); }

#define TRANSPORT_FAKE_MEET(p)                                           \
  if (xal_status_t s_ = p.hub->meet(ms, msg, msg_size); s_) return s_

inline xal_status_t allreduce(void* u, const void* send, void* recv, size_t count,
                              xal_dtype_t dt, xal_op_t op, uint32_t ms, char* msg,
                              size_t msg_size) {
  Proc& p = P(u);
  const int call = ++p.allreduces;
  if (const xal_status_t f = p.fail_with; f != XAL_SUCCESS)
    return snprintf(msg, msg_size, "fake: injected failure"), f;
  p.hub->a[p.me] = send;
  TRANSPORT_FAKE_MEET(p);
  std::vector<char> tmp(count * xal::common::dtype_size(dt));
  void* dst[] = {tmp.data()};
  xal::common::reduce(dt, op, dst, p.hub->a, count, 1);
  TRANSPORT_FAKE_MEET(p);
  std::memcpy(recv, tmp.data(), tmp.size());
  if (call == p.slow_call) std::this_thread::sleep_for(std::chrono::milliseconds(p.slow_ms));
  return XAL_SUCCESS;
}

inline xal_status_t broadcast(void* u, void* buf, size_t bytes, uint32_t root, uint32_t ms,
                              char* msg, size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = buf;
  TRANSPORT_FAKE_MEET(p);
  if (p.me != root) std::memcpy(buf, p.hub->a[root], bytes);
  TRANSPORT_FAKE_MEET(p);
  return XAL_SUCCESS;
}

inline xal_status_t allgatherv(void* u, void* recv, const size_t* bytes, const size_t* displs,
                               uint32_t ms, char* msg, size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = recv;
  TRANSPORT_FAKE_MEET(p);
  for (uint32_t q = 0; q < p.hub->size; ++q)
    if (q != p.me)
      std::memcpy(static_cast<char*>(recv) + displs[q],
                  static_cast<const char*>(p.hub->a[q]) + displs[q], bytes[q]);
  TRANSPORT_FAKE_MEET(p);
  return XAL_SUCCESS;
}

inline xal_status_t alltoallv(void* u, const void* send, const size_t* sb, const size_t* sd,
                              void* recv, const size_t*, const size_t* rd, uint32_t ms,
                              char* msg, size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = send;
  p.hub->b[p.me] = sb;
  p.hub->c[p.me] = sd;
  TRANSPORT_FAKE_MEET(p);
  for (uint32_t q = 0; q < p.hub->size; ++q)
    std::memcpy(static_cast<char*>(recv) + rd[q],
                static_cast<const char*>(p.hub->a[q]) + p.hub->c[q][p.me], p.hub->b[q][p.me]);
  TRANSPORT_FAKE_MEET(p);
  return XAL_SUCCESS;
}

// Only the root's process receives.
inline xal_status_t reduce(void* u, const void* send, void* recv, size_t count, xal_dtype_t dt,
                           xal_op_t op, uint32_t root, uint32_t ms, char* msg, size_t msg_size) {
  Proc& p = P(u);
  ++p.reduces;
  p.hub->a[p.me] = send;
  TRANSPORT_FAKE_MEET(p);
  std::vector<char> tmp(p.me == root ? count * xal::common::dtype_size(dt) : 0);
  void* dst[] = {tmp.data()};
  if (p.me == root) xal::common::reduce(dt, op, dst, p.hub->a, count, 1);
  TRANSPORT_FAKE_MEET(p);
  if (p.me == root) std::memcpy(recv, tmp.data(), tmp.size());
  return XAL_SUCCESS;
}

// Each process reduces its own block of every process's send.
inline xal_status_t reduce_scatter(void* u, const void* send, void* recv, const size_t* counts,
                                   xal_dtype_t dt, xal_op_t op, uint32_t ms, char* msg,
                                   size_t msg_size) {
  Proc& p = P(u);
  ++p.reduce_scatters;
  p.scatter_counts.assign(counts, counts + p.hub->size);
  const size_t es = xal::common::dtype_size(dt);
  size_t offset = 0;
  for (uint32_t q = 0; q < p.me; ++q) offset += counts[q];
  p.hub->a[p.me] = send;
  TRANSPORT_FAKE_MEET(p);
  std::vector<const void*> srcs;
  for (const void* s : p.hub->a) srcs.push_back(static_cast<const char*>(s) + offset * es);
  std::vector<char> tmp(counts[p.me] * es);
  void* dst[] = {tmp.data()};
  xal::common::reduce(dt, op, dst, srcs, counts[p.me], 1);
  TRANSPORT_FAKE_MEET(p);
  std::memcpy(recv, tmp.data(), tmp.size());
  return XAL_SUCCESS;
}

#undef TRANSPORT_FAKE_MEET

inline void abort_fn(void* u) {
  P(u).hub->aborted = true;
  P(u).hub->cv.notify_all();
}
inline void release_fn(void* u) { ++P(u).released; }

// A fake process over testdev devices `indices`.
struct Side : RankSet {
  Proc proc;

  Side(Hub& hub, uint32_t me, std::vector<uint32_t> ranks) {
    proc.hub = &hub;
    proc.me = me;
    proc.ranks = std::move(ranks);
    xal_comm_transport_t& t = proc.t;
    t.struct_size = sizeof t;
    t.user = &proc;
    t.process_rank = me;
    t.process_count = hub.size;
    t.ranks_per_process = proc.ranks.data();
    t.allreduce = allreduce;
    t.broadcast = broadcast;
    t.allgatherv = allgatherv;
    t.alltoallv = alltoallv;
    t.abort = abort_fn;
    t.release = release_fn;
  }
  // Fills the entries added after the first version of the table.
  void add_reduce_entries() {
    proc.t.reduce = reduce;
    proc.t.reduce_scatter = reduce_scatter;
  }
  void open(const std::vector<uint32_t>& indices, size_t bytes) {
    for (uint32_t i : indices) ASSERT_NO_FATAL_FAILURE(add_rank(i, bytes));
  }
  xal_status_t create(uint32_t timeout_ms = 0) {
    comm.resize(dev.size());
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = timeout_ms;
    return xal_comm_create_transport(dev.data(), static_cast<uint32_t>(dev.size()), &o, &proc.t,
                                     comm.data());
  }
  // Every stream's synchronize gives `status` (a failed call on the
  // stream), then XAL_SUCCESS (reported once).
  void sync(xal_status_t status = XAL_SUCCESS) {
    for (xal_stream_t s : stream) {
      EXPECT_EQ(xal_stream_synchronize(s), status) << last_error().message;
      if (status != XAL_SUCCESS) {
        EXPECT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
      }
    }
  }
  void destroy() {
    for (xal_comm_t c : comm) EXPECT_EQ(xal_comm_destroy(c), XAL_SUCCESS);
    comm.clear();
  }
};

// Three ranks: process 0 has testdev devices 0 and 1, process 1 device 2.
class TransportComm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_XAL_OK(init(plugin("testdev")));
    uint32_t count = 0;
    ASSERT_XAL_OK(xal_device_count(&count));
    ASSERT_GE(count, 3u);
  }
  void TearDown() override { EXPECT_EQ(xal_shutdown(), XAL_SUCCESS); }
  void open(size_t bytes, uint32_t timeout_ms = 0) {
    a.open({0, 1}, bytes);
    b.open({2}, bytes);
    ASSERT_XAL_OK(a.create(timeout_ms));
    ASSERT_XAL_OK(b.create(timeout_ms));
  }
  // Global rank r's side and local index.
  std::pair<Side*, size_t> at(size_t r) { return r < 2 ? std::pair{&a, r} : std::pair{&b, r - 2}; }
  // Runs `call(side, local, global)` on every rank, each process from its
  // own thread (the host steps block until every process arrives).
  // Every stream's synchronize then gives `status`.
  template <class F>
  void each(F call, xal_status_t status = XAL_SUCCESS) {
    std::thread other([&] {
      for (size_t i = 0; i < b.dev.size(); ++i) call(b, i, 2 + i);
    });
    for (size_t i = 0; i < a.dev.size(); ++i) call(a, i, i);
    other.join();
    a.sync(status);
    b.sync(status);
  }

  ScopedEnv devices_{"XAL_TESTDEV_DEVICES", "3"};
  ScopedEnv async_{"XAL_TESTDEV_ASYNC", "1"};  // host functions on stream threads
  Hub hub{2};
  Side a{hub, 0, {2, 1}}, b{hub, 1, {2, 1}};
};

inline std::vector<int32_t> values(size_t rank, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(rank * 1000 + i % 97);
  return v;
}

}  // namespace transport_fake
