// Group "collectives", continued: point-to-point (xal_send, xal_recv), the
// v-collectives (allgatherv, reduce_scatterv, alltoallv), gather, scatter,
// and xal_comm_split / xal_comm_dup, on each device set, checked bitwise
// against references computed here (the data are byte patterns, and
// reduce_scatterv sums small integers, exact in every dtype).
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"
#include "xal_common/reduce.hpp"

namespace {

uint8_t pattern(uint32_t r, size_t i) { return static_cast<uint8_t>(r * 37 + i * 11 + 1); }

class PointToPoint : public conform::DeviceSetTest {
 protected:
  void SetUp() override {
    conform::DeviceSetTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::vector<xal_device_t> devs;
    for (const auto* d : devices()) devs.push_back(d->handle);
    comms_.resize(devs.size());
    const xal_status_t s = xal_comm_create(devs.data(), n(), nullptr, comms_.data());
    if (s == XAL_ERROR_NOT_SUPPORTED) GTEST_SKIP() << conform::kUnsupported << conform::describe(s);
    ASSERT_EQ(s, XAL_SUCCESS) << conform::describe(s);
    for (const auto* d : devices()) {
      streams_.push_back(std::make_unique<conform::Stream>(d->handle));
      XAL_ASSERT_OK(streams_.back()->status());
      send_.push_back(std::make_unique<conform::DeviceBuffer>(d->handle, kBytes));
      recv_.push_back(std::make_unique<conform::DeviceBuffer>(d->handle, kBytes));
      XAL_ASSERT_OK(send_.back()->status());
      XAL_ASSERT_OK(recv_.back()->status());
    }
  }
  void TearDown() override {
    for (xal_comm_t c : comms_) {
      if (c) xal_comm_destroy(c);
    }
  }
  uint32_t n() const { return static_cast<uint32_t>(devices().size()); }
  xal_stream_t st(uint32_t r) { return streams_[r]->get(); }
  xal_devptr_t sp(uint32_t r) { return send_[r]->ptr(); }
  xal_devptr_t rp(uint32_t r) { return recv_[r]->ptr(); }

  // Send buffers hold pattern(r, i), receive buffers 0xA5.
  void fill() {
    std::vector<uint8_t> v(kBytes);
    for (uint32_t r = 0; r < n(); ++r) {
      for (size_t i = 0; i < kBytes; ++i) v[i] = pattern(r, i);
      XAL_ASSERT_OK(xal_memcpy_htod(st(r), sp(r), v.data(), kBytes));
      XAL_ASSERT_OK(xal_memset(st(r), rp(r), 0xA5, kBytes));
      XAL_ASSERT_OK(xal_stream_synchronize(st(r)));
    }
  }
  std::vector<uint8_t> read(uint32_t r, size_t bytes) {
    std::vector<uint8_t> v(bytes);
    EXPECT_EQ(xal_memcpy_dtoh(st(r), v.data(), rp(r), bytes), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_synchronize(st(r)), XAL_SUCCESS);
    return v;
  }
  // call(r) on every rank in one group, then every stream must pass.
  void grouped(const std::function<xal_status_t(uint32_t)>& call) {
    XAL_ASSERT_OK(xal_group_start());
    for (uint32_t r = 0; r < n(); ++r) {
      EXPECT_EQ(call(r), XAL_SUCCESS) << "rank " << r;
    }
    XAL_ASSERT_OK(xal_group_end());
    for (uint32_t r = 0; r < n(); ++r) XAL_ASSERT_OK(xal_stream_synchronize(st(r)));
  }

  static constexpr size_t kBytes = size_t{1} << 18;
  std::vector<xal_comm_t> comms_;
  std::vector<std::unique_ptr<conform::Stream>> streams_;
  std::vector<std::unique_ptr<conform::DeviceBuffer>> send_, recv_;
};

const xal_dtype_t kDtypes[] = {XAL_DTYPE_I8,  XAL_DTYPE_U8,  XAL_DTYPE_I32, XAL_DTYPE_U32,
                               XAL_DTYPE_I64, XAL_DTYPE_U64, XAL_DTYPE_F16, XAL_DTYPE_BF16,
                               XAL_DTYPE_F32, XAL_DTYPE_F64};

TEST_P(PointToPoint, SendRecvRingEveryDtype) {
  for (xal_dtype_t d : kDtypes)
    for (size_t count : {size_t{0}, size_t{1}, size_t{1023}, size_t{4099}}) {
      SCOPED_TRACE(std::string(xal::common::dtype_name(d)) + " count " + std::to_string(count));
      ASSERT_NO_FATAL_FAILURE(fill());
      grouped([&](uint32_t r) {
        xal_status_t s = xal_send(comms_[r], sp(r), count, d, (r + 1) % n(), st(r));
        return s ? s : xal_recv(comms_[r], rp(r), count, d, (r + n() - 1) % n(), st(r));
      });
      const size_t bytes = count * xal::common::dtype_size(d);
      for (uint32_t r = 0; r < n(); ++r) {
        const auto got = read(r, bytes + 1);
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], pattern((r + n() - 1) % n(), i)) << r;
        ASSERT_EQ(got[bytes], 0xA5) << "rank " << r << " wrote past its count";
      }
    }
}

TEST_P(PointToPoint, AllgathervAlltoallvGatherScatter) {
  for (size_t unit : {size_t{0}, size_t{1}, size_t{257}}) {
    SCOPED_TRACE("unit " + std::to_string(unit));
    std::vector<size_t> c(n()), d(n());
    for (uint32_t p = 0; p < n(); ++p) c[p] = unit * (p + 1), d[p] = unit * p * (p + 1) / 2 + p;
    ASSERT_NO_FATAL_FAILURE(fill());
    grouped([&](uint32_t r) {
      return xal_allgatherv(comms_[r], sp(r), c[r], rp(r), c.data(), d.data(), XAL_DTYPE_U8, st(r));
    });
    for (uint32_t r = 0; r < n(); ++r) {
      const auto got = read(r, d[n() - 1] + c[n() - 1]);
      for (uint32_t p = 0; p < n(); ++p)
        for (size_t i = 0; i < c[p]; ++i) ASSERT_EQ(got[d[p] + i], pattern(p, i)) << r << " " << p;
    }
    // alltoallv: every rank sends c[q] elements to q from d[q].
    ASSERT_NO_FATAL_FAILURE(fill());
    std::vector<size_t> rc(n()), rd(n());
    grouped([&](uint32_t r) {
      for (uint32_t p = 0; p < n(); ++p) rc[p] = c[r], rd[p] = p * c[r];
      return xal_alltoallv(comms_[r], sp(r), c.data(), d.data(), rp(r), rc.data(), rd.data(),
                           XAL_DTYPE_U8, st(r));
    });
    for (uint32_t r = 0; r < n(); ++r) {
      const auto got = read(r, n() * c[r]);
      for (uint32_t p = 0; p < n(); ++p)
        for (size_t i = 0; i < c[r]; ++i) ASSERT_EQ(got[p * c[r] + i], pattern(p, d[r] + i)) << r << " " << p;
    }
    const uint32_t root = n() - 1;
    ASSERT_NO_FATAL_FAILURE(fill());
    grouped([&](uint32_t r) { return xal_gather(comms_[r], sp(r), rp(r), unit, XAL_DTYPE_U8, root, st(r)); });
    const auto gathered = read(root, n() * unit);
    for (uint32_t p = 0; p < n(); ++p)
      for (size_t i = 0; i < unit; ++i) ASSERT_EQ(gathered[p * unit + i], pattern(p, i));
    grouped([&](uint32_t r) { return xal_scatter(comms_[r], sp(r), rp(r), unit, XAL_DTYPE_U8, root, st(r)); });
    for (uint32_t r = 0; r < n(); ++r) {
      const auto got = read(r, unit);
      for (size_t i = 0; i < unit; ++i) ASSERT_EQ(got[i], pattern(root, r * unit + i));
    }
  }
}

// Ones everywhere: rank i's block sums to n in every dtype.
TEST_P(PointToPoint, ReduceScattervSumEveryDtype) {
  std::vector<size_t> counts(n());
  for (uint32_t p = 0; p < n(); ++p) counts[p] = 100 + 3 * p;
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  for (xal_dtype_t d : kDtypes) {
    SCOPED_TRACE(xal::common::dtype_name(d));
    const size_t es = xal::common::dtype_size(d);
    auto encode = [&](double v, uint8_t* p) {
      switch (d) {
        case XAL_DTYPE_F16: { const uint16_t h = xal::common::float_to_f16(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
        case XAL_DTYPE_BF16: { const uint16_t h = xal::common::float_to_bf16(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
        case XAL_DTYPE_F32: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case XAL_DTYPE_F64: std::memcpy(p, &v, 8); break;
        default: { const uint64_t x = static_cast<uint64_t>(v); std::memcpy(p, &x, es); break; }
      }
    };
    std::vector<uint8_t> ones(total * es), want(es);
    for (size_t i = 0; i < total; ++i) encode(1, ones.data() + i * es);
    encode(n(), want.data());
    for (uint32_t r = 0; r < n(); ++r) {
      XAL_ASSERT_OK(xal_memcpy_htod(st(r), sp(r), ones.data(), ones.size()));
      XAL_ASSERT_OK(xal_stream_synchronize(st(r)));
    }
    grouped([&](uint32_t r) {
      return xal_reduce_scatterv(comms_[r], sp(r), rp(r), counts.data(), d, XAL_OP_SUM, st(r));
    });
    for (uint32_t r = 0; r < n(); ++r) {
      const auto got = read(r, counts[r] * es);
      for (size_t i = 0; i < counts[r]; ++i)
        ASSERT_EQ(std::memcmp(got.data() + i * es, want.data(), es), 0) << "rank " << r << " at " << i;
    }
  }
}

// A send and a receive of different counts: COLLECTIVE_MISMATCH on both
// streams, never a hang (rank 0 to itself when the set has one device).
TEST_P(PointToPoint, MismatchedCountsFail) {
  const uint32_t to = n() > 1 ? 1 : 0;
  XAL_ASSERT_OK(xal_group_start());
  XAL_EXPECT_OK(xal_send(comms_[0], sp(0), 10, XAL_DTYPE_U8, to, st(0)));
  XAL_EXPECT_OK(xal_recv(comms_[to], rp(to), 11, XAL_DTYPE_U8, 0, st(to)));
  XAL_ASSERT_OK(xal_group_end());
  EXPECT_EQ(xal_stream_synchronize(st(0)), XAL_ERROR_COLLECTIVE_MISMATCH);
  if (to != 0) {
    EXPECT_EQ(xal_stream_synchronize(st(to)), XAL_ERROR_COLLECTIVE_MISMATCH);
  }
}

// split by parity with the keys reversed, then dup: sizes and ranks as
// ncclCommSplit defines them.
TEST_P(PointToPoint, SplitAndDupOrderRanks) {
  std::vector<xal_comm_t> child(n(), nullptr), dup(n(), nullptr);
  XAL_ASSERT_OK(xal_group_start());
  for (uint32_t r = 0; r < n(); ++r)
    XAL_EXPECT_OK(xal_comm_split(comms_[r], static_cast<int32_t>(r % 2), -static_cast<int32_t>(r), nullptr, &child[r]));
  XAL_ASSERT_OK(xal_group_end());
  const uint32_t evens = (n() + 1) / 2, odds = n() / 2;
  for (uint32_t r = 0; r < n(); ++r) {
    ASSERT_NE(child[r], nullptr);
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    XAL_ASSERT_OK(xal_comm_get_info(child[r], &info));
    const uint32_t size = r % 2 ? odds : evens;
    EXPECT_EQ(info.size, size);
    EXPECT_EQ(info.rank, size - 1 - r / 2);
  }
  XAL_ASSERT_OK(xal_group_start());
  for (uint32_t r = 0; r < n(); ++r) XAL_EXPECT_OK(xal_comm_dup(child[r], &dup[r]));
  XAL_ASSERT_OK(xal_group_end());
  for (uint32_t r = 0; r < n(); ++r) {
    xal_comm_info_t a{}, b{};
    a.struct_size = b.struct_size = sizeof a;
    XAL_ASSERT_OK(xal_comm_get_info(child[r], &a));
    XAL_ASSERT_OK(xal_comm_get_info(dup[r], &b));
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.size, b.size);
    XAL_EXPECT_OK(xal_comm_destroy(dup[r]));
    XAL_EXPECT_OK(xal_comm_destroy(child[r]));
  }
}

XAL_CONFORM_SET_GROUP(collectives, PointToPoint);

}  // namespace
