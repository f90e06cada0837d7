// The v-collectives (allgatherv, reduce_scatterv, alltoallv), gather,
// scatter and xal_comm_split / xal_comm_dup on one process, on the same
// paths as p2p_mock_test.cpp: exact results against references built here,
// every dtype, every op of reduce_scatterv, and splits whose children take
// the path of their devices.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "p2p_fixture.hpp"
#include "xal_common/reduce.hpp"

using namespace xal_test;

namespace {

// The same fixture under another name: its own instantiation.
class Vcoll : public P2p {};

// Exact results of every v-collective against a reference built here.
TEST_P(Vcoll, AllgathervMatchesAReference) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  const uint32_t n = size();
  std::vector<size_t> counts(n), displs(n);
  size_t at = 3;
  for (uint32_t p = 0; p < n; ++p) {
    counts[p] = 100 * p + 7;  // i32
    displs[p] = at;
    at += counts[p] + 5;
  }
  grouped([&](uint32_t r) {
    return xal_allgatherv(comm[r], send[r], counts[r], recv[r], counts.data(), displs.data(),
                          XAL_DTYPE_I32, stream[r]);
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < n; ++r) {
    const auto got = read(r, recv[r], at * 4);
    std::vector<uint8_t> want(at * 4, 0xee);
    for (uint32_t p = 0; p < n; ++p)
      for (size_t i = 0; i < counts[p] * 4; ++i) want[displs[p] * 4 + i] = pattern(p, i);
    ASSERT_EQ(got, want) << "rank " << r;
  }
}

TEST_P(Vcoll, AlltoallvMatchesAReference) {
  ASSERT_NO_FATAL_FAILURE(fill_all());
  const uint32_t n = size();
  // Rank r sends (r + 1) * (p + 2) elements to p; blocks in reverse order.
  auto cnt = [](uint32_t from, uint32_t to) { return size_t{(from + 1) * (to + 2)}; };
  std::vector<std::vector<size_t>> sc(n, std::vector<size_t>(n)), sd = sc, rc = sc, rd = sc;
  for (uint32_t r = 0; r < n; ++r) {
    size_t s_at = 0, r_at = 1;
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t p = n - 1 - k;
      sc[r][p] = cnt(r, p);
      sd[r][p] = s_at;
      s_at += sc[r][p] + 1;
      rc[r][p] = cnt(p, r);
      rd[r][p] = r_at;
      r_at += rc[r][p] + 2;
    }
  }
  grouped([&](uint32_t r) {
    return xal_alltoallv(comm[r], send[r], sc[r].data(), sd[r].data(), recv[r], rc[r].data(),
                         rd[r].data(), XAL_DTYPE_U64, stream[r]);
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < n; ++r) {
    const auto got = read(r, recv[r], 4096);
    for (uint32_t p = 0; p < n; ++p)
      for (size_t i = 0; i < rc[r][p] * 8; ++i)
        ASSERT_EQ(got[rd[r][p] * 8 + i], pattern(p, sd[p][r] * 8 + i)) << r << " from " << p;
    ASSERT_EQ(got[0], 0xee);  // before the first block
  }
}

TEST_P(Vcoll, GatherAndScatterFromEveryRoot) {
  const uint32_t n = size();
  const size_t count = 33;  // bf16
  for (uint32_t root = 0; root < n; ++root) {
    SCOPED_TRACE("root " + std::to_string(root));
    ASSERT_NO_FATAL_FAILURE(fill_all());
    grouped([&](uint32_t r) {
      return xal_gather(comm[r], send[r], recv[r], count, XAL_DTYPE_BF16, root, stream[r]);
    });
    ASSERT_NO_FATAL_FAILURE(sync_all());
    const auto got = read(root, recv[root], n * count * 2 + 2);
    for (uint32_t p = 0; p < n; ++p)
      for (size_t i = 0; i < count * 2; ++i) ASSERT_EQ(got[p * count * 2 + i], pattern(p, i));
    ASSERT_EQ(got[n * count * 2], 0xee);
    for (uint32_t r = 0; r < n; ++r) {
      if (r != root) {
        ASSERT_EQ(read(r, recv[r], 4), std::vector<uint8_t>(4, 0xee));
      }
    }
    grouped([&](uint32_t r) {
      return xal_scatter(comm[r], send[r], recv[r], count, XAL_DTYPE_BF16, root, stream[r]);
    });
    ASSERT_NO_FATAL_FAILURE(sync_all());
    for (uint32_t r = 0; r < n; ++r) {
      const auto mine = read(r, recv[r], count * 2);
      for (size_t i = 0; i < count * 2; ++i) ASSERT_EQ(mine[i], pattern(root, r * count * 2 + i));
    }
  }
}

// reduce_scatterv with every op on i32, and avg on f64.
TEST_P(Vcoll, ReduceScattervMatchesAReference) {
  const uint32_t n = size();
  std::vector<size_t> counts(n);
  for (uint32_t p = 0; p < n; ++p) counts[p] = 50 + 13 * p;
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  auto value = [](uint32_t r, size_t i) { return static_cast<int32_t>((r + 1) * 3 + i % 17) - 20; };
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int32_t> v(total);
    for (size_t i = 0; i < total; ++i) v[i] = value(r, i);
    ASSERT_NO_FATAL_FAILURE(write(r, send[r], v.data(), total * 4));
  }
  for (xal_op_t op : {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX}) {
    SCOPED_TRACE(xal::common::op_name(op));
    grouped([&](uint32_t r) {
      return xal_reduce_scatterv(comm[r], send[r], recv[r], counts.data(), XAL_DTYPE_I32, op,
                                 stream[r]);
    });
    ASSERT_NO_FATAL_FAILURE(sync_all());
    size_t offset = 0;
    for (uint32_t r = 0; r < n; ++r) {
      const auto bytes = read(r, recv[r], counts[r] * 4);
      std::vector<int32_t> got(counts[r]);
      std::memcpy(got.data(), bytes.data(), bytes.size());
      for (size_t i = 0; i < counts[r]; ++i) {
        int64_t want = value(0, offset + i);
        for (uint32_t p = 1; p < n; ++p) {
          const int64_t x = value(p, offset + i);
          want = op == XAL_OP_SUM ? want + x : op == XAL_OP_PROD ? want * x
               : op == XAL_OP_MIN ? std::min(want, x) : std::max(want, x);
        }
        ASSERT_EQ(got[i], static_cast<int32_t>(want)) << "rank " << r << " at " << i;
      }
      offset += counts[r];
    }
  }
  // avg of f64 values that divide exactly.
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<double> v(total);
    for (size_t i = 0; i < total; ++i) v[i] = static_cast<double>(n * (r + i));
    ASSERT_NO_FATAL_FAILURE(write(r, send[r], v.data(), total * 8));
  }
  grouped([&](uint32_t r) {
    return xal_reduce_scatterv(comm[r], send[r], recv[r], counts.data(), XAL_DTYPE_F64, XAL_OP_AVG,
                               stream[r]);
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  size_t offset = 0;
  for (uint32_t r = 0; r < n; ++r) {
    const auto bytes = read(r, recv[r], counts[r] * 8);
    std::vector<double> got(counts[r]);
    std::memcpy(got.data(), bytes.data(), bytes.size());
    for (size_t i = 0; i < counts[r]; ++i) {
      double want = 0;
      for (uint32_t p = 0; p < n; ++p) want += static_cast<double>(p + offset + i);
      ASSERT_EQ(got[i], want) << "avg rank " << r << " at " << i;
    }
    offset += counts[r];
  }
}

// Every dtype through alltoallv (which only moves bytes) and a sum
// reduce_scatterv (which reduces in the dtype).
TEST_P(Vcoll, EveryDtype) {
  const uint32_t n = size();
  for (int32_t dt = 0; dt < XAL_DTYPE_COUNT; ++dt) {
    const auto dtype = static_cast<xal_dtype_t>(dt);
    SCOPED_TRACE(xal::common::dtype_name(dt));
    const size_t es = xal::common::dtype_size(dt);
    ASSERT_NO_FATAL_FAILURE(fill_all());
    std::vector<size_t> c(n, 9), d(n);
    for (uint32_t p = 0; p < n; ++p) d[p] = 9 * p;
    grouped([&](uint32_t r) {
      return xal_alltoallv(comm[r], send[r], c.data(), d.data(), recv[r], c.data(), d.data(),
                           dtype, stream[r]);
    });
    ASSERT_NO_FATAL_FAILURE(sync_all());
    for (uint32_t r = 0; r < n; ++r) {
      const auto got = read(r, recv[r], n * 9 * es);
      for (uint32_t p = 0; p < n; ++p)
        for (size_t i = 0; i < 9 * es; ++i)
          ASSERT_EQ(got[p * 9 * es + i], pattern(p, r * 9 * es + i)) << r << " from " << p;
    }
    // Sum of small integers, exact in every dtype: ones everywhere.
    std::vector<uint8_t> ones(n * 9 * es);
    for (size_t i = 0; i < n * 9; ++i) {
      uint8_t* e = ones.data() + i * es;
      switch (dtype) {
        case XAL_DTYPE_F16: { const uint16_t h = 0x3c00; std::memcpy(e, &h, 2); break; }
        case XAL_DTYPE_BF16: { const uint16_t h = 0x3f80; std::memcpy(e, &h, 2); break; }
        case XAL_DTYPE_F32: { const float f = 1; std::memcpy(e, &f, 4); break; }
        case XAL_DTYPE_F64: { const double f = 1; std::memcpy(e, &f, 8); break; }
        default: e[0] = 1; break;  // little-endian one
      }
    }
    for (uint32_t r = 0; r < n; ++r) ASSERT_NO_FATAL_FAILURE(write(r, send[r], ones.data(), ones.size()));
    grouped([&](uint32_t r) {
      return xal_reduce_scatterv(comm[r], send[r], recv[r], c.data(), dtype, XAL_OP_SUM, stream[r]);
    });
    ASSERT_NO_FATAL_FAILURE(sync_all());
    for (uint32_t r = 0; r < n; ++r) {
      std::vector<uint8_t> want(9 * es, 0);
      for (size_t i = 0; i < 9; ++i) {
        uint8_t* e = want.data() + i * es;
        const float nf = static_cast<float>(n);
        switch (dtype) {
          case XAL_DTYPE_F16: { const uint16_t h = xal::common::float_to_f16(nf); std::memcpy(e, &h, 2); break; }
          case XAL_DTYPE_BF16: { const uint16_t h = xal::common::float_to_bf16(nf); std::memcpy(e, &h, 2); break; }
          case XAL_DTYPE_F32: std::memcpy(e, &nf, 4); break;
          case XAL_DTYPE_F64: { const double f = n; std::memcpy(e, &f, 8); break; }
          default: e[0] = static_cast<uint8_t>(n); break;
        }
      }
      ASSERT_EQ(read(r, recv[r], 9 * es), want) << "rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Paths, Vcoll,
    ::testing::Values(Layout{"NativeMock", 4, "mmmm", XAL_COMM_PATH_NATIVE},
                      Layout{"MixedStaged", 2, "mtmu", XAL_COMM_PATH_HIERARCHICAL}),
    [](const auto& info) { return std::string(info.param.name); });

// Split by parity with keys reversed; a rank without color gets NULL; dup.
TEST_F(P2pOnce, SplitMakesChildrenOnTheRightPath) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 3, "mtmm", 0}));
  std::vector<xal_comm_t> child(size(), nullptr);
  // Rank 0 (mock), 1 (testdev), 2, 3 (mock). Color: 1 for 0 and 2 (mock
  // only: native), 0 for 1 and 3 (mixed: hierarchical); rank 3 no color in
  // a second split.
  grouped([&](uint32_t r) {
    return xal_comm_split(comm[r], r % 2 == 0 ? 1 : 0, -static_cast<int32_t>(r), nullptr, &child[r]);
  });
  for (uint32_t r = 0; r < size(); ++r) {
    ASSERT_NE(child[r], nullptr) << r;
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_XAL_OK(xal_comm_get_info(child[r], &info));
    EXPECT_EQ(info.size, 2u);
    // Keys reversed: the higher parent rank comes first.
    EXPECT_EQ(info.rank, r < 2 ? 1u : 0u) << r;
    EXPECT_EQ(info.path, r % 2 == 0 ? XAL_COMM_PATH_NATIVE : XAL_COMM_PATH_HIERARCHICAL) << r;
  }
  // The children work: a send from the child's rank 0 to its rank 1.
  ASSERT_NO_FATAL_FAILURE(fill_all());
  grouped([&](uint32_t r) {
    return r < 2 ? xal_recv(child[r], recv[r], 16, XAL_DTYPE_U8, 0, stream[r])
                 : xal_send(child[r], send[r], 16, XAL_DTYPE_U8, 1, stream[r]);
  });
  ASSERT_NO_FATAL_FAILURE(sync_all());
  for (uint32_t r = 0; r < 2; ++r) {
    const auto got = read(r, recv[r], 16);
    for (size_t i = 0; i < 16; ++i) ASSERT_EQ(got[i], pattern(r + 2, i));
  }
  for (xal_comm_t c : child) EXPECT_XAL_OK(xal_comm_destroy(c));
  std::vector<xal_comm_t> again(size(), nullptr);
  grouped([&](uint32_t r) {
    return xal_comm_split(comm[r], r == 3 ? XAL_COMM_SPLIT_NOCOLOR : 5, 0, nullptr, &again[r]);
  });
  EXPECT_EQ(again[3], nullptr);
  for (uint32_t r = 0; r < 3; ++r) {
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_XAL_OK(xal_comm_get_info(again[r], &info));
    EXPECT_EQ(info.rank, r);
    EXPECT_EQ(info.size, 3u);
    EXPECT_XAL_OK(xal_comm_destroy(again[r]));
  }
  std::vector<xal_comm_t> dup(size(), nullptr);
  grouped([&](uint32_t r) { return xal_comm_dup(comm[r], &dup[r]); });
  for (uint32_t r = 0; r < size(); ++r) {
    xal_comm_info_t a{}, b{};
    a.struct_size = b.struct_size = sizeof a;
    ASSERT_XAL_OK(xal_comm_get_info(comm[r], &a));
    ASSERT_XAL_OK(xal_comm_get_info(dup[r], &b));
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.path, b.path);
    EXPECT_XAL_OK(xal_comm_destroy(dup[r]));
  }
}

TEST_F(P2pOnce, SplitWithAMissingRankTimesOut) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mm", 0}, 200));
  xal_comm_t child = nullptr;
  expect_error(xal_comm_split(comm[0], 0, 0, nullptr, &child), XAL_ERROR_TIMEOUT, "did not call");
  EXPECT_EQ(child, nullptr);
}

}  // namespace
