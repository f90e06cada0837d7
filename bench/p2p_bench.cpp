// xal-bench sendrecv and xal-bench alltoallv: point-to-point and the
// v-collectives, nccl-tests-like columns, each beside its baseline in the
// same run.
//
//   xal-bench sendrecv [-b 1M] [-e 64M] [-f 4] [-n 20] [-w 3]
//       two mock cards of one process, one xal_send/xal_recv pair per
//       iteration (one group), vs a plain memcpy of the same bytes;
//   xal-bench sendrecv --mpi
//       two processes under mpirun (one card each, xal_comm_create_mpi),
//       each sending S bytes to the other (one group), vs MPI_Sendrecv of
//       the same host bytes;
//   xal-bench alltoallv [--np 4] [-b 64M] [-e 64M]
//       --np processes under mpirun, one card each, every rank sending S
//       bytes in --np equal blocks (xal_alltoallv), vs MPI_Alltoallv.
//
// algbw = S / time; busbw: sendrecv 1, alltoallv (n-1)/n (nccl-tests).
// Under mpirun, time is per round, the median over blocks of 4 rounds,
// xal's and MPI's blocks alternating.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "coll.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"
#include "xal_common/strings.hpp"

#ifdef XAL_BENCH_WITH_MPI
#include "xal/xal_mpi.h"
#endif

namespace xal::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string begin = "1M", end = "64M";
  double factor = 4;
  int iters = 20, warmup = 3, np = 4;
  bool mpi = false;
};

double since_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The middle value (the mean of the two middle ones). `v` is reordered.
[[maybe_unused]] double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string err(xal_status_t s) {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return std::string(xal_status_name(s)) + ": " + e.message;
}

#define BENCH_CHECK(call)                                                            \
  do {                                                                               \
    if (const xal_status_t s_ = (call); s_ != XAL_SUCCESS) {                         \
      std::cerr << "xal-bench: " #call " failed: " << err(s_) << "\n";               \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

std::vector<size_t> sizes(size_t lo, size_t hi, double factor) {
  std::vector<size_t> v;
  for (double b = static_cast<double>(lo); b <= static_cast<double>(hi) * 1.0001; b *= factor)
    v.push_back(static_cast<size_t>(b));
  return v;
}

void header(const char* base) {
  std::printf("#%12s %12s %6s %10s %9s %9s   %10s %9s %7s\n", "size(B)", "count", "type",
              "time(us)", "algbw", "busbw", base, "algbw", "ratio");
  std::printf("#%12s %12s %6s %10s %9s %9s   %10s %9s %7s\n", "", "(elements)", "", "", "(GB/s)",
              "(GB/s)", "time(us)", "(GB/s)", "");
}

void row(size_t bytes, double us, double bus, double base_us) {
  const double algbw = bytes / us / 1e3, base_bw = bytes / base_us / 1e3;
  std::printf(" %12zu %12zu %6s %10.1f %9.2f %9.2f   %10.1f %9.2f %7.2f\n", bytes, bytes, "u8", us,
              algbw, algbw * bus, base_us, base_bw, base_us / us);
  std::fflush(stdout);
}

// Two cards of this process: send 0 -> 1, vs memcpy.
int sendrecv_local(const Options& o, const std::vector<size_t>& all) {
  BENCH_CHECK(xal_init(nullptr));
  uint32_t count = 0;
  BENCH_CHECK(xal_device_count(&count));
  if (count < 2) {
    std::cerr << "xal-bench sendrecv: needs two devices (XAL_MOCK_DEVICES=2*a100-40g)\n";
    return 1;
  }
  const size_t max = all.back();
  xal_device_t dev[2];
  xal_stream_t st[2];
  xal_devptr_t buf[2];
  xal_comm_t comm[2];
  for (uint32_t i = 0; i < 2; ++i) {
    BENCH_CHECK(xal_device_get(i, &dev[i]));
    BENCH_CHECK(xal_stream_create(dev[i], 0, &st[i]));
    BENCH_CHECK(xal_mem_alloc(dev[i], max, &buf[i]));
    BENCH_CHECK(xal_memset(st[i], buf[i], i ? 0 : 0x5a, max));
  }
  BENCH_CHECK(xal_comm_create(dev, 2, nullptr, comm));
  std::vector<char> a(max, 1), b(max, 2);
  std::printf("# xal-bench sendrecv: xal_send/xal_recv between two devices of one process, "
              "vs memcpy of the same bytes on the host\n");
  header("memcpy");
  auto round = [&](size_t bytes) -> xal_status_t {
    xal_group_start();
    xal_status_t s = xal_send(comm[0], buf[0], bytes, XAL_DTYPE_U8, 1, st[0]);
    if (s == XAL_SUCCESS) s = xal_recv(comm[1], buf[1], bytes, XAL_DTYPE_U8, 0, st[1]);
    const xal_status_t e = xal_group_end();
    return s ? s : e;
  };
  for (size_t bytes : all) {
    for (int i = 0; i < o.warmup; ++i) BENCH_CHECK(round(bytes));
    for (xal_stream_t s : st) BENCH_CHECK(xal_stream_synchronize(s));
    auto t0 = Clock::now();
    for (int i = 0; i < o.iters; ++i) BENCH_CHECK(round(bytes));
    for (xal_stream_t s : st) BENCH_CHECK(xal_stream_synchronize(s));
    const double us = since_us(t0) / o.iters;
    for (int i = 0; i < o.warmup; ++i) std::memcpy(b.data(), a.data(), bytes);
    t0 = Clock::now();
    for (int i = 0; i < o.iters; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      asm volatile("" : : "r"(b.data()) : "memory");
    }
    const double base = since_us(t0) / o.iters;
    unsigned char last = 0;
    BENCH_CHECK(xal_memcpy_dtoh(st[1], &last, buf[1] + bytes - 1, 1));
    BENCH_CHECK(xal_stream_synchronize(st[1]));
    if (last != 0x5a) {
      std::cerr << "xal-bench sendrecv: wrong data received\n";
      return 1;
    }
    row(bytes, us, 1.0, base);
  }
  for (xal_comm_t c : comm) xal_comm_destroy(c);
  xal_shutdown();
  return 0;
}

#ifdef XAL_BENCH_WITH_MPI

// Inside mpirun: one card per process. sendrecv (2 processes) or alltoallv.
int inside_mpi(const std::string& what, const Options& o, const std::vector<size_t>& all) {
  MpiPlace place;
  mpi_start(1, place);
  const int n = place.size;
  if (what == "sendrecv" && n != 2) {
    if (place.rank == 0) std::cerr << "xal-bench sendrecv --mpi: needs 2 processes\n";
    mpi_finish();
    return 1;
  }
  BENCH_CHECK(xal_init(nullptr));
  const size_t max = all.back();
  xal_device_t dev;
  xal_stream_t st;
  xal_devptr_t send, recv;
  xal_comm_t comm;
  BENCH_CHECK(xal_device_get(0, &dev));
  BENCH_CHECK(xal_stream_create(dev, 0, &st));
  BENCH_CHECK(xal_mem_alloc(dev, max, &send));
  BENCH_CHECK(xal_mem_alloc(dev, max, &recv));
  BENCH_CHECK(xal_memset(st, send, 0x11 + place.rank, max));
  BENCH_CHECK(mpi_comm_create(&dev, 1, &comm));
  std::vector<char> hs(max, 3), hr(max, 4);
  const bool a2a = what == "alltoallv";
  if (place.rank == 0) {
    std::printf("# xal-bench %s --mpi: %d processes under mpirun, one device each, vs %s\n",
                what.c_str(), n, a2a ? "MPI_Alltoallv" : "MPI_Sendrecv");
    header(a2a ? "MPI" : "MPI");
  }
  const int peer = 1 - place.rank;
  for (size_t bytes : all) {
    const size_t block = bytes / static_cast<size_t>(n);
    std::vector<size_t> counts(static_cast<size_t>(n), block), displs(static_cast<size_t>(n));
    std::vector<int> ic(static_cast<size_t>(n), static_cast<int>(block)), id(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) displs[p] = block * p, id[p] = static_cast<int>(block * p);
    auto xal_round = [&]() -> xal_status_t {
      if (a2a)
        return xal_alltoallv(comm, send, counts.data(), displs.data(), recv, counts.data(),
                             displs.data(), XAL_DTYPE_U8, st);
      xal_group_start();
      xal_status_t s = xal_send(comm, send, bytes, XAL_DTYPE_U8, static_cast<uint32_t>(peer), st);
      if (s == XAL_SUCCESS) s = xal_recv(comm, recv, bytes, XAL_DTYPE_U8, static_cast<uint32_t>(peer), st);
      const xal_status_t e = xal_group_end();
      return s ? s : e;
    };
    auto mpi_round = [&] {
      if (a2a)
        MPI_Alltoallv(hs.data(), ic.data(), id.data(), MPI_BYTE, hr.data(), ic.data(), id.data(),
                      MPI_BYTE, MPI_COMM_WORLD);
      else
        MPI_Sendrecv(hs.data(), static_cast<int>(bytes), MPI_BYTE, peer, 5, hr.data(),
                     static_cast<int>(bytes), MPI_BYTE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    };
    for (int i = 0; i < o.warmup; ++i) {
      BENCH_CHECK(xal_round());
      mpi_round();
    }
    BENCH_CHECK(xal_stream_synchronize(st));
    MPI_Barrier(MPI_COMM_WORLD);
    // Blocks of kBlock rounds of xal and of MPI alternate, each block timed
    // up to a barrier; the figures are the medians over blocks (per round),
    // so that a burst of other load on the machine moves both alike.
    constexpr int kBlock = 4;
    std::vector<double> xal_us, mpi_us;
    for (int done = 0; done < o.iters;) {
      const int k = std::min(kBlock, o.iters - done);
      auto t0 = Clock::now();
      for (int i = 0; i < k; ++i) BENCH_CHECK(xal_round());
      BENCH_CHECK(xal_stream_synchronize(st));
      MPI_Barrier(MPI_COMM_WORLD);
      xal_us.push_back(since_us(t0) / k);
      t0 = Clock::now();
      for (int i = 0; i < k; ++i) mpi_round();
      MPI_Barrier(MPI_COMM_WORLD);
      mpi_us.push_back(since_us(t0) / k);
      done += k;
    }
    const double us = median(xal_us), base = median(mpi_us);
    unsigned char first = 0;
    BENCH_CHECK(xal_memcpy_dtoh(st, &first, recv, 1));
    BENCH_CHECK(xal_stream_synchronize(st));
    if (first != (a2a ? 0x11 : 0x11 + peer)) {
      std::cerr << "xal-bench " << what << ": wrong data received on rank " << place.rank << "\n";
      return 1;
    }
    if (place.rank == 0) row(bytes, us, a2a ? double(n - 1) / n : 1.0, base);
  }
  xal_comm_destroy(comm);
  xal_shutdown();
  mpi_finish();
  return 0;
}

#else

int inside_mpi(const std::string& what, const Options&, const std::vector<size_t>&) {
  std::cerr << "xal-bench " << what << " --mpi: xal-bench was built without libxal_mpi\n";
  return 1;
}

#endif

}  // namespace

int p2p_main(int argc, char** argv) {
  const std::string what = argv[0];
  Options o;
  if (what == "alltoallv") o.begin = o.end = "64M";
  CLI::App app("xal-bench " + what + ": " +
               (what == "sendrecv" ? "point-to-point bandwidth vs memcpy or MPI_Sendrecv"
                                   : "xal_alltoallv vs MPI_Alltoallv over processes"));
  app.add_option("-b,--minbytes", o.begin, "smallest size (bytes each rank sends)");
  app.add_option("-e,--maxbytes", o.end, "largest size");
  app.add_option("-f,--stepfactor", o.factor, "size multiplier between steps")->check(CLI::Range(1.01, 1024.0));
  app.add_option("-n,--iters", o.iters, "timed iterations per size")->check(CLI::Range(1, 1000000));
  app.add_option("-w,--warmup_iters", o.warmup, "untimed iterations per size")->check(CLI::Range(0, 1000000));
  if (what == "sendrecv") app.add_flag("--mpi", o.mpi, "between two processes under mpirun");
  else app.add_option("--np", o.np, "processes under mpirun")->check(CLI::Range(2, 64));
  if (auto r = common::parse_options(app, ("xal-bench " + what).c_str(), argc, argv)) return *r;
  std::string why;
  const auto lo = common::parse_bytes(o.begin, &why), hi = common::parse_bytes(o.end, &why);
  if (!lo || !hi || *lo == 0 || *hi < *lo) {
    std::cerr << "xal-bench " << what << ": bad size range " << o.begin << ".." << o.end << " " << why << "\n";
    return common::kExitBadOptions;
  }
  const std::vector<size_t> all = sizes(*lo, *hi, o.factor);
  if (what == "sendrecv" && !o.mpi && !mpi_inside()) return sendrecv_local(o, all);
  if (mpi_inside()) return inside_mpi(what, o, all);
  return mpi_relaunch(what == "sendrecv" ? 2 : o.np, argc, argv, "", {}, what.c_str());
}

}  // namespace xal::bench
