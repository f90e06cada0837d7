// xal-cuda-kernelcheck: runs xal's embedded kernels (the reductions of
// kernels.h, reached through the extension "xal_cuda_reduce_v1") on a CUDA
// device through libxal, every dtype and op plus the avg's scale, and
// compares each result bit for bit with the host reduction of xal_common
// (two inputs: halves round once on both sides). Exit 0 when every case
// matches, 1 when one does not, 2 when the check cannot run.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../src/kernels.h"
#include "xal_cuda_device.h"
#include "xal/xal.h"
#include "xal/xal_backend.h"
#include "xal_common/cli.hpp"
#include "xal_common/reduce.hpp"

namespace {

std::string failure(const char* call) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return std::string(call) + " failed: " + xal_status_name(info.status) + ": " + info.message;
}

#define CHECK_XAL(call)                                                         \
  do {                                                                          \
    if ((call) != XAL_SUCCESS) {                                                \
      std::fprintf(stderr, "xal-cuda-kernelcheck: %s\n", failure(#call).c_str()); \
      return 2;                                                                 \
    }                                                                           \
  } while (0)

// Small values every dtype holds exactly, so that sums and products of two
// stay exact (and integers do not wrap).
void fill(xal_dtype_t dtype, std::vector<unsigned char>& out, size_t count, int seed) {
  const size_t es = xal::common::dtype_size(dtype);
  out.assign(count * es, 0);
  for (size_t i = 0; i < count; ++i) {
    const int v = static_cast<int>((i * 7 + static_cast<size_t>(seed) * 3) % 9);  // 0..8
    const bool is_signed = dtype == XAL_DTYPE_I8 || dtype == XAL_DTYPE_I32 ||
                           dtype == XAL_DTYPE_I64;
    const double x = dtype == XAL_DTYPE_F16 || dtype == XAL_DTYPE_BF16 ||
                             dtype == XAL_DTYPE_F32 || dtype == XAL_DTYPE_F64
                         ? (v - 4) * 0.5
                         : (is_signed ? v - 4 : v);
    unsigned char* p = out.data() + i * es;
    switch (dtype) {
      case XAL_DTYPE_I8: { auto t = static_cast<int8_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_U8: { auto t = static_cast<uint8_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_I32: { auto t = static_cast<int32_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_U32: { auto t = static_cast<uint32_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_I64: { auto t = static_cast<int64_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_U64: { auto t = static_cast<uint64_t>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_F16: {
        auto t = xal::common::float_to_f16(static_cast<float>(x));
        std::memcpy(p, &t, es);
        break;
      }
      case XAL_DTYPE_BF16: {
        auto t = xal::common::float_to_bf16(static_cast<float>(x));
        std::memcpy(p, &t, es);
        break;
      }
      case XAL_DTYPE_F32: { auto t = static_cast<float>(x); std::memcpy(p, &t, es); break; }
      case XAL_DTYPE_F64: std::memcpy(p, &x, es); break;
      default: break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int device_index = 0;
  size_t count = 1000003;  // odd: the kernels' tail
  CLI::App app{"xal's embedded CUDA kernels against the host reduction, bit for bit"};
  app.add_option("--device", device_index, "CUDA device ordinal");
  app.add_option("--count", count, "elements per case")->check(xal::common::AtLeast(1));
  if (const auto status = xal::common::parse_options(app, "xal-cuda-kernelcheck", argc, argv)) {
    return *status;
  }

  CHECK_XAL(xal::cuda::tools::init_xal());
  xal_device_t dev = xal::cuda::tools::find_cuda_device(device_index);
  if (dev == nullptr) {
    std::fprintf(stderr, "xal-cuda-kernelcheck: no CUDA device %d through xal\n", device_index);
    return 2;
  }
  xal_stream_t stream = nullptr;
  CHECK_XAL(xal_stream_create(dev, XAL_STREAM_DEFAULT, &stream));
  const xal_backend_table_t* table = nullptr;
  void* native_stream = nullptr;
  CHECK_XAL(xal_handle_get_native(stream, &table, &native_stream));
  const xal_cuda_reduce_v1_t* kernels = nullptr;
  uint32_t backends = 0;
  CHECK_XAL(xal_backend_count(&backends));
  for (uint32_t i = 0; i < backends && kernels == nullptr; ++i) {
    const xal_backend_table_t* t = nullptr;
    xal_backend_t* b = nullptr;
    if (xal_backend_get_native(i, &t, &b) == XAL_SUCCESS && t == table && t->get_extension) {
      kernels = static_cast<const xal_cuda_reduce_v1_t*>(
          t->get_extension(b, XAL_CUDA_REDUCE_EXTENSION));
    }
  }
  if (kernels == nullptr) {
    std::fprintf(stderr, "xal-cuda-kernelcheck: the CUDA backend has no %s (built without nvcc?)\n",
                 XAL_CUDA_REDUCE_EXTENSION);
    return 2;
  }
  auto* bstream = static_cast<xal_bstream_t*>(native_stream);

  int cases = 0, failed = 0;
  const xal_op_t ops[] = {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX, XAL_OP_AVG};
  for (int dt = 0; dt < XAL_DTYPE_COUNT; ++dt) {
    const auto dtype = static_cast<xal_dtype_t>(dt);
    const size_t bytes = count * xal::common::dtype_size(dtype);
    xal_devptr_t a = 0, b = 0;
    CHECK_XAL(xal_mem_alloc(dev, bytes, &a));
    CHECK_XAL(xal_mem_alloc(dev, bytes, &b));
    std::vector<unsigned char> ha, hb, expect, got(bytes);
    fill(dtype, ha, count, 1);
    fill(dtype, hb, count, 2);
    std::string line = std::string(xal::common::dtype_name(dtype)) + ":";
    for (xal_op_t op : ops) {
      std::string why;
      if (xal::common::check_dtype_op(dtype, op, &why) != XAL_SUCCESS) continue;
      ++cases;
      expect = ha;
      void* dsts[] = {expect.data()};
      const void* srcs[] = {ha.data(), hb.data()};
      xal::common::reduce(dtype, op, dsts, srcs, count, 2);
      CHECK_XAL(xal_memcpy_htod(stream, a, ha.data(), bytes));
      CHECK_XAL(xal_memcpy_htod(stream, b, hb.data(), bytes));
      xal_status_t s =
          kernels->reduce(bstream, a, b, count, dtype, op == XAL_OP_AVG ? XAL_OP_SUM : op);
      if (s == XAL_SUCCESS && op == XAL_OP_AVG) s = kernels->scale(bstream, a, count, dtype, 2.0);
      if (s != XAL_SUCCESS) {
        std::fprintf(stderr, "xal-cuda-kernelcheck: %s %s: %s\n", xal::common::dtype_name(dtype),
                     xal::common::op_name(op), failure("reduce").c_str());
        ++failed;
        line += std::string(" ") + xal::common::op_name(op) + "=ERROR";
        continue;
      }
      CHECK_XAL(xal_memcpy_dtoh(stream, got.data(), a, bytes));
      CHECK_XAL(xal_stream_synchronize(stream));
      const bool same = std::memcmp(got.data(), expect.data(), bytes) == 0;
      if (!same) ++failed;
      line += std::string(" ") + xal::common::op_name(op) + (same ? "=ok" : "=MISMATCH");
    }
    std::printf("%s\n", line.c_str());
    xal_mem_free(dev, a);
    xal_mem_free(dev, b);
  }
  xal_stream_destroy(stream);
  xal_shutdown();
  std::printf("xal-cuda-kernelcheck: %d of %d cases match the host reduction (%zu elements)\n",
              cases - failed, cases, count);
  return failed == 0 ? 0 : 1;
}
