// Communicators across processes (xal_comm_create_transport) over a fake
// in-process transport: two "processes" are two sets of testdev devices in
// this process, linked by a Hub (threads meeting in memory).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "xal/xal_transport.h"
#include "xal_common/reduce.hpp"

using namespace xal_test;

namespace {

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
  xal_comm_transport_t t{};
};

Proc& P(void* u) { return *static_cast<Proc*>(u); }

#define MEET(p)                                                          \
  if (xal_status_t s_ = p.hub->meet(ms, msg, msg_size); s_) return s_

xal_status_t allreduce(void* u, const void* send, void* recv, size_t count, xal_dtype_t dt,
                       xal_op_t op, uint32_t ms, char* msg, size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = send;
  MEET(p);
  std::vector<char> tmp(count * xal::common::dtype_size(dt));
  void* dst[] = {tmp.data()};
  xal::common::reduce(dt, op, dst, p.hub->a, count, 1);
  MEET(p);
  std::memcpy(recv, tmp.data(), tmp.size());
  return XAL_SUCCESS;
}

xal_status_t broadcast(void* u, void* buf, size_t bytes, uint32_t root, uint32_t ms, char* msg,
                       size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = buf;
  MEET(p);
  if (p.me != root) std::memcpy(buf, p.hub->a[root], bytes);
  MEET(p);
  return XAL_SUCCESS;
}

xal_status_t allgatherv(void* u, void* recv, const size_t* bytes, const size_t* displs,
                        uint32_t ms, char* msg, size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = recv;
  MEET(p);
  for (uint32_t q = 0; q < p.hub->size; ++q)
    if (q != p.me)
      std::memcpy(static_cast<char*>(recv) + displs[q],
                  static_cast<const char*>(p.hub->a[q]) + displs[q], bytes[q]);
  MEET(p);
  return XAL_SUCCESS;
}

xal_status_t alltoallv(void* u, const void* send, const size_t* sb, const size_t* sd, void* recv,
                       const size_t*, const size_t* rd, uint32_t ms, char* msg,
                       size_t msg_size) {
  Proc& p = P(u);
  p.hub->a[p.me] = send;
  p.hub->b[p.me] = sb;
  p.hub->c[p.me] = sd;
  MEET(p);
  for (uint32_t q = 0; q < p.hub->size; ++q)
    std::memcpy(static_cast<char*>(recv) + rd[q],
                static_cast<const char*>(p.hub->a[q]) + p.hub->c[q][p.me], p.hub->b[q][p.me]);
  MEET(p);
  return XAL_SUCCESS;
}

void abort_fn(void* u) {
  P(u).hub->aborted = true;
  P(u).hub->cv.notify_all();
}
void release_fn(void* u) { ++P(u).released; }

// A fake process over testdev devices `indices`.
struct Side {
  Proc proc;
  std::vector<xal_device_t> dev;
  std::vector<xal_stream_t> stream;
  std::vector<xal_comm_t> comm;
  std::vector<xal_devptr_t> send, recv;

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
  void open(const std::vector<uint32_t>& indices, size_t bytes) {
    for (uint32_t i : indices) {
      xal_device_t d;
      ASSERT_XAL_OK(xal_device_get(i, &d));
      dev.push_back(d);
      xal_stream_t s;
      ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
      stream.push_back(s);
      xal_devptr_t a, b;
      ASSERT_XAL_OK(xal_mem_alloc(d, bytes, &a));
      ASSERT_XAL_OK(xal_mem_alloc(d, bytes, &b));
      send.push_back(a);
      recv.push_back(b);
    }
  }
  xal_status_t create(uint32_t timeout_ms = 0) {
    comm.resize(dev.size());
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = timeout_ms;
    return xal_comm_create_transport(dev.data(), static_cast<uint32_t>(dev.size()), &o, &proc.t,
                                     comm.data());
  }
  void put(size_t r, const std::vector<int32_t>& v) {
    ASSERT_XAL_OK(xal_memcpy_htod(stream[r], send[r], v.data(), v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
  }
  std::vector<int32_t> get(size_t r, size_t n) {
    std::vector<int32_t> v(n);
    EXPECT_EQ(xal_memcpy_dtoh(stream[r], v.data(), recv[r], n * 4), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_synchronize(stream[r]), XAL_SUCCESS);
    return v;
  }
  void sync() {
    for (xal_stream_t s : stream) EXPECT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  }
  xal_status_t async_error(size_t r) {
    xal_status_t e = XAL_SUCCESS;
    EXPECT_EQ(xal_comm_get_async_error(comm[r], &e), XAL_SUCCESS);
    return e;
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
  template <class F>
  void each(F call) {
    std::thread other([&] {
      for (size_t i = 0; i < b.dev.size(); ++i) call(b, i, 2 + i);
    });
    for (size_t i = 0; i < a.dev.size(); ++i) call(a, i, i);
    other.join();
    a.sync();
    b.sync();
  }

  ScopedEnv devices_{"XAL_TESTDEV_DEVICES", "3"};
  ScopedEnv async_{"XAL_TESTDEV_ASYNC", "1"};  // host functions on stream threads
  Hub hub{2};
  Side a{hub, 0, {2, 1}}, b{hub, 1, {2, 1}};
};

std::vector<int32_t> values(size_t rank, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(rank * 1000 + i % 97);
  return v;
}

}  // namespace

TEST_F(TransportComm, InfoReportsGlobalRanks) {
  ASSERT_NO_FATAL_FAILURE(open(64));
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_XAL_OK(xal_comm_get_info(side->comm[i], &info));
    EXPECT_EQ(info.rank, r);
    EXPECT_EQ(info.size, 3u);
    EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_MPI));
    EXPECT_NE(std::string(info.description).find("2 processes"), std::string::npos);
  }
  // Each process's transport is released with the last of its comms.
  EXPECT_EQ(xal_comm_destroy(a.comm[0]), XAL_SUCCESS);
  EXPECT_EQ(a.proc.released, 0);
  EXPECT_EQ(xal_comm_destroy(a.comm[1]), XAL_SUCCESS);
  a.comm.clear();
  EXPECT_EQ(a.proc.released, 1);
  EXPECT_EQ(b.proc.released, 0);
  b.destroy();
  EXPECT_EQ(b.proc.released, 1);
}

TEST_F(TransportComm, EveryCollectiveMatchesTheReference) {
  constexpr size_t n = 301;
  ASSERT_NO_FATAL_FAILURE(open(n * 3 * 4));
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    side->put(i, values(r, n * 3));
  }
  auto run = [&](auto call) {
    each([&](Side& s, size_t i, size_t g) {
      EXPECT_EQ(call(s, i, g), XAL_SUCCESS) << last_error().message;
    });
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_SUCCESS);
  };
  // allreduce sum
  run([](Side& s, size_t i, size_t) {
    return xal_allreduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, n);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>(k % 97));
  }
  // max
  run([](Side& s, size_t i, size_t) {
    return xal_allreduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_MAX, s.stream[i]);
  });
  EXPECT_EQ(a.get(0, n)[5], 2005);
  // broadcast from rank 2 (process 1) and from rank 1 (process 0)
  for (uint32_t root : {2u, 1u}) {
    run([root](Side& s, size_t i, size_t) {
      return xal_broadcast(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, root, s.stream[i]);
    });
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->get(at(r).second, n), values(root, n));
  }
  // reduce to rank 2
  run([](Side& s, size_t i, size_t) {
    return xal_reduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM, 2, s.stream[i]);
  });
  EXPECT_EQ(b.get(0, n)[10], 3030);
  // allgather
  run([](Side& s, size_t i, size_t) {
    return xal_allgather(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, 3 * n);
    for (size_t j = 0; j < 3; ++j)
      EXPECT_EQ(std::vector<int32_t>(got.begin() + j * n, got.begin() + (j + 1) * n), values(j, n));
  }
  // reduce_scatter: rank r gets the sum of block r
  run([](Side& s, size_t i, size_t) {
    return xal_reduce_scatter(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM,
                              s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, n);
    for (size_t k = 0; k < n; ++k)
      ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>((r * n + k) % 97)) << r << " " << k;
  }
  // alltoall: rank r's block j is rank j's send block r
  run([](Side& s, size_t i, size_t) {
    return xal_alltoall(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, s.stream[i]);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, 3 * n);
    for (size_t j = 0; j < 3; ++j) {
      auto src = values(j, 3 * n);
      EXPECT_EQ(std::vector<int32_t>(got.begin() + j * n, got.begin() + (j + 1) * n),
                std::vector<int32_t>(src.begin() + r * n, src.begin() + (r + 1) * n));
    }
  }
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AverageOfFloatsInPlace) {
  constexpr size_t n = 100;
  ASSERT_NO_FATAL_FAILURE(open(n * 4));
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(n, static_cast<float>(r + 1));
    auto [side, i] = at(r);
    ASSERT_XAL_OK(xal_memcpy_htod(side->stream[i], side->send[i], v.data(), n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
  }
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.send[i], n, XAL_DTYPE_F32, XAL_OP_AVG,
                            s.stream[i]), XAL_SUCCESS);
  });
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    std::vector<float> v(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(side->stream[i], v.data(), side->send[i], n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    EXPECT_FLOAT_EQ(v[0], 2.0f);
    EXPECT_FLOAT_EQ(v[n - 1], 2.0f);
  }
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, ProcessesThatDisagreeGetMismatchAndStayUsable) {
  ASSERT_NO_FATAL_FAILURE(open(64 * 4));
  each([](Side& s, size_t i, size_t g) {
    const size_t count = g == 2 ? 12 : 10;
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], count, XAL_DTYPE_I32, XAL_OP_SUM,
                            s.stream[i]), XAL_SUCCESS);
  });
  for (size_t r = 0; r < 3; ++r)
    EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_ERROR_COLLECTIVE_MISMATCH);
  for (size_t r = 0; r < 3; ++r) at(r).first->put(at(r).second, values(r, 10));
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], 10, XAL_DTYPE_I32, XAL_OP_SUM,
                            s.stream[i]), XAL_SUCCESS);
  });
  EXPECT_EQ(b.get(0, 10)[3], 3009);
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AProcessThatNeverArrivesTimesOut) {
  ASSERT_NO_FATAL_FAILURE(open(64, 300));
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(xal_allreduce(a.comm[i], a.send[i], a.recv[i], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                            a.stream[i]), XAL_SUCCESS);
  a.sync();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(a.async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(a.async_error(1), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(xal_allreduce(a.comm[0], a.send[0], a.recv[0], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                          a.stream[0]), XAL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(last_error().message).find("between processes"), std::string::npos)
      << last_error().message;
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, AbortUnblocksAPendingCall) {
  ASSERT_NO_FATAL_FAILURE(open(64, 600000));
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(xal_allreduce(a.comm[i], a.send[i], a.recv[i], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                            a.stream[i]), XAL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(xal_comm_abort(a.comm[1]), XAL_SUCCESS);
  a.sync();
  EXPECT_EQ(a.async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(xal_allreduce(a.comm[1], a.send[1], a.recv[1], 4, XAL_DTYPE_I32, XAL_OP_SUM,
                          a.stream[1]), XAL_ERROR_ABORTED);
  a.destroy();
  b.destroy();
}

TEST_F(TransportComm, BadInputGivesAClearStatus) {
  a.open({0, 1}, 64);
  std::vector<xal_comm_t> out(2);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, nullptr, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("transport"), std::string::npos);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 0, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_comm_create_transport(nullptr, 2, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 1, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);  // ranks_per_process[0] is 2
  EXPECT_NE(std::string(last_error().message).find("ranks_per_process"), std::string::npos);
  xal_device_t twice[] = {a.dev[0], a.dev[0]};
  EXPECT_EQ(xal_comm_create_transport(twice, 2, nullptr, &a.proc.t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("twice"), std::string::npos);
  xal_comm_transport_t t = a.proc.t;
  t.process_rank = 2;
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  t = a.proc.t;
  t.allgatherv = nullptr;
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  t = a.proc.t;
  t.struct_size = 4;
  EXPECT_NE(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()), XAL_SUCCESS);
  EXPECT_EQ(a.proc.released, 0);  // the caller keeps a transport that was refused
}

TEST_F(TransportComm, ATransportLibraryReportsThroughLastError) {
  EXPECT_EQ(xal_transport_set_error("xal_comm_create_other", XAL_ERROR_TIMEOUT, "peer 3 is gone"),
            XAL_ERROR_TIMEOUT);
  const xal_error_info_t e = last_error();
  EXPECT_EQ(e.status, XAL_ERROR_TIMEOUT);
  EXPECT_STREQ(e.operation, "xal_comm_create_other");
  EXPECT_STREQ(e.message, "peer 3 is gone");
  EXPECT_EQ(xal_transport_set_error(nullptr, XAL_SUCCESS, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("not an error"), std::string::npos);
}
