// The hierarchical path over the mock backend (native collectives, host
// addressable memory) mixed with the test plugins testdev and testdev2
// (asynchronous streams, memory without a host view: staged in chunks).
// Groups of uneven sizes, ranks of a group not adjacent, roots in every
// group, chunks small enough that every call runs many of them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "xal_common/reduce.hpp"

using namespace xal_test;

#define EXPECT_XAL_OK(call) EXPECT_EQ((call), XAL_SUCCESS) << last_error().message

namespace {

std::string mock_plugin() { return XAL_MOCK_PLUGIN; }

// A layout: how many mock cards, and the communicator's devices as 'm'
// (next mock card), 't' (testdev) or 'u' (testdev2).
struct Layout {
  const char* name;
  uint32_t mocks;
  const char* ranks;
};

class MixedGroups : public ::testing::Test, protected RankSet {
 protected:
  void start(const Layout& l, uint32_t timeout_ms = 0) {
    env_.push_back(std::make_unique<ScopedEnv>("XAL_TESTDEV_ASYNC", "1"));
    env_.push_back(std::make_unique<ScopedEnv>("XAL_TESTDEV_NO_HOST_PTR", "1"));
    env_.push_back(std::make_unique<ScopedEnv>("XAL_COMM_CHUNK_BYTES", "1024"));
    const std::string spec = std::to_string(l.mocks) + "*a100-40g";
    env_.push_back(std::make_unique<ScopedEnv>("XAL_MOCK_DEVICES", spec.c_str()));
    ASSERT_XAL_OK(init(mock_plugin() + "," + plugin("testdev") + "," + plugin("testdev2")));
    uint32_t next_mock = 0;
    for (const char* c = l.ranks; *c; ++c) {
      const uint32_t index = *c == 'm' ? next_mock++ : l.mocks + (*c == 't' ? 0 : 2);
      ASSERT_NO_FATAL_FAILURE(add_rank(index, kMaxBytes));
    }
    comm.resize(dev.size());
    xal_comm_options_t o{};
    o.struct_size = sizeof o;
    o.timeout_ms = timeout_ms;
    ASSERT_XAL_OK(xal_comm_create(dev.data(), size(), &o, comm.data()));
  }
  void TearDown() override {
    for (xal_comm_t c : comm)
      if (c) {
        EXPECT_XAL_OK(xal_comm_destroy(c));
      }
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }

  uint32_t size() const { return static_cast<uint32_t>(dev.size()); }
  static int32_t value(size_t rank, size_t i) { return static_cast<int32_t>(rank * 1000 + i % 997); }

  // Fills every rank's send buffer with value(rank, i).
  void fill(size_t elems) {
    for (size_t r = 0; r < size(); ++r) {
      std::vector<int32_t> v(elems);
      for (size_t i = 0; i < elems; ++i) v[i] = value(r, i);
      ASSERT_NO_FATAL_FAILURE(put(r, v));
    }
  }
  // Issues `call` for every rank from this thread (every backend here
  // queues without blocking).
  void each(const std::function<xal_status_t(size_t)>& call) {
    for (size_t r = 0; r < size(); ++r) ASSERT_EQ(call(r), XAL_SUCCESS) << r << ": " << last_error().message;
  }
  static constexpr size_t kMaxCount = 2600;
  static constexpr size_t kMaxBytes = kMaxCount * 5 * 4;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

class MixedComm : public MixedGroups, public ::testing::WithParamInterface<Layout> {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(start(GetParam())); }
};

}  // namespace

TEST_P(MixedComm, UsesNativeGroups) {
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(comm[0], &info));
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  EXPECT_NE(std::string(info.description).find("native groups: mock"), std::string::npos)
      << info.description;
  EXPECT_NE(std::string(info.description).find("chunks of 1.00 KiB"), std::string::npos)
      << info.description;
}

TEST_P(MixedComm, AllSixCollectivesMatchAReference) {
  const size_t n = size();
  // 256 i32 per chunk: none, part of one, exactly four, many and a rest.
  for (size_t c : {size_t{0}, size_t{1}, size_t{1024}, kMaxCount}) {
    SCOPED_TRACE("count " + std::to_string(c));
    ASSERT_NO_FATAL_FAILURE(fill(c * n));
    auto sum = [&](size_t i) {
      int32_t s = 0;
      for (size_t r = 0; r < n; ++r) s += value(r, i);
      return s;
    };
    each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]); });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c);
      for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[i], sum(i)) << "allreduce rank " << r << " at " << i;
    }
    each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, XAL_OP_MIN, stream[r]); });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c);
      for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[i], value(0, i)) << "min rank " << r << " at " << i;
    }
    for (uint32_t root = 0; root < n; ++root) {
      each([&](size_t r) { return xal_broadcast(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, root, stream[r]); });
      for (size_t r = 0; r < n; ++r) {
        const auto got = get(r, c);
        for (size_t i = 0; i < c; ++i)
          ASSERT_EQ(got[i], value(root, i)) << "broadcast root " << root << " rank " << r << " at " << i;
      }
      each([&](size_t r) { return xal_reduce(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, XAL_OP_SUM, root, stream[r]); });
      const auto got = get(root, c);
      for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[i], sum(i)) << "reduce root " << root << " at " << i;
    }
    each([&](size_t r) { return xal_allgather(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, stream[r]); });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c * n);
      for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[j * c + i], value(j, i)) << "allgather rank " << r;
    }
    each([&](size_t r) {
      return xal_reduce_scatter(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]);
    });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c);
      for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[i], sum(r * c + i)) << "reduce_scatter rank " << r;
    }
    each([&](size_t r) { return xal_alltoall(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, stream[r]); });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c * n);
      for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < c; ++i) ASSERT_EQ(got[j * c + i], value(j, r * c + i)) << "alltoall rank " << r;
    }
  }
  for (size_t r = 0; r < n; ++r) EXPECT_EQ(async_error(r), XAL_SUCCESS);
}

TEST_P(MixedComm, InPlaceAllreduceAndFloatAverage) {
  const size_t n = size(), c = 1500;
  for (size_t r = 0; r < n; ++r) {
    std::vector<float> v(c, static_cast<float>(r + 1));
    ASSERT_XAL_OK(xal_memcpy_htod(stream[r], recv[r], v.data(), c * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
  }
  each([&](size_t r) { return xal_allreduce(comm[r], recv[r], recv[r], c, XAL_DTYPE_F32, XAL_OP_MAX, stream[r]); });
  each([&](size_t r) { return xal_allreduce(comm[r], recv[r], recv[r], c, XAL_DTYPE_F32, XAL_OP_AVG, stream[r]); });
  for (size_t r = 0; r < n; ++r) {
    std::vector<float> v(c);
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], v.data(), recv[r], c * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
    for (float x : v) ASSERT_FLOAT_EQ(x, static_cast<float>(n)) << r;
  }
}

namespace {

// Small integers, exact in every dtype below (sums of five included).
int small_value(size_t rank, size_t i) { return static_cast<int>((rank * 7 + i * 3) % 13) - 6; }

// |x| < 2048 as an IEEE half.
uint16_t to_f16(int x) {
  if (x == 0) return 0;
  const uint16_t sign = x < 0 ? 0x8000 : 0;
  const auto a = static_cast<uint32_t>(x < 0 ? -x : x);
  const int e = 31 - __builtin_clz(a);
  const auto mant = static_cast<uint16_t>((a << (10 - e)) & 0x3ff);
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | mant);
}

// `v` encoded as `dtype` (f32, i32 or f16) at `out`.
void encode(xal_dtype_t dtype, int v, unsigned char* out) {
  if (dtype == XAL_DTYPE_F32) {
    const auto f = static_cast<float>(v);
    std::memcpy(out, &f, 4);
  } else if (dtype == XAL_DTYPE_I32) {
    const auto i = static_cast<int32_t>(v);
    std::memcpy(out, &i, 4);
  } else {
    const uint16_t h = to_f16(v);
    std::memcpy(out, &h, 2);
  }
}

}  // namespace

// Reduce runs through the groups: only the root's receive buffer is
// written, for every root, dtype, op and count (chunked and not).
TEST_P(MixedComm, ReduceWritesOnlyTheRoot) {
  const size_t n = size();
  constexpr unsigned char kSentinel = 0xAB;
  const std::vector<unsigned char> sentinel(kMaxCount * 4, kSentinel);
  for (xal_dtype_t dt : {XAL_DTYPE_F32, XAL_DTYPE_I32, XAL_DTYPE_F16}) {
    const size_t es = dt == XAL_DTYPE_F16 ? 2 : 4;
    for (xal_op_t op : {XAL_OP_SUM, XAL_OP_MAX}) {
      for (size_t c : {size_t{0}, size_t{1}, size_t{1024}, kMaxCount}) {
        SCOPED_TRACE("dtype " + std::to_string(dt) + " op " + std::to_string(op) + " count " +
                     std::to_string(c));
        std::vector<unsigned char> expect(c * es);
        for (size_t i = 0; i < c; ++i) {
          int acc = small_value(0, i);
          for (size_t r = 1; r < n; ++r)
            acc = op == XAL_OP_SUM ? acc + small_value(r, i) : std::max(acc, small_value(r, i));
          encode(dt, acc, expect.data() + i * es);
        }
        for (size_t r = 0; r < n; ++r) {
          std::vector<unsigned char> v(c * es);
          for (size_t i = 0; i < c; ++i) encode(dt, small_value(r, i), v.data() + i * es);
          ASSERT_XAL_OK(xal_memcpy_htod(stream[r], send[r], v.data(), v.size()));
          ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
        }
        for (uint32_t root = 0; root < n; ++root) {
          for (size_t r = 0; r < n; ++r)
            ASSERT_XAL_OK(xal_memcpy_htod(stream[r], recv[r], sentinel.data(), sentinel.size()));
          each([&](size_t r) { return xal_reduce(comm[r], send[r], recv[r], c, dt, op, root, stream[r]); });
          for (size_t r = 0; r < n; ++r) {
            std::vector<unsigned char> got(sentinel.size());
            ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], got.data(), recv[r], got.size()));
            ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
            const size_t written = r == root ? c * es : 0;
            for (size_t b = 0; b < written; ++b)
              ASSERT_EQ(got[b], expect[b]) << "root " << root << " element " << b / es;
            for (size_t b = written; b < got.size(); ++b)
              ASSERT_EQ(got[b], kSentinel) << "root " << root << " rank " << r << " byte " << b;
          }
        }
      }
    }
  }
  // In place at the root.
  ASSERT_NO_FATAL_FAILURE(fill(kMaxCount));
  for (size_t r = 0; r < n; ++r)
    ASSERT_XAL_OK(xal_memcpy_dtod(stream[r], recv[r], send[r], kMaxCount * 4));
  const uint32_t root = static_cast<uint32_t>(n - 1);
  each([&](size_t r) {
    const xal_devptr_t in = r == root ? recv[r] : send[r];
    return xal_reduce(comm[r], in, recv[r], kMaxCount, XAL_DTYPE_I32, XAL_OP_SUM, root, stream[r]);
  });
  const auto got = get(root, kMaxCount);
  for (size_t i = 0; i < kMaxCount; ++i) {
    int32_t sum = 0;
    for (size_t r = 0; r < n; ++r) sum += value(r, i);
    ASSERT_EQ(got[i], sum) << i;
  }
  for (size_t r = 0; r < n; ++r) EXPECT_EQ(async_error(r), XAL_SUCCESS);
}

// The layout collectives in place, chunked (1 KiB: 85 or 51 i32 of every
// rank block per chunk): the mock ranks' runs use their buffers in place,
// block by block; the test plugins' ranks are staged piece by piece.
TEST_P(MixedComm, LayoutCollectivesInPlace) {
  const size_t n = size();
  for (size_t c : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}}) {
    SCOPED_TRACE("count " + std::to_string(c));
    auto put = [&](size_t r, const std::vector<int32_t>& v) {
      ASSERT_XAL_OK(xal_memcpy_htod(stream[r], recv[r], v.data(), v.size() * 4));
      ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
    };
    for (size_t r = 0; r < n; ++r) {  // allgather: each input is its own block
      std::vector<int32_t> v(c * n, -1);
      for (size_t i = 0; i < c; ++i) v[r * c + i] = value(r, i);
      ASSERT_NO_FATAL_FAILURE(put(r, v));
    }
    each([&](size_t r) {
      return xal_allgather(comm[r], recv[r] + r * c * 4, recv[r], c, XAL_DTYPE_I32, stream[r]);
    });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c * n);
      for (size_t i = 0; i < c * n; ++i) ASSERT_EQ(got[i], value(i / c, i % c)) << "allgather rank " << r;
    }
    auto fill_recv = [&] {
      for (size_t r = 0; r < n; ++r) {
        std::vector<int32_t> v(c * n);
        for (size_t i = 0; i < v.size(); ++i) v[i] = value(r, i);
        ASSERT_NO_FATAL_FAILURE(put(r, v));
      }
    };
    ASSERT_NO_FATAL_FAILURE(fill_recv());  // reduce_scatter: the output is the rank's block
    each([&](size_t r) {
      return xal_reduce_scatter(comm[r], recv[r], recv[r] + r * c * 4, c, XAL_DTYPE_I32, XAL_OP_SUM,
                                stream[r]);
    });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c * n);
      for (size_t i = 0; i < c; ++i) {
        int32_t sum = 0;
        for (size_t j = 0; j < n; ++j) sum += value(j, r * c + i);
        ASSERT_EQ(got[r * c + i], sum) << "reduce_scatter rank " << r << " at " << i;
      }
    }
    ASSERT_NO_FATAL_FAILURE(fill_recv());  // alltoall: send == recv
    each([&](size_t r) { return xal_alltoall(comm[r], recv[r], recv[r], c, XAL_DTYPE_I32, stream[r]); });
    for (size_t r = 0; r < n; ++r) {
      const auto got = get(r, c * n);
      for (size_t i = 0; i < c * n; ++i) ASSERT_EQ(got[i], value(i / c, r * c + i % c)) << "alltoall rank " << r;
    }
  }
  for (size_t r = 0; r < n; ++r) EXPECT_EQ(async_error(r), XAL_SUCCESS);
}

namespace {

// Positive, not integers: a group's sum is rounded in f16 and bf16.
double avg_input(size_t rank, size_t i) { return 0.25 + static_cast<double>((rank * 7 + i * 3) % 13) * 0.37; }

void store(xal_dtype_t dt, double v, unsigned char* out) {
  switch (dt) {
    case XAL_DTYPE_F16: { const uint16_t h = xal::common::float_to_f16(static_cast<float>(v)); std::memcpy(out, &h, 2); break; }
    case XAL_DTYPE_BF16: { const uint16_t h = xal::common::float_to_bf16(static_cast<float>(v)); std::memcpy(out, &h, 2); break; }
    case XAL_DTYPE_F32: { const auto f = static_cast<float>(v); std::memcpy(out, &f, 4); break; }
    default: std::memcpy(out, &v, 8); break;
  }
}

double load(xal_dtype_t dt, const unsigned char* p) {
  uint16_t h = 0;
  switch (dt) {
    case XAL_DTYPE_F16: std::memcpy(&h, p, 2); return xal::common::f16_to_float(h);
    case XAL_DTYPE_BF16: std::memcpy(&h, p, 2); return xal::common::bf16_to_float(h);
    case XAL_DTYPE_F32: { float f; std::memcpy(&f, p, 4); return f; }
    default: { double d; std::memcpy(&d, p, 8); return d; }
  }
}

}  // namespace

// Avg through the groups: a native sum inside each group, the leaders'
// exchange dividing by every rank. Within the conformance group's
// tolerance (relative, f16 1e-3, bf16 8e-3, f32 1e-6) of the average
// computed in double, for allreduce (in and out of place) and reduce to
// every root.
TEST_P(MixedComm, GroupedAverageWithinTolerance) {
  const size_t n = size();
  for (xal_dtype_t dt : {XAL_DTYPE_F16, XAL_DTYPE_BF16, XAL_DTYPE_F32, XAL_DTYPE_F64}) {
    const size_t es = xal::common::dtype_size(dt);
    const double tol = dt == XAL_DTYPE_F16 ? 1e-3 : dt == XAL_DTYPE_BF16 ? 8e-3 : dt == XAL_DTYPE_F32 ? 1e-6 : 1e-12;
    for (size_t c : {size_t{1}, size_t{7}, size_t{1023}, kMaxCount}) {
      SCOPED_TRACE(std::string(xal::common::dtype_name(dt)) + " count " + std::to_string(c));
      for (size_t r = 0; r < n; ++r) {
        std::vector<unsigned char> v(c * es);
        for (size_t i = 0; i < c; ++i) store(dt, avg_input(r, i), v.data() + i * es);
        ASSERT_XAL_OK(xal_memcpy_htod(stream[r], send[r], v.data(), v.size()));
        ASSERT_XAL_OK(xal_memcpy_htod(stream[r], recv[r], v.data(), v.size()));
        ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
      }
      auto check = [&](size_t r, const char* what) {
        std::vector<unsigned char> got(c * es);
        ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], got.data(), recv[r], got.size()));
        ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
        for (size_t i = 0; i < c; ++i) {
          double want = 0;
          for (size_t j = 0; j < n; ++j) want += avg_input(j, i);
          want /= static_cast<double>(n);
          const double a = load(dt, got.data() + i * es);
          ASSERT_LE(std::fabs(a - want), tol * std::max(1.0, std::fabs(want)))
              << what << " rank " << r << " element " << i << ": got " << a << ", want " << want;
        }
      };
      // In place first (recv holds the input), then out of place.
      each([&](size_t r) { return xal_allreduce(comm[r], recv[r], recv[r], c, dt, XAL_OP_AVG, stream[r]); });
      for (size_t r = 0; r < n; ++r) ASSERT_NO_FATAL_FAILURE(check(r, "allreduce in place"));
      each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], c, dt, XAL_OP_AVG, stream[r]); });
      for (size_t r = 0; r < n; ++r) ASSERT_NO_FATAL_FAILURE(check(r, "allreduce"));
      for (uint32_t root = 0; root < n; ++root) {
        each([&](size_t r) { return xal_reduce(comm[r], send[r], recv[r], c, dt, XAL_OP_AVG, root, stream[r]); });
        ASSERT_NO_FATAL_FAILURE(check(root, "reduce"));
      }
    }
  }
  // Integers still have no avg, grouped or not.
  EXPECT_XAL_ERROR(xal_allreduce(comm[0], send[0], recv[0], 4, XAL_DTYPE_I32, XAL_OP_AVG, stream[0]),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(last_error().message).find("avg"), std::string::npos) << last_error().message;
  EXPECT_XAL_ERROR(xal_reduce(comm[1], send[1], recv[1], 4, XAL_DTYPE_U8, XAL_OP_AVG, 0, stream[1]),
                   XAL_ERROR_NOT_SUPPORTED);
  for (size_t r = 0; r < n; ++r) EXPECT_EQ(async_error(r), XAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Layouts, MixedComm,
                         ::testing::Values(Layout{"TwoMockOneTestdev", 2, "tmm"},
                                           Layout{"ThreeMockTwoOthers", 3, "mtmum"}),
                         [](const auto& info) { return std::string(info.param.name); });

// Only the mock group calls: the leaders' exchange times out naming the
// missing slot's rank, and the communicator stays broken.
TEST_F(MixedGroups, LeadersExchangeTimesOut) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 200));
  for (size_t r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allreduce(comm[r], send[r], recv[r], 600, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]));
  // The mock may report its own native timeout on the streams too.
  for (size_t r = 0; r < 2; ++r) {
    const xal_status_t s = xal_stream_synchronize(stream[r]);
    EXPECT_TRUE(s == XAL_SUCCESS || s == XAL_ERROR_TIMEOUT) << s;
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_XAL_ERROR(xal_allreduce(comm[2], send[2], recv[2], 600, XAL_DTYPE_I32, XAL_OP_SUM, stream[2]),
                   XAL_ERROR_TIMEOUT);
  const std::string m = last_error().message;
  EXPECT_NE(m.find("rank(s) 1"), std::string::npos) << m;
  EXPECT_NE(m.find("slot 1 = rank 2"), std::string::npos) << m;
}

// Avg runs through the groups too: with only the mock group calling, it is
// the leaders' exchange (slot 1 = rank 2) that times out, not a rendezvous
// of every rank.
TEST_F(MixedGroups, AverageTakesTheLeadersExchange) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 200));
  for (size_t r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allreduce(comm[r], send[r], recv[r], 600, XAL_DTYPE_F32, XAL_OP_AVG, stream[r]));
  for (size_t r = 0; r < 2; ++r) {
    const xal_status_t s = xal_stream_synchronize(stream[r]);
    EXPECT_TRUE(s == XAL_SUCCESS || s == XAL_ERROR_TIMEOUT) << s;
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_XAL_ERROR(xal_allreduce(comm[2], send[2], recv[2], 600, XAL_DTYPE_F32, XAL_OP_AVG, stream[2]),
                   XAL_ERROR_TIMEOUT);
  const std::string m = last_error().message;
  EXPECT_NE(m.find("rank(s) 1"), std::string::npos) << m;
  EXPECT_NE(m.find("slot 1 = rank 2"), std::string::npos) << m;
}

TEST_F(MixedGroups, AbortUnblocksTheGroups) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 60000));
  for (size_t r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allreduce(comm[r], send[r], recv[r], 600, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]));
  ASSERT_XAL_OK(xal_comm_abort(comm[2]));
  // The mock reports its aborted native collective on the stream too.
  for (size_t r = 0; r < 2; ++r) {
    const xal_status_t s = xal_stream_synchronize(stream[r]);
    EXPECT_TRUE(s == XAL_SUCCESS || s == XAL_ERROR_ABORTED) << s;
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(1), XAL_ERROR_ABORTED);
  EXPECT_XAL_ERROR(xal_broadcast(comm[1], send[1], recv[1], 4, XAL_DTYPE_I32, 0, stream[1]),
                   XAL_ERROR_ABORTED);
}

// A reset takes the device's collective state with it: the communicators
// with a rank there are aborted first (the native mock communicator, and a
// mixed one, whose other ranks see it too). Destroying them stays clean.
TEST_F(MixedGroups, ResetAbortsTheDevicesCommunicators) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 3, "mmt"}, 60000));
  xal_device_t pair[2] = {dev[0], nullptr};
  ASSERT_XAL_OK(xal_device_get(2, &pair[1]));  // the third mock card
  xal_comm_t native[2] = {nullptr, nullptr};
  ASSERT_XAL_OK(xal_comm_create(pair, 2, nullptr, native));
  EXPECT_EQ(async_error(0), XAL_SUCCESS);
  ASSERT_XAL_OK(xal_device_reset(dev[0]));
  xal_status_t e = XAL_SUCCESS;
  ASSERT_XAL_OK(xal_comm_get_async_error(native[0], &e));
  EXPECT_EQ(e, XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(1), XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(2), XAL_ERROR_ABORTED);
  // New buffers and a stream on the reset device: the old communicators
  // refuse work.
  xal_stream_t s = nullptr;
  xal_devptr_t buf = 0;
  ASSERT_XAL_OK(xal_stream_create(dev[0], 0, &s));
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], 64, &buf));
  EXPECT_XAL_ERROR(xal_allreduce(native[0], buf, buf, 4, XAL_DTYPE_I32, XAL_OP_SUM, s),
                   XAL_ERROR_ABORTED);
  EXPECT_XAL_ERROR(xal_allreduce(comm[0], buf, buf, 4, XAL_DTYPE_I32, XAL_OP_SUM, s),
                   XAL_ERROR_ABORTED);
  // A communicator on the other devices only is untouched.
  xal_device_t others[2] = {dev[1], pair[1]};
  xal_comm_t fresh[2] = {nullptr, nullptr};
  ASSERT_XAL_OK(xal_comm_create(others, 2, nullptr, fresh));
  ASSERT_XAL_OK(xal_device_reset(dev[0]));
  ASSERT_XAL_OK(xal_comm_get_async_error(fresh[0], &e));
  EXPECT_EQ(e, XAL_SUCCESS);
  for (xal_comm_t c : {native[0], native[1], fresh[0], fresh[1]}) EXPECT_XAL_OK(xal_comm_destroy(c));
}

// A collective whose host step fails inside the stream (here: the other
// rank never calls, and the exchange times out) fails that stream's next
// synchronize, as a native library's failed collective does, and not only
// the communicator's async error. Rank 0 is a mock card (host views: one
// host function), rank 1 a testdev card (staged in chunks).
class HostStepFailure : public MixedGroups {
 protected:
  void only_rank_calls(size_t alone) {
    ASSERT_NO_FATAL_FAILURE(start(Layout{"", 1, "mt"}, 300));
    ASSERT_NO_FATAL_FAILURE(fill(64));
    ASSERT_XAL_OK(xal_allgather(comm[alone], send[alone], recv[alone], 64, XAL_DTYPE_I32,
                                stream[alone]));
    EXPECT_XAL_ERROR(xal_stream_synchronize(stream[alone]), XAL_ERROR_TIMEOUT);
    EXPECT_NE(std::string(last_error().message).find("allgather: timed out"), std::string::npos)
        << last_error().message;
    EXPECT_EQ(async_error(alone), XAL_ERROR_TIMEOUT);
    EXPECT_XAL_OK(xal_stream_synchronize(stream[alone]));  // reported once
  }
};

TEST_F(HostStepFailure, OnAHostViewRankReachesTheStream) { only_rank_calls(0); }
TEST_F(HostStepFailure, OnAStagedRankReachesTheStream) { only_rank_calls(1); }

// The test plugin's rank asks for a different count: the mismatch reaches
// every rank, and the next call pairs correctly.
TEST_F(MixedGroups, MismatchAcrossGroups) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mtm"}));
  ASSERT_NO_FATAL_FAILURE(fill(kMaxCount));
  each([&](size_t r) {
    return xal_allreduce(comm[r], send[r], recv[r], r == 1 ? 700 : 900, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]);
  });
  each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], 900, XAL_DTYPE_I32, XAL_OP_MAX, stream[r]); });
  // The first call's mismatch reaches every rank's stream (the mock
  // group's member too); the second call is unaffected.
  for (size_t r = 0; r < 3; ++r)
    EXPECT_XAL_ERROR(xal_stream_synchronize(stream[r]), XAL_ERROR_COLLECTIVE_MISMATCH);
  for (size_t r = 0; r < 3; ++r) {
    const auto got = get(r, 900);
    for (size_t i = 0; i < 900; ++i) ASSERT_EQ(got[i], value(2, i)) << r << " " << i;
  }
  EXPECT_EQ(async_error(1), XAL_ERROR_COLLECTIVE_MISMATCH);
}

// XAL_COMM_FORCE_PATH=hierarchical on one backend: one native group whose
// leader alone is the leaders' exchange.
TEST_F(MixedGroups, ForcedOnOneBackend) {
  ScopedEnv force("XAL_COMM_FORCE_PATH", "hierarchical");
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 3, "mmm"}));
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(comm[2], &info));
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_HIERARCHICAL));
  ASSERT_NO_FATAL_FAILURE(fill(kMaxCount));
  each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], kMaxCount, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]); });
  for (size_t r = 0; r < 3; ++r) {
    const auto got = get(r, kMaxCount);
    for (size_t i = 0; i < kMaxCount; ++i) ASSERT_EQ(got[i], value(0, i) + value(1, i) + value(2, i));
  }
  each([&](size_t r) { return xal_broadcast(comm[r], send[r], recv[r], kMaxCount, XAL_DTYPE_I32, 1, stream[r]); });
  for (size_t r = 0; r < 3; ++r) {
    const auto got = get(r, kMaxCount);
    for (size_t i = 0; i < kMaxCount; ++i) ASSERT_EQ(got[i], value(1, i));
  }
  // Avg: the one group is the whole communicator; its native avg divides.
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(kMaxCount, static_cast<float>(3 * r + 1));
    ASSERT_XAL_OK(xal_memcpy_htod(stream[r], send[r], v.data(), v.size() * 4));
  }
  each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], kMaxCount, XAL_DTYPE_F32, XAL_OP_AVG, stream[r]); });
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(kMaxCount);
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], v.data(), recv[r], v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
    for (float x : v) ASSERT_FLOAT_EQ(x, 4.0f) << r;
  }
}

// Two mock ranks each call reduce as its root: rather than meet twice in
// the leaders' exchange, the second reports the mismatch and the
// communicator is aborted.
TEST_F(MixedGroups, ReduceRootDisagreementInAGroup) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 60000));
  ASSERT_NO_FATAL_FAILURE(fill(kMaxCount));
  ASSERT_XAL_OK(xal_reduce(comm[0], send[0], recv[0], 900, XAL_DTYPE_I32, XAL_OP_SUM, 0, stream[0]));
  EXPECT_XAL_ERROR(xal_reduce(comm[1], send[1], recv[1], 900, XAL_DTYPE_I32, XAL_OP_SUM, 1, stream[1]),
                   XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_NE(std::string(last_error().message).find("disagree"), std::string::npos)
      << last_error().message;
  for (size_t r = 0; r < 2; ++r) {
    const xal_status_t s = xal_stream_synchronize(stream[r]);
    EXPECT_TRUE(s == XAL_SUCCESS || s == XAL_ERROR_ABORTED) << s;
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_XAL_ERROR(xal_reduce(comm[2], send[2], recv[2], 900, XAL_DTYPE_I32, XAL_OP_SUM, 0, stream[2]),
                   XAL_ERROR_ABORTED);
}

// xal_shutdown aborts a collective that waits for a rank that never calls,
// on either path, instead of waiting out the communicator's timeout.
class ShutdownWithAWaitingRank : public ::testing::TestWithParam<const char*> {};

TEST_P(ShutdownWithAWaitingRank, ShutdownAbortsIt) {
  ScopedEnv cards("XAL_MOCK_DEVICES", "2*a100-40g");
  ScopedEnv path("XAL_COMM_FORCE_PATH", GetParam());
  ASSERT_XAL_OK(init(mock_plugin()));
  xal_device_t devs[2];
  for (uint32_t i = 0; i < 2; ++i) ASSERT_XAL_OK(xal_device_get(i, &devs[i]));
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(devs[0], 0, &s));
  xal_devptr_t buf;
  ASSERT_XAL_OK(xal_mem_alloc(devs[0], 64, &buf));
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = 45000;  // longer than the wait below
  xal_comm_t comms[2];
  ASSERT_XAL_OK(xal_comm_create(devs, 2, &o, comms));
  ASSERT_XAL_OK(xal_allreduce(comms[0], buf, buf, 16, XAL_DTYPE_F32, XAL_OP_SUM, s));
  auto done = std::async(std::launch::async, [] { return xal_shutdown(); });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "xal_shutdown waited for the communicator's timeout";
  EXPECT_EQ(done.get(), XAL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Paths, ShutdownWithAWaitingRank,
                         ::testing::Values("native", "hierarchical"));

// Ranks of a native (mock) communicator that disagree: each stream reports
// the mismatch, and so does xal_comm_get_async_error, the communicator's
// first asynchronous error.
TEST(NativeMismatch, IsTheCommunicatorsAsyncError) {
  ScopedEnv cards("XAL_MOCK_DEVICES", "2*a100-40g");
  ASSERT_XAL_OK(init(mock_plugin()));
  xal_device_t devs[2];
  xal_stream_t s[2];
  xal_devptr_t buf[2];
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_XAL_OK(xal_device_get(i, &devs[i]));
    ASSERT_XAL_OK(xal_stream_create(devs[i], 0, &s[i]));
    ASSERT_XAL_OK(xal_mem_alloc(devs[i], 64, &buf[i]));
  }
  xal_comm_t comms[2];
  ASSERT_XAL_OK(xal_comm_create(devs, 2, nullptr, comms));
  for (uint32_t i = 0; i < 2; ++i)
    ASSERT_XAL_OK(xal_allreduce(comms[i], buf[i], buf[i], i ? 8 : 4, XAL_DTYPE_F32, XAL_OP_SUM, s[i]));
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(xal_stream_synchronize(s[i]), XAL_ERROR_COLLECTIVE_MISMATCH);
    xal_status_t async = XAL_SUCCESS;
    ASSERT_XAL_OK(xal_comm_get_async_error(comms[i], &async));
    EXPECT_EQ(async, XAL_ERROR_COLLECTIVE_MISMATCH) << "rank " << i;
  }
  for (xal_comm_t c : comms) ASSERT_XAL_OK(xal_comm_destroy(c));
  ASSERT_XAL_OK(xal_shutdown());
}

// The leaders' exchange fails (the test plugin's rank asks for another
// count): the stream of every rank fails with the mismatch, the members of
// the mock group that did not take part in the exchange included, for the
// grouped collectives and roots in either group. The communicator stays
// usable.
TEST_F(MixedGroups, ALeadersExchangeFailureReachesEveryMember) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 60000));
  ASSERT_NO_FATAL_FAILURE(fill(kMaxCount));
  auto count = [](size_t r) { return r == 2 ? size_t{700} : size_t{900}; };
  const std::vector<std::pair<std::string, std::function<xal_status_t(size_t)>>> calls = {
      {"allreduce", [&](size_t r) {
         return xal_allreduce(comm[r], send[r], recv[r], count(r), XAL_DTYPE_I32, XAL_OP_SUM, stream[r]);
       }},
      {"broadcast from the group", [&](size_t r) {
         return xal_broadcast(comm[r], send[r], recv[r], count(r), XAL_DTYPE_I32, 0, stream[r]);
       }},
      {"broadcast to the group", [&](size_t r) {
         return xal_broadcast(comm[r], send[r], recv[r], count(r), XAL_DTYPE_I32, 2, stream[r]);
       }},
      {"reduce to a member", [&](size_t r) {
         return xal_reduce(comm[r], send[r], recv[r], count(r), XAL_DTYPE_I32, XAL_OP_SUM, 1, stream[r]);
       }},
      {"reduce out of the group", [&](size_t r) {
         return xal_reduce(comm[r], send[r], recv[r], count(r), XAL_DTYPE_I32, XAL_OP_SUM, 2, stream[r]);
       }},
  };
  for (const auto& [what, call] : calls) {
    SCOPED_TRACE(what);
    each(call);
    for (size_t r = 0; r < 3; ++r) {
      EXPECT_XAL_ERROR(xal_stream_synchronize(stream[r]), XAL_ERROR_COLLECTIVE_MISMATCH);
      EXPECT_XAL_OK(xal_stream_synchronize(stream[r]));  // reported once
    }
  }
  each([&](size_t r) { return xal_allreduce(comm[r], send[r], recv[r], 900, XAL_DTYPE_I32, XAL_OP_MAX, stream[r]); });
  for (size_t r = 0; r < 3; ++r) {
    const auto got = get(r, 900);
    for (size_t i = 0; i < 900; ++i) ASSERT_EQ(got[i], value(2, i)) << r << " " << i;
  }
}

// The mock group's leader issues an allgather on its stream, an alltoall
// on a second stream of its device, then a grouped allreduce on its
// stream; its peers issue the same 200 ms later on their one stream. The
// leader's calls run in issue order.
TEST_F(MixedGroups, ALeaderOnTwoStreamsKeepsIssueOrder) {
  ASSERT_NO_FATAL_FAILURE(start(Layout{"", 2, "mmt"}, 10000));
  constexpr size_t c = 300;
  ASSERT_NO_FATAL_FAILURE(fill(3 * c));
  xal_stream_t second = nullptr;
  ASSERT_XAL_OK(xal_stream_create(dev[0], 0, &second));
  xal_devptr_t exchanged = 0, summed = 0;
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], 3 * c * 4, &exchanged));
  ASSERT_XAL_OK(xal_mem_alloc(dev[0], c * 4, &summed));
  ASSERT_XAL_OK(xal_allgather(comm[0], send[0], recv[0], c, XAL_DTYPE_I32, stream[0]));
  ASSERT_XAL_OK(xal_alltoall(comm[0], send[0], exchanged, c, XAL_DTYPE_I32, second));
  ASSERT_XAL_OK(xal_allreduce(comm[0], send[0], summed, c, XAL_DTYPE_I32, XAL_OP_SUM, stream[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<xal_devptr_t> other(3);
  for (size_t r = 1; r < 3; ++r) {
    ASSERT_XAL_OK(xal_mem_alloc(dev[r], 3 * c * 4, &other[r]));
    ASSERT_XAL_OK(xal_allgather(comm[r], send[r], recv[r], c, XAL_DTYPE_I32, stream[r]));
    ASSERT_XAL_OK(xal_alltoall(comm[r], send[r], other[r], c, XAL_DTYPE_I32, stream[r]));
    ASSERT_XAL_OK(xal_allreduce(comm[r], send[r], send[r], c, XAL_DTYPE_I32, XAL_OP_SUM, stream[r]));
  }
  ASSERT_XAL_OK(xal_stream_synchronize(second));
  for (size_t r = 0; r < 3; ++r) {
    const auto gathered = get(r, 3 * c);
    for (size_t i = 0; i < 3 * c; ++i) ASSERT_EQ(gathered[i], value(i / c, i % c)) << r << " " << i;
    std::vector<int32_t> all(3 * c), sum(c);
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], all.data(), r ? other[r] : exchanged, all.size() * 4));
    ASSERT_XAL_OK(xal_memcpy_dtoh(stream[r], sum.data(), r ? send[r] : summed, sum.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream[r]));
    for (size_t i = 0; i < 3 * c; ++i) ASSERT_EQ(all[i], value(i / c, r * c + i % c)) << r << " " << i;
    for (size_t i = 0; i < c; ++i) ASSERT_EQ(sum[i], value(0, i) + value(1, i) + value(2, i)) << r << " " << i;
    EXPECT_EQ(async_error(r), XAL_SUCCESS);
  }
  ASSERT_XAL_OK(xal_stream_destroy(second));
}
