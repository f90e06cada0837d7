// Group "parity": the same transfer through the public ABI and straight
// through the backend's table, on the same device, in one run. Both paths
// copy the same buffers (xal's device pointers are the backend's own) on
// the same stream, so that where the memory lies (huge pages, NUMA node)
// and which queue or thread serves the stream are the same for both and
// the ratio shows only what xal adds. Figures per direction and size: GB/s
// both ways, their ratio and its upper confidence bound, and the fraction
// of the device's peak. Full runs check the targets of docs/PERFORMANCE.md (copies >= 0.97
// of the direct path from 1 MiB; cross-backend peer >= 0.9 of min(D2H,
// H2D)) on that bound; quick runs only report them.
#include <xal/xal_backend.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "conform.hpp"
#include "events.hpp"
#include "helpers.hpp"

namespace {

using conform::Suite;
constexpr size_t kMiB = 1024 * 1024;
constexpr double kCopyTarget = 0.97;
constexpr double kCrossPeerTarget = 0.9;

std::vector<size_t> parity_sizes() {
  if (Suite::get().quick()) return {kMiB, 16 * kMiB};
  return {kMiB, 16 * kMiB, 256 * kMiB};
}

struct Plan {
  int warmup;
  int reps;
  int batch;  // transfers per timed repetition
};

Plan plan_for(size_t bytes) {
  const bool quick = Suite::get().quick();
  // Small transfers are batched so that each timed repetition moves at
  // least 32 MiB and scheduling noise stays small against it.
  const int batch = static_cast<int>(std::clamp<size_t>(32 * kMiB / bytes, 1, 32));
  if (bytes >= 256 * kMiB) return {1, 5, batch};
  return quick ? Plan{2, 5, batch} : Plan{3, 11, batch};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Upper 95% confidence bound of the median of `v`, free of any assumption
// on the distribution: the order statistic x(j) with P(Binomial(n, 1/2) <=
// n - j) <= 0.05 (n = 11: the 9th smallest; n = 5: the largest).
double median_upper_bound(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  double tail = 0, term = std::pow(0.5, static_cast<double>(n));  // P(X = 0)
  size_t below = 0;  // the largest k with P(X <= k) <= 0.05, plus one
  for (size_t k = 0; k < n; ++k) {
    tail += term;
    if (tail > 0.05) break;
    below = k + 1;
    term = term * static_cast<double>(n - k) / static_cast<double>(k + 1);
  }
  return v[std::min(n - 1, n - below)];
}

// Every repetition's GB/s through xal and direct and their ratio; the
// figures are the medians. Each repetition runs the two paths in the order
// A B B A (xal, direct, direct, xal; the next one B A A B), so that drift of
// the machine and whatever the first copy after a synchronize pays hit both
// paths alike.
struct Timed {
  std::vector<double> abi_samples, direct_samples, ratios;
  double abi_gbps = 0;
  double direct_gbps = 0;
  double ratio = 0;
  double ratio_upper = 0;  // upper 95% bound of the ratio's median
  int rounds = 1;
  std::string error;

  void summarize() {
    abi_gbps = median(abi_samples);
    direct_gbps = median(direct_samples);
    ratio = median(ratios);
    ratio_upper = median_upper_bound(ratios);
  }
};

using Op = std::function<xal_status_t()>;

Timed time_both(size_t bytes, const Op& abi, const Op& direct) {
  const Plan plan = plan_for(bytes);
  Timed out;
  for (int i = 0; i < plan.warmup + plan.reps; ++i) {
    double seconds[2] = {0, 0};
    for (int k = 0; k < 4; ++k) {
      const int which = (i + (k == 1 || k == 2 ? 1 : 0)) % 2;  // 0: xal, 1: direct
      const Op& op = which == 0 ? abi : direct;
      const auto t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < plan.batch; ++b) {
        const xal_status_t s = op();
        if (s != XAL_SUCCESS) {
          out.error = (which == 0 ? "through xal: " : "direct: ") + conform::describe(s);
          return out;
        }
      }
      seconds[which] += std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - t0).count();
    }
    if (i >= plan.warmup) {
      const double moved = 2.0 * static_cast<double>(bytes) * plan.batch / 1e9;
      out.abi_samples.push_back(moved / seconds[0]);
      out.direct_samples.push_back(moved / seconds[1]);
      out.ratios.push_back(seconds[1] / seconds[0]);
    }
  }
  out.summarize();
  return out;
}

// Runs `measure` once, or in full runs up to three rounds while the upper
// confidence bound of the median ratio stays under `target`, keeping the
// round with the highest bound. The verdict (record()) is taken on that
// bound: a CPU-backed device shares its cores with the test, and a busy
// moment of the machine can hold one round down.
Timed measure_rounds(const std::function<Timed()>& measure, double target) {
  Timed best = measure();
  const int max_rounds = Suite::get().quick() ? 1 : 3;
  for (int round = 2; round <= max_rounds && best.error.empty() &&
                      best.ratio_upper < target;
       ++round) {
    Timed again = measure();
    if (!again.error.empty()) return again;
    if (again.ratio_upper > best.ratio_upper) best = std::move(again);
    best.rounds = round;
  }
  return best;
}

// The backend's table and the native device and stream behind an xal
// device and stream: the direct path runs on the very stream the path
// through xal uses (xal keeps owning it).
struct Native {
  const xal_backend_table_t* table = nullptr;
  xal_bdevice_t* device = nullptr;
  xal_bstream_t* stream = nullptr;

  xal_status_t open(xal_device_t dev, xal_stream_t xal_stream) {
    void* native = nullptr;
    xal_status_t s = xal_handle_get_native(dev, &table, &native);
    if (s != XAL_SUCCESS) return s;
    device = static_cast<xal_bdevice_t*>(native);
    const xal_backend_table_t* stream_table = nullptr;
    s = xal_handle_get_native(xal_stream, &stream_table, &native);
    if (s != XAL_SUCCESS) return s;
    stream = static_cast<xal_bstream_t*>(native);
    return XAL_SUCCESS;
  }
  xal_status_t sync() { return table->stream_synchronize(stream); }
};

void record(const std::string& what, size_t bytes, const Timed& t, double peak,
            int device, double target) {
  const std::string prefix = what + "." + std::to_string(bytes / kMiB) + "MiB.";
  conform::record_figure(prefix + "abi_gbps", t.abi_gbps, "GB/s", device);
  conform::record_figure(prefix + "direct_gbps", t.direct_gbps, "GB/s", device);
  conform::record_figure(prefix + "ratio", t.ratio, "", device);
  conform::record_figure(prefix + "ratio_upper", t.ratio_upper, "", device);
  if (peak > 0) conform::record_figure(prefix + "peak_fraction", t.abi_gbps / peak, "", device);
  // Below the target beyond the noise of the measurement: even the upper
  // 95% bound of the median ratio is under it.
  if (!Suite::get().quick() && t.ratio_upper < target) {
    char text[320];
    std::snprintf(text, sizeof(text),
                  "%s at %s: through xal %.2f GB/s, direct %.2f GB/s, ratio %.3f "
                  "(upper 95%% bound %.3f over %zu repetitions; best of %d rounds) "
                  "below the target %.2f",
                  what.c_str(), conform::size_label(bytes).c_str(), t.abi_gbps,
                  t.direct_gbps, t.ratio, t.ratio_upper, t.ratios.size(), t.rounds,
                  target);
    ADD_FAILURE() << text;
  }
}

enum class Dir { kHtoD, kDtoH, kDtoD };

class Parity : public conform::DeviceTest {
 protected:
  void run(Dir dir) {
    const char* name = dir == Dir::kHtoD ? "h2d" : dir == Dir::kDtoH ? "d2h" : "d2d";
    conform::Stream stream(dev());
    XAL_ASSERT_OK(stream.status());
    Native native;
    const xal_status_t s = native.open(dev(), stream.get());
    if (s == XAL_ERROR_NOT_SUPPORTED) {
      XAL_CONFORM_UNSUPPORTED("no direct access to the backend: " + conform::describe(s));
    }
    ASSERT_EQ(s, XAL_SUCCESS) << "native stream: " << conform::describe(s);
    for (size_t bytes : parity_sizes()) {
      SCOPED_TRACE(conform::size_label(bytes));
      conform::HostBuffer host(bytes);
      XAL_ASSERT_OK(host.status());
      conform::fill_pattern(host.span(), bytes);
      conform::DeviceBuffer a(dev(), bytes), b(dev(), bytes);
      XAL_ASSERT_OK(a.status());
      XAL_ASSERT_OK(b.status());
      const auto* t = native.table;
      const xal_devptr_t pa = a.ptr(), pb = b.ptr();
      xal_stream_t xs = stream.get();
      Op abi, direct;
      const int batch = plan_for(bytes).batch;
      auto batched = [batch](auto enqueue, auto sync) {
        return [=, n = 0]() mutable -> xal_status_t {
          xal_status_t st = enqueue();
          if (st == XAL_SUCCESS && ++n % batch == 0) st = sync();
          return st;
        };
      };
      auto xsync = [xs] { return xal_stream_synchronize(xs); };
      auto nsync = [&native] { return native.sync(); };
      void* h = host.data();
      xal_bstream_t* ns = native.stream;
      switch (dir) {
        case Dir::kHtoD:
          abi = batched([=] { return xal_memcpy_htod(xs, pa, h, bytes); }, xsync);
          direct = batched([=] { return t->memcpy_htod(ns, pa, h, bytes); }, nsync);
          break;
        case Dir::kDtoH:
          abi = batched([=] { return xal_memcpy_dtoh(xs, h, pa, bytes); }, xsync);
          direct = batched([=] { return t->memcpy_dtoh(ns, h, pa, bytes); }, nsync);
          break;
        case Dir::kDtoD:
          abi = batched([=] { return xal_memcpy_dtod(xs, pb, pa, bytes); }, xsync);
          direct = batched([=] { return t->memcpy_dtod(ns, pb, pa, bytes); }, nsync);
          break;
      }
      const Timed timed =
          measure_rounds([&] { return time_both(bytes, abi, direct); }, kCopyTarget);
      ASSERT_EQ(timed.error, "");
      record(name, bytes, timed, props().peak_memory_bandwidth_gbps,
             static_cast<int>(index()), kCopyTarget);
    }
  }
};

TEST_P(Parity, HostToDevice) { run(Dir::kHtoD); }
TEST_P(Parity, DeviceToHost) { run(Dir::kDtoH); }
TEST_P(Parity, DeviceToDevice) { run(Dir::kDtoD); }

XAL_CONFORM_DEVICE_GROUP(parity, Parity);

// Peer copies first -> second. Within one backend with a native peer entry
// the direct path is that entry; otherwise (across backends) the baseline
// is min(direct D2H on the source, direct H2D on the destination).
class PeerParity : public conform::PairTest {};

TEST_P(PeerParity, Peer) {
  // The copy runs on a stream of the source; the staged baseline's second
  // half on one of the destination.
  conform::Stream stream(first().handle), dst_stream(second().handle);
  XAL_ASSERT_OK(stream.status());
  XAL_ASSERT_OK(dst_stream.status());
  Native src, dst;
  xal_status_t s = src.open(first().handle, stream.get());
  if (s == XAL_SUCCESS) s = dst.open(second().handle, dst_stream.get());
  if (s == XAL_ERROR_NOT_SUPPORTED) {
    XAL_CONFORM_UNSUPPORTED("no direct access to the backend: " + conform::describe(s));
  }
  ASSERT_EQ(s, XAL_SUCCESS) << conform::describe(s);
  const bool native_peer = !cross_backend() && src.table->memcpy_peer != nullptr;
  for (size_t bytes : parity_sizes()) {
    SCOPED_TRACE(conform::size_label(bytes));
    conform::DeviceBuffer a(first().handle, bytes), b(second().handle, bytes);
    XAL_ASSERT_OK(a.status());
    XAL_ASSERT_OK(b.status());
    const xal_devptr_t pa = a.ptr(), pb = b.ptr();
    const int batch = plan_for(bytes).batch;
    xal_stream_t xs = stream.get();
    xal_device_t fd = first().handle, sd = second().handle;
    int n_abi = 0, n_direct = 0;
    const Op abi = [&, xs, fd, sd]() {
      xal_status_t st = xal_memcpy_peer(xs, sd, pb, fd, pa, bytes);
      if (st == XAL_SUCCESS && ++n_abi % batch == 0) st = xal_stream_synchronize(xs);
      return st;
    };
    Timed timed;
    if (native_peer) {
      const Op direct = [&]() {
        xal_status_t st = src.table->memcpy_peer(src.stream, dst.device, pb,
                                                 src.device, pa, bytes);
        if (st == XAL_SUCCESS && ++n_direct % batch == 0) st = src.sync();
        return st;
      };
      timed = measure_rounds([&] { return time_both(bytes, abi, direct); }, kCopyTarget);
    } else {
      conform::HostBuffer host(bytes);
      XAL_ASSERT_OK(host.status());
      void* h = host.data();
      const Op d2h = [&]() {
        xal_status_t st = src.table->memcpy_dtoh(src.stream, h, pa, bytes);
        if (st == XAL_SUCCESS && ++n_direct % batch == 0) st = src.sync();
        return st;
      };
      const Op h2d = [&]() {
        xal_status_t st = dst.table->memcpy_htod(dst.stream, pb, h, bytes);
        if (st == XAL_SUCCESS && ++n_direct % batch == 0) st = dst.sync();
        return st;
      };
      // The baseline is the slower of the two halves a staged copy needs.
      auto staged = [&] {
        const Timed down = time_both(bytes, abi, d2h);
        if (!down.error.empty()) return down;
        const Timed up = time_both(bytes, abi, h2d);
        if (!up.error.empty()) return up;
        return down.direct_gbps < up.direct_gbps ? down : up;
      };
      timed = measure_rounds(staged, kCrossPeerTarget);
    }
    ASSERT_EQ(timed.error, "");
    const double peak = std::min(first().props.peak_memory_bandwidth_gbps,
                                 second().props.peak_memory_bandwidth_gbps);
    record(cross_backend() ? "peer_cross" : "peer", bytes, timed, peak,
           static_cast<int>(first().index),
           native_peer ? kCopyTarget : kCrossPeerTarget);
  }
}

XAL_CONFORM_PAIR_GROUP(parity, PeerParity);

}  // namespace
