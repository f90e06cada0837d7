#include "xal_common/host_collective.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <thread>
#include <vector>

using namespace xal::common;

namespace {

// Runs body(rank) on one thread per rank; returns each rank's status.
std::vector<xal_status_t> on_ranks(uint32_t n, const std::function<void(uint32_t)>& body) {
  std::vector<xal_status_t> status(n, XAL_SUCCESS);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const CollError& e) {
        status[r] = e.status();
      }
    });
  for (auto& t : threads) t.join();
  return status;
}

// An i32 call (the tests' reference reduces i32).
CollDesc desc(CollKind k, size_t count, xal_op_t op = XAL_OP_SUM, uint32_t root = 0) {
  return xal::common::coll_desc(k, count, XAL_DTYPE_I32, op, root);
}

}  // namespace

TEST(HostCollective, EveryKindMatchesReference) {
  constexpr uint32_t n = 3;
  constexpr size_t count = 1000;  // not a multiple of the slice alignment
  Rendezvous rv(n, 5000);
  std::vector<std::vector<int32_t>> in(n, std::vector<int32_t>(count * n)), out(n, std::vector<int32_t>(count * n, -1));
  for (uint32_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count * n; ++i) in[r][i] = static_cast<int32_t>(r * 100000 + i);
  auto run = [&](CollDesc d) {
    for (auto& o : out) std::fill(o.begin(), o.end(), -1);
    auto st = on_ranks(n, [&](uint32_t r) { rv.run(r, HostPart{d, in[r].data(), out[r].data()}); });
    for (auto s : st) ASSERT_EQ(s, XAL_SUCCESS);
  };
  run(desc(CollKind::kAllreduce, count));
  for (uint32_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][i], in[0][i] + in[1][i] + in[2][i]);
  run(desc(CollKind::kReduce, count, XAL_OP_MAX, 1));
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[1][i], in[2][i]);
  EXPECT_EQ(out[0][0], -1);  // only the root receives
  run(desc(CollKind::kBroadcast, count, XAL_OP_SUM, 2));
  for (uint32_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][i], in[2][i]);
  run(desc(CollKind::kAllgather, count));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t j = 0; j < n; ++j)
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][j * count + i], in[j][i]);
  run(desc(CollKind::kReduceScatter, count, XAL_OP_MIN));
  for (uint32_t r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][i], in[0][r * count + i]);
  run(desc(CollKind::kAlltoall, count));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t j = 0; j < n; ++j)
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][j * count + i], in[j][r * count + i]);
}

TEST(HostCollective, InPlaceAllreduceAndAlltoall) {
  constexpr uint32_t n = 4;
  Rendezvous rv(n, 5000);
  std::vector<std::vector<int32_t>> buf(n, std::vector<int32_t>(n * 10));
  for (uint32_t r = 0; r < n; ++r) std::iota(buf[r].begin(), buf[r].end(), static_cast<int32_t>(r * 1000));
  const auto orig = buf;
  auto st = on_ranks(n, [&](uint32_t r) {
    rv.run(r, HostPart{desc(CollKind::kAlltoall, 10), buf[r].data(), buf[r].data()});
  });
  for (auto s : st) ASSERT_EQ(s, XAL_SUCCESS);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t j = 0; j < n; ++j)
      for (size_t i = 0; i < 10; ++i) ASSERT_EQ(buf[r][j * 10 + i], orig[j][r * 10 + i]);
  st = on_ranks(n, [&](uint32_t r) {
    rv.run(r, HostPart{desc(CollKind::kAllreduce, n * 10), buf[r].data(), buf[r].data()});
  });
  for (auto s : st) ASSERT_EQ(s, XAL_SUCCESS);
  for (uint32_t r = 1; r < n; ++r) EXPECT_EQ(buf[r], buf[0]);
}

TEST(HostCollective, MismatchIsReportedToEveryRankAndIsNotSticky) {
  Rendezvous rv(2, 5000);
  std::vector<int32_t> a(8, 1), b(8, 2);
  auto st = on_ranks(2, [&](uint32_t r) {
    rv.run(r, HostPart{desc(CollKind::kAllreduce, r == 0 ? 8 : 4), r ? b.data() : a.data(),
                       r ? b.data() : a.data()});
  });
  EXPECT_EQ(st[0], XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_EQ(st[1], XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_EQ(a[0], 1);  // nothing written
  st = on_ranks(2, [&](uint32_t r) {
    rv.run(r, HostPart{desc(CollKind::kAllreduce, 8), r ? b.data() : a.data(), r ? b.data() : a.data()});
  });
  EXPECT_EQ(st[0], XAL_SUCCESS);
  EXPECT_EQ(a[0], 3);
}

TEST(HostCollective, MissingRankTimesOutAndBreaks) {
  Rendezvous rv(3, 100);
  std::vector<int32_t> a(4, 1);
  std::string message;
  try {
    rv.run(0, HostPart{desc(CollKind::kAllreduce, 4), a.data(), a.data()});
    FAIL() << "expected a timeout";
  } catch (const CollError& e) {
    EXPECT_EQ(e.status(), XAL_ERROR_TIMEOUT);
    message = e.what();
  }
  EXPECT_NE(message.find("rank(s) 1,2"), std::string::npos) << message;
  EXPECT_EQ(rv.error(), XAL_ERROR_TIMEOUT);
  EXPECT_THROW(rv.throw_if_broken(CollKind::kBroadcast), CollError);
}

TEST(HostCollective, AbortWakesWaitingRanks) {
  Rendezvous rv(2, 60000);
  std::vector<int32_t> a(4, 1);
  xal_status_t got = XAL_SUCCESS;
  std::thread waiter([&] {
    try {
      rv.run(0, HostPart{desc(CollKind::kAllreduce, 4), a.data(), a.data()});
    } catch (const CollError& e) {
      got = e.status();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rv.abort();
  waiter.join();
  EXPECT_EQ(got, XAL_ERROR_ABORTED);
  EXPECT_EQ(rv.error(), XAL_ERROR_ABORTED);
}

TEST(HostCollective, ElementCountsAndBusBytes) {
  CollDesc d = desc(CollKind::kAllgather, 10);
  EXPECT_EQ(coll_in_elements(d, 0, 4), 10u);
  EXPECT_EQ(coll_out_elements(d, 0, 4), 40u);
  d.kind = CollKind::kBroadcast;
  d.root = 1;
  EXPECT_EQ(coll_in_elements(d, 0, 4), 0u);
  EXPECT_EQ(coll_in_elements(d, 1, 4), 10u);
  d.kind = CollKind::kAllreduce;
  EXPECT_DOUBLE_EQ(coll_bus_bytes(d, 4), 40.0 * 2 * 3 / 4);
}
