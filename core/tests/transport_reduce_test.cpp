// Reduce and reduce_scatter across processes (xal_comm_create_transport)
// over the fake transport (transport_fake.hpp): with the transport's own
// reduce and reduce_scatter entries only the processes that need a result
// receive it; a transport without them (an older table, or NULL entries)
// gets the allreduce exchange and the same results. Process 0 has two
// ranks and process 1 one, so the processes' blocks differ in size.
#include <cstddef>
#include <string>

#include "transport_fake.hpp"

using namespace transport_fake;

namespace {

std::atomic<int> g_poisoned{0};

// Entries a first-version table does not have: never to be called.
xal_status_t poisoned_reduce(void*, const void*, void*, size_t, xal_dtype_t, xal_op_t, uint32_t,
                             uint32_t, char*, size_t) {
  ++g_poisoned;
  return XAL_ERROR_INTERNAL;
}
xal_status_t poisoned_reduce_scatter(void*, const void*, void*, const size_t*, xal_dtype_t,
                                     xal_op_t, uint32_t, char*, size_t) {
  ++g_poisoned;
  return XAL_ERROR_INTERNAL;
}

constexpr int32_t kUntouched = -7;

class TransportReduce : public TransportComm {
 protected:
  void with_entries() {
    a.add_reduce_entries();
    b.add_reduce_entries();
  }
  // Fills every rank's receive buffer with kUntouched.
  void mark_outputs(size_t n) {
    for (size_t r = 0; r < 3; ++r) {
      auto [side, i] = at(r);
      std::vector<int32_t> v(n, kUntouched);
      ASSERT_XAL_OK(xal_memcpy_htod(side->stream[i], side->recv[i], v.data(), n * 4));
      ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    }
  }
  void put_all(size_t n) {
    for (size_t r = 0; r < 3; ++r) at(r).first->put(at(r).second, values(r, n));
  }
  void reduce(size_t n, xal_dtype_t dt, xal_op_t op, uint32_t root) {
    each([&](Side& s, size_t i, size_t) {
      EXPECT_EQ(xal_reduce(s.comm[i], s.send[i], s.recv[i], n, dt, op, root, s.stream[i]),
                XAL_SUCCESS) << last_error().message;
    });
    expect_no_async_error();
  }
  void reduce_scatter(size_t n, xal_dtype_t dt, xal_op_t op) {
    each([&](Side& s, size_t i, size_t) {
      EXPECT_EQ(xal_reduce_scatter(s.comm[i], s.send[i], s.recv[i], n, dt, op, s.stream[i]),
                XAL_SUCCESS) << last_error().message;
    });
    expect_no_async_error();
  }
  void expect_no_async_error() {
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(at(r).first->async_error(at(r).second), XAL_SUCCESS);
  }
  // Rank r's reduce_scatter result for the i32 sum of values(., 3n).
  static void expect_scatter_sums(const std::vector<int32_t>& got, size_t r, size_t n) {
    for (size_t k = 0; k < n; ++k)
      ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>((r * n + k) % 97)) << r << " " << k;
  }
  // Runs reduce to a root in either process and reduce_scatter, checks the
  // results, and that only allreduce (the agreement and the exchange) ran.
  void expect_fallback() {
    constexpr size_t n = 257;
    ASSERT_NO_FATAL_FAILURE(open(n * 3 * 4));
    put_all(n * 3);
    for (uint32_t root : {2u, 1u}) {
      ASSERT_NO_FATAL_FAILURE(mark_outputs(n));
      reduce(n, XAL_DTYPE_I32, XAL_OP_SUM, root);
      auto [side, i] = at(root);
      auto got = side->get(i, n);
      for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>(k % 97));
    }
    reduce_scatter(n, XAL_DTYPE_I32, XAL_OP_SUM);
    for (size_t r = 0; r < 3; ++r) expect_scatter_sums(at(r).first->get(at(r).second, n), r, n);
    EXPECT_EQ(g_poisoned.load(), 0);
    EXPECT_EQ(a.proc.reduces + a.proc.reduce_scatters + b.proc.reduces + b.proc.reduce_scatters, 0);
    EXPECT_EQ(a.proc.allreduces, 6);  // 3 calls: agreement + exchange
    EXPECT_EQ(b.proc.allreduces, 6);
    a.destroy();
    b.destroy();
  }
};

}  // namespace

TEST_F(TransportReduce, ReduceGoesOnlyToTheRootsProcess) {
  constexpr size_t n = 301;
  with_entries();
  ASSERT_NO_FATAL_FAILURE(open(n * 4));
  put_all(n);
  int calls = 0;
  for (uint32_t root : {2u, 1u, 0u}) {
    ASSERT_NO_FATAL_FAILURE(mark_outputs(n));
    reduce(n, XAL_DTYPE_I32, XAL_OP_SUM, root);
    ++calls;
    for (size_t r = 0; r < 3; ++r) {
      auto got = at(r).first->get(at(r).second, n);
      for (size_t k = 0; k < n; ++k)
        ASSERT_EQ(got[k], r == root ? 3000 + 3 * static_cast<int32_t>(k % 97) : kUntouched)
            << "root " << root << " rank " << r << " element " << k;
    }
    // One reduce per process, and the agreement as the only allreduce.
    EXPECT_EQ(a.proc.reduces, calls);
    EXPECT_EQ(b.proc.reduces, calls);
    EXPECT_EQ(a.proc.allreduces, calls);
    EXPECT_EQ(b.proc.allreduces, calls);
  }
  a.destroy();
  b.destroy();
}

TEST_F(TransportReduce, ReduceAverageInPlaceToEitherProcess) {
  constexpr size_t n = 100;
  with_entries();
  ASSERT_NO_FATAL_FAILURE(open(n * 4));
  for (uint32_t root : {0u, 2u}) {
    for (size_t r = 0; r < 3; ++r) {
      std::vector<float> v(n, static_cast<float>(r + 1));
      auto [side, i] = at(r);
      ASSERT_XAL_OK(xal_memcpy_htod(side->stream[i], side->send[i], v.data(), n * 4));
      ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    }
    each([root](Side& s, size_t i, size_t) {
      EXPECT_EQ(xal_reduce(s.comm[i], s.send[i], s.send[i], n, XAL_DTYPE_F32, XAL_OP_AVG, root,
                           s.stream[i]), XAL_SUCCESS);
    });
    expect_no_async_error();
    auto [side, i] = at(root);
    std::vector<float> v(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(side->stream[i], v.data(), side->send[i], n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    EXPECT_FLOAT_EQ(v[0], 2.0f);
    EXPECT_FLOAT_EQ(v[n - 1], 2.0f);
  }
  EXPECT_EQ(a.proc.reduces, 2);
  a.destroy();
  b.destroy();
}

TEST_F(TransportReduce, ReduceScatterGivesEachProcessItsOwnBlocks) {
  constexpr size_t n = 301;
  with_entries();
  ASSERT_NO_FATAL_FAILURE(open(n * 3 * 4));
  put_all(n * 3);
  reduce_scatter(n, XAL_DTYPE_I32, XAL_OP_SUM);
  for (size_t r = 0; r < 3; ++r) expect_scatter_sums(at(r).first->get(at(r).second, n), r, n);
  // Process 0 holds ranks 0 and 1 (2n elements), process 1 rank 2 (n).
  EXPECT_EQ(a.proc.scatter_counts, (std::vector<size_t>{2 * n, n}));
  EXPECT_EQ(b.proc.scatter_counts, (std::vector<size_t>{2 * n, n}));
  EXPECT_EQ(a.proc.reduce_scatters, 1);
  EXPECT_EQ(b.proc.reduce_scatters, 1);
  EXPECT_EQ(a.proc.allreduces, 1);  // the agreement only
  EXPECT_EQ(b.proc.allreduces, 1);
  // In place (send == recv): the result overlaps the input's first block.
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_reduce_scatter(s.comm[i], s.send[i], s.send[i], n, XAL_DTYPE_I32, XAL_OP_SUM,
                                 s.stream[i]), XAL_SUCCESS);
  });
  expect_no_async_error();
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    std::vector<int32_t> got(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(side->stream[i], got.data(), side->send[i], n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    expect_scatter_sums(got, r, n);
  }
  // Average of floats: rank r sends r + 1 everywhere.
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(n * 3, static_cast<float>(r + 1));
    auto [side, i] = at(r);
    ASSERT_XAL_OK(xal_memcpy_htod(side->stream[i], side->send[i], v.data(), v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
  }
  reduce_scatter(n, XAL_DTYPE_F32, XAL_OP_AVG);
  for (size_t r = 0; r < 3; ++r) {
    auto [side, i] = at(r);
    std::vector<float> v(n);
    ASSERT_XAL_OK(xal_memcpy_dtoh(side->stream[i], v.data(), side->recv[i], n * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(side->stream[i]));
    EXPECT_FLOAT_EQ(v[0], 2.0f) << r;
    EXPECT_FLOAT_EQ(v[n - 1], 2.0f) << r;
  }
  a.destroy();
  b.destroy();
}

// Large enough that the leader's reduction and copies run in slices on
// several cores.
TEST_F(TransportReduce, LargeCallsSplitOverCoresStayExact) {
  constexpr size_t n = (size_t{1} << 19) + 3;
  with_entries();
  ASSERT_NO_FATAL_FAILURE(open(n * 3 * 4));
  put_all(n * 3);
  each([](Side& s, size_t i, size_t) {
    EXPECT_EQ(xal_allreduce(s.comm[i], s.send[i], s.recv[i], n, XAL_DTYPE_I32, XAL_OP_SUM,
                            s.stream[i]), XAL_SUCCESS);
  });
  expect_no_async_error();
  for (size_t r = 0; r < 3; ++r) {
    auto got = at(r).first->get(at(r).second, n);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>(k % 97));
  }
  reduce(n, XAL_DTYPE_I32, XAL_OP_SUM, 1);
  {
    auto got = a.get(1, n);
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 3000 + 3 * static_cast<int32_t>(k % 97));
  }
  reduce_scatter(n, XAL_DTYPE_I32, XAL_OP_SUM);
  for (size_t r = 0; r < 3; ++r) expect_scatter_sums(at(r).first->get(at(r).second, n), r, n);
  a.destroy();
  b.destroy();
}

TEST_F(TransportReduce, AFirstVersionTableFallsBackToAllreduce) {
  // Entries past struct_size are never read, whatever they hold.
  for (Side* s : {&a, &b}) {
    s->proc.t.reduce = poisoned_reduce;
    s->proc.t.reduce_scatter = poisoned_reduce_scatter;
    s->proc.t.struct_size = offsetof(xal_comm_transport_t, reduce);
  }
  expect_fallback();
}

TEST_F(TransportReduce, NullNewEntriesFallBackToAllreduce) { expect_fallback(); }

TEST_F(TransportReduce, ATableShorterThanTheFirstVersionIsRefused) {
  a.open({0, 1}, 64);
  std::vector<xal_comm_t> out(2);
  xal_comm_transport_t t = a.proc.t;
  t.struct_size = offsetof(xal_comm_transport_t, release);  // lacks release
  EXPECT_EQ(xal_comm_create_transport(a.dev.data(), 2, nullptr, &t, out.data()),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("first version"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(a.proc.released, 0);
}
