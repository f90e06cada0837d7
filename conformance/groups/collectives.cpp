// Group "collectives": every collective, for every dtype and op and a range
// of counts, out of place and in place, on each device set (all devices, each backend's devices, one
// device of each backend), checked against a reference computed here on the
// host: bitwise for integers, within a stated tolerance for floats (exact
// for the small integer values used, except avg in halves).
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"
#include "xal_common/reduce.hpp"

namespace {

using conform::Suite;

enum class Kind { kAllreduce, kBroadcast, kReduce, kAllgather, kReduceScatter, kAlltoall };

const char* kind_name(Kind k) {
  static const char* names[] = {"allreduce", "broadcast", "reduce",
                                "allgather", "reduce_scatter", "alltoall"};
  return names[static_cast<int>(k)];
}

std::vector<size_t> counts() {
  if (Suite::get().quick()) return {0, 1, 7, 1023, (1u << 16) + 3};
  return {0, 1, 7, 1023, (1u << 20) + 3};
}

bool is_float(xal_dtype_t d) {
  return d == XAL_DTYPE_F16 || d == XAL_DTYPE_BF16 || d == XAL_DTYPE_F32 || d == XAL_DTYPE_F64;
}

// Input value of element i on rank r: small integers, so that sums and
// products are exact in every dtype (prod uses only 1, 2 and -1).
double input(xal_op_t op, uint32_t r, size_t i) {
  if (op == XAL_OP_PROD) {
    const size_t k = (i + r) % 5;
    return k == 0 ? 2.0 : (k == 1 ? -1.0 : 1.0);
  }
  return static_cast<double>(static_cast<int>((i * 7 + r * 13) % 17) - 8);
}

// Stores v as dtype d at element i of `bytes`.
void put(std::vector<uint8_t>& bytes, xal_dtype_t d, size_t i, double v) {
  uint8_t* p = bytes.data() + i * xal::common::dtype_size(d);
  auto store = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (d) {
    case XAL_DTYPE_I8: store(static_cast<int8_t>(v)); break;
    case XAL_DTYPE_U8: store(static_cast<uint8_t>(static_cast<int8_t>(v))); break;
    case XAL_DTYPE_I32: store(static_cast<int32_t>(v)); break;
    case XAL_DTYPE_U32: store(static_cast<uint32_t>(static_cast<int32_t>(v))); break;
    case XAL_DTYPE_I64: store(static_cast<int64_t>(v)); break;
    case XAL_DTYPE_U64: store(static_cast<uint64_t>(static_cast<int64_t>(v))); break;
    case XAL_DTYPE_F16: store(xal::common::float_to_f16(static_cast<float>(v))); break;
    case XAL_DTYPE_BF16: store(xal::common::float_to_bf16(static_cast<float>(v))); break;
    case XAL_DTYPE_F32: store(static_cast<float>(v)); break;
    default: store(v); break;
  }
}

// Reference reduction of element i over n ranks, in the dtype's own
// arithmetic (wrapping for integers, min/max by the dtype's order).
std::vector<uint8_t> reference(xal_dtype_t d, xal_op_t op, uint32_t n, size_t count,
                               size_t offset_elems) {
  const size_t es = xal::common::dtype_size(d);
  std::vector<uint8_t> out(count * es);
  for (size_t i = 0; i < count; ++i) {
    auto fold = [&](auto zero) {
      using T = decltype(zero);
      auto cast = [](double v) -> T {
        if constexpr (std::is_unsigned_v<T>) return static_cast<T>(static_cast<int64_t>(v));
        else return static_cast<T>(v);
      };
      T acc = cast(input(op, 0, i + offset_elems));
      for (uint32_t r = 1; r < n; ++r) {
        const T x = cast(input(op, r, i + offset_elems));
        switch (op) {
          case XAL_OP_PROD: acc = static_cast<T>(acc * x); break;
          case XAL_OP_MIN: acc = x < acc ? x : acc; break;
          case XAL_OP_MAX: acc = x > acc ? x : acc; break;
          default: acc = static_cast<T>(acc + x); break;
        }
      }
      if constexpr (std::is_floating_point_v<T>)
        if (op == XAL_OP_AVG) acc /= static_cast<T>(n);
      std::memcpy(out.data() + i * es, &acc, sizeof acc);
    };
    switch (d) {
      case XAL_DTYPE_I8: fold(int8_t{}); break;
      case XAL_DTYPE_U8: fold(uint8_t{}); break;
      case XAL_DTYPE_I32: fold(int32_t{}); break;
      case XAL_DTYPE_U32: fold(uint32_t{}); break;
      case XAL_DTYPE_I64: fold(int64_t{}); break;
      case XAL_DTYPE_U64: fold(uint64_t{}); break;
      case XAL_DTYPE_F64: fold(double{}); break;
      default: {  // f32, f16, bf16: reduce in double, store in the dtype
        double acc = input(op, 0, i + offset_elems);
        for (uint32_t r = 1; r < n; ++r) {
          const double x = input(op, r, i + offset_elems);
          switch (op) {
            case XAL_OP_PROD: acc *= x; break;
            case XAL_OP_MIN: acc = std::min(acc, x); break;
            case XAL_OP_MAX: acc = std::max(acc, x); break;
            default: acc += x; break;
          }
        }
        if (op == XAL_OP_AVG) acc /= n;
        put(out, d, i, acc);
      }
    }
  }
  return out;
}

double as_double(xal_dtype_t d, const uint8_t* p) {
  switch (d) {
    case XAL_DTYPE_F16: { uint16_t h; std::memcpy(&h, p, 2); return xal::common::f16_to_float(h); }
    case XAL_DTYPE_BF16: { uint16_t h; std::memcpy(&h, p, 2); return xal::common::bf16_to_float(h); }
    case XAL_DTYPE_F32: { float f; std::memcpy(&f, p, 4); return f; }
    default: { double f; std::memcpy(&f, p, 8); return f; }
  }
}

// Compares `got` to `want` element by element; "" when they agree.
std::string compare(xal_dtype_t d, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  const size_t es = xal::common::dtype_size(d);
  const double tol = d == XAL_DTYPE_F16 ? 1e-3 : d == XAL_DTYPE_BF16 ? 8e-3 : 1e-6;
  for (size_t i = 0; i < want.size() / es; ++i) {
    const uint8_t* g = got.data() + i * es;
    const uint8_t* w = want.data() + i * es;
    if (std::memcmp(g, w, es) == 0) continue;
    if (is_float(d)) {
      const double a = as_double(d, g), b = as_double(d, w);
      if (std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b))) continue;
      return "element " + std::to_string(i) + ": got " + std::to_string(a) + ", want " + std::to_string(b);
    }
    return "element " + std::to_string(i) + " differs bitwise";
  }
  return "";
}

class Collectives : public conform::DeviceSetTest {
 protected:
  void SetUp() override {
    conform::DeviceSetTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::vector<xal_device_t> devs;
    std::vector<int> indices;
    for (const auto* d : devices()) {
      devs.push_back(d->handle);
      indices.push_back(static_cast<int>(d->index));
    }
    conform::note_devices(indices);
    comms_.resize(devs.size());
    const xal_status_t s = xal_comm_create(devs.data(), static_cast<uint32_t>(devs.size()), nullptr, comms_.data());
    if (s == XAL_ERROR_NOT_SUPPORTED) GTEST_SKIP() << conform::kUnsupported << conform::describe(s);
    ASSERT_EQ(s, XAL_SUCCESS) << conform::describe(s);
    for (const auto* d : devices()) streams_.push_back(std::make_unique<conform::Stream>(d->handle));
    for (auto& st : streams_) XAL_ASSERT_OK(st->status());
  }
  void TearDown() override {
    for (xal_comm_t c : comms_)
      if (c) xal_comm_destroy(c);
  }

  uint32_t n() const { return static_cast<uint32_t>(comms_.size()); }

  // Runs `kind` on every rank (one group call) and checks every rank's
  // output against the reference. In place, as NCCL defines it: one buffer
  // per rank, send == recv, except allgather (send = recv + rank * count)
  // and reduce_scatter (recv = send + rank * count).
  void check(Kind kind, xal_dtype_t dtype, xal_op_t op, size_t count, uint32_t root = 0,
             bool in_place = false) {
    SCOPED_TRACE(std::string(kind_name(kind)) + " " + xal::common::dtype_name(dtype) + " " +
                 xal::common::op_name(op) + " count " + std::to_string(count) +
                 (in_place ? " in place" : ""));
    const size_t es = xal::common::dtype_size(dtype);
    const size_t in_elems = (kind == Kind::kReduceScatter || kind == Kind::kAlltoall) ? count * n() : count;
    const size_t out_elems = (kind == Kind::kAllgather || kind == Kind::kAlltoall) ? count * n() : count;
    std::vector<std::unique_ptr<conform::DeviceBuffer>> send, recv;
    std::vector<xal_devptr_t> send_at(n()), recv_at(n());
    for (uint32_t r = 0; r < n(); ++r) {
      xal_device_t dev = devices()[r]->handle;
      if (in_place) {
        send.push_back(std::make_unique<conform::DeviceBuffer>(dev, std::max<size_t>(1, std::max(in_elems, out_elems) * es)));
        XAL_ASSERT_OK(send[r]->status());
        send_at[r] = send[r]->ptr() + (kind == Kind::kAllgather ? r * count * es : 0);
        recv_at[r] = send[r]->ptr() + (kind == Kind::kReduceScatter ? r * count * es : 0);
        XAL_ASSERT_OK(xal_memset(streams_[r]->get(), send[r]->ptr(), 0xA5, std::max(in_elems, out_elems) * es));
      } else {
        send.push_back(std::make_unique<conform::DeviceBuffer>(dev, std::max<size_t>(1, in_elems * es)));
        recv.push_back(std::make_unique<conform::DeviceBuffer>(dev, std::max<size_t>(1, out_elems * es)));
        XAL_ASSERT_OK(send[r]->status());
        XAL_ASSERT_OK(recv[r]->status());
        send_at[r] = send[r]->ptr();
        recv_at[r] = recv[r]->ptr();
        XAL_ASSERT_OK(xal_memset(streams_[r]->get(), recv_at[r], 0xA5, out_elems * es));
      }
      std::vector<uint8_t> host(in_elems * es);
      for (size_t i = 0; i < in_elems; ++i) put(host, dtype, i, input(op, r, i));
      XAL_ASSERT_OK(xal_memcpy_htod(streams_[r]->get(), send_at[r], host.data(), host.size()));
      XAL_ASSERT_OK(xal_stream_synchronize(streams_[r]->get()));
    }
    XAL_ASSERT_OK(xal_group_start());
    for (uint32_t r = 0; r < n(); ++r) {
      xal_status_t s = XAL_SUCCESS;
      xal_stream_t st = streams_[r]->get();
      const xal_devptr_t sp = send_at[r], rp = recv_at[r];
      switch (kind) {
        case Kind::kAllreduce: s = xal_allreduce(comms_[r], sp, rp, count, dtype, op, st); break;
        case Kind::kBroadcast: s = xal_broadcast(comms_[r], sp, rp, count, dtype, root, st); break;
        case Kind::kReduce: s = xal_reduce(comms_[r], sp, rp, count, dtype, op, root, st); break;
        case Kind::kAllgather: s = xal_allgather(comms_[r], sp, rp, count, dtype, st); break;
        case Kind::kReduceScatter: s = xal_reduce_scatter(comms_[r], sp, rp, count, dtype, op, st); break;
        case Kind::kAlltoall: s = xal_alltoall(comms_[r], sp, rp, count, dtype, st); break;
      }
      EXPECT_EQ(s, XAL_SUCCESS) << "rank " << r << ": " << conform::describe(s);
    }
    XAL_ASSERT_OK(xal_group_end());
    for (uint32_t r = 0; r < n(); ++r) XAL_ASSERT_OK(xal_stream_synchronize(streams_[r]->get()));
    for (uint32_t r = 0; r < n(); ++r) {
      xal_status_t async = XAL_SUCCESS;
      XAL_ASSERT_OK(xal_comm_get_async_error(comms_[r], &async));
      ASSERT_EQ(async, XAL_SUCCESS) << "rank " << r << ": " << xal_status_name(async);
    }
    for (uint32_t r = 0; r < n(); ++r) {
      if (kind == Kind::kReduce && r != root) continue;
      std::vector<uint8_t> got(out_elems * es);
      XAL_ASSERT_OK(xal_memcpy_dtoh(streams_[r]->get(), got.data(), recv_at[r], got.size()));
      XAL_ASSERT_OK(xal_stream_synchronize(streams_[r]->get()));
      std::vector<uint8_t> want;
      switch (kind) {
        case Kind::kAllreduce:
        case Kind::kReduce: want = reference(dtype, op, n(), count, 0); break;
        case Kind::kReduceScatter: want = reference(dtype, op, n(), count, r * count); break;
        case Kind::kBroadcast: {
          want.resize(count * es);
          for (size_t i = 0; i < count; ++i) put(want, dtype, i, input(op, root, i));
          break;
        }
        case Kind::kAllgather:
        case Kind::kAlltoall: {
          want.resize(out_elems * es);
          for (uint32_t j = 0; j < n(); ++j)
            for (size_t i = 0; i < count; ++i) {
              const size_t src = kind == Kind::kAllgather ? i : r * count + i;
              put(want, dtype, j * count + i, input(op, j, src));
            }
          break;
        }
      }
      const std::string diff = compare(dtype, got, want);
      ASSERT_EQ(diff, "") << "rank " << r;
    }
  }

  std::vector<xal_comm_t> comms_;
  std::vector<std::unique_ptr<conform::Stream>> streams_;
};

const xal_dtype_t kDtypes[] = {XAL_DTYPE_I8,  XAL_DTYPE_U8,  XAL_DTYPE_I32, XAL_DTYPE_U32,
                               XAL_DTYPE_I64, XAL_DTYPE_U64, XAL_DTYPE_F16, XAL_DTYPE_BF16,
                               XAL_DTYPE_F32, XAL_DTYPE_F64};

std::vector<xal_op_t> ops_for(xal_dtype_t d) {
  std::vector<xal_op_t> ops = {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX};
  if (is_float(d)) ops.push_back(XAL_OP_AVG);
  return ops;
}

TEST_P(Collectives, AllreduceEveryDtypeAndOp) {
  for (xal_dtype_t d : kDtypes)
    for (xal_op_t op : ops_for(d))
      for (size_t c : counts()) ASSERT_NO_FATAL_FAILURE(check(Kind::kAllreduce, d, op, c));
}

TEST_P(Collectives, ReduceEveryDtypeAndOp) {
  for (xal_dtype_t d : kDtypes)
    for (xal_op_t op : ops_for(d))
      for (size_t c : counts()) ASSERT_NO_FATAL_FAILURE(check(Kind::kReduce, d, op, c, n() - 1));
}

TEST_P(Collectives, ReduceScatterEveryDtypeAndOp) {
  for (xal_dtype_t d : kDtypes)
    for (xal_op_t op : ops_for(d))
      for (size_t c : counts()) ASSERT_NO_FATAL_FAILURE(check(Kind::kReduceScatter, d, op, c));
}

TEST_P(Collectives, BroadcastAllgatherAlltoallEveryDtype) {
  for (xal_dtype_t d : kDtypes)
    for (size_t c : counts()) {
      ASSERT_NO_FATAL_FAILURE(check(Kind::kBroadcast, d, XAL_OP_SUM, c, n() / 2));
      ASSERT_NO_FATAL_FAILURE(check(Kind::kAllgather, d, XAL_OP_SUM, c));
      ASSERT_NO_FATAL_FAILURE(check(Kind::kAlltoall, d, XAL_OP_SUM, c));
    }
}

// In place (frameworks reduce gradients in place): every kind, for an
// integer, a float and a half type, the ops that differ most.
TEST_P(Collectives, EveryKindInPlace) {
  for (xal_dtype_t d : {XAL_DTYPE_I32, XAL_DTYPE_BF16, XAL_DTYPE_F32})
    for (size_t c : counts()) {
      for (xal_op_t op : {XAL_OP_SUM, XAL_OP_MAX}) {
        ASSERT_NO_FATAL_FAILURE(check(Kind::kAllreduce, d, op, c, 0, true));
        ASSERT_NO_FATAL_FAILURE(check(Kind::kReduce, d, op, c, n() - 1, true));
        ASSERT_NO_FATAL_FAILURE(check(Kind::kReduceScatter, d, op, c, 0, true));
      }
      if (is_float(d)) {
        ASSERT_NO_FATAL_FAILURE(check(Kind::kAllreduce, d, XAL_OP_AVG, c, 0, true));
      }
      ASSERT_NO_FATAL_FAILURE(check(Kind::kBroadcast, d, XAL_OP_SUM, c, n() / 2, true));
      ASSERT_NO_FATAL_FAILURE(check(Kind::kAllgather, d, XAL_OP_SUM, c, 0, true));
      ASSERT_NO_FATAL_FAILURE(check(Kind::kAlltoall, d, XAL_OP_SUM, c, 0, true));
    }
}

TEST_P(Collectives, AvgOnIntegersIsUnsupportedWithAMessage) {
  conform::DeviceBuffer buf(devices()[0]->handle, 64);
  XAL_ASSERT_OK(buf.status());
  XAL_EXPECT_STATUS(xal_allreduce(comms_[0], buf.ptr(), buf.ptr(), 4, XAL_DTYPE_I32, XAL_OP_AVG,
                                  streams_[0]->get()),
                    XAL_ERROR_NOT_SUPPORTED);
  XAL_EXPECT_STATUS(xal_broadcast(comms_[0], buf.ptr(), buf.ptr(), 4, XAL_DTYPE_I32, n(), streams_[0]->get()),
                    XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_allreduce(comms_[0], buf.ptr(), buf.ptr(), 1000, XAL_DTYPE_F32, XAL_OP_SUM,
                                  streams_[0]->get()),
                    XAL_ERROR_OUT_OF_BOUNDS);
}

XAL_CONFORM_SET_GROUP(collectives, Collectives);

}  // namespace
