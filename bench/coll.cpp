// xal-bench coll: an nccl-tests-like measurement of xal's collectives over
// the devices of this process, side by side with Open MPI's MPI_Allreduce
// over as many processes on the same machine, and with the memory-traffic
// bound (the time a perfect in-memory reduction needs at the host copy
// bandwidth measured in the same run).
//
//   xal-bench coll [-b 1M] [-e 64M] [-f 2] [-C allreduce] [-o sum] [-d f32]
//                  [-n 20] [-w 5] [-c 1] [-g 4] [--json FILE] [--no-mpi]
//                  [--mpi [--mpi-np 2]]
//
// --mpi: under mpirun, --mpi-np processes each on their devices, one
// communicator from xal_comm_create_mpi (coll_xal_mpi.cpp).
//
// busbw factors are nccl-tests': allreduce 2(n-1)/n; allgather,
// reduce_scatter, alltoall (n-1)/n; broadcast, reduce 1.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coll.hpp"
#include "xal/xal.h"
#include "xal_common/cli.hpp"
#include "xal_common/reduce.hpp"
#include "xal_common/strings.hpp"

namespace xal::bench {

namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> kColls = {"allreduce", "broadcast", "reduce",
                                         "allgather", "reduce_scatter", "alltoall"};

struct Options {
  std::string begin = "1M", end = "64M", collective = "allreduce", op = "sum", dtype = "f32";
  double factor = 2;
  int iters = 20, warmup = 5, check = 1, devices = 0;
  std::string json;
  bool no_mpi = false;
  int mpi_np = 0;  // 0: the device count
  bool mpi = false;               // --mpi: over processes (coll_xal_mpi.cpp)
  uint32_t first = 0, total = 0;  // --mpi: global rank of device 0; ranks
};

struct Row {
  size_t bytes = 0, count = 0;
  double time_us = 0, algbw = 0, busbw = 0;
  uint64_t wrong = 0;
  double bound_us = 0;  // memory-traffic bound (allreduce only)
  double mpi_time_us = 0, mpi_busbw = 0;
};

double bus_factor(const std::string& c, uint32_t n) {
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (c == "allgather" || c == "reduce_scatter" || c == "alltoall") return double(n - 1) / n;
  return 1.0;
}

int find(const char* const* names, int count, const std::string& s) {
  for (int i = 0; i < count; ++i)
    if (s == names[i]) return i;
  return -1;
}

std::string err(xal_status_t s) {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return std::string(xal_status_name(s)) + ": " + e.message;
}

// The state of one run: communicators, streams and buffers per rank.
class Bench {
 public:
  Bench(std::vector<xal_device_t> devs, const Options& o, xal_dtype_t dt, xal_op_t op)
      : devs_(std::move(devs)), o_(o), dt_(dt), op_(op), n_(static_cast<uint32_t>(devs_.size())) {}
  ~Bench() {
    free_buffers();
    for (auto c : comms_) if (c) xal_comm_destroy(c);
    for (auto s : streams_) if (s) xal_stream_destroy(s);
  }

  std::string setup() {
    comms_.resize(n_);
    if (o_.mpi) {
      if (xal_status_t s = mpi_comm_create(devs_.data(), n_, comms_.data()); s)
        return "xal_comm_create_mpi: " + err(s);
    } else if (xal_status_t s = xal_comm_create(devs_.data(), n_, nullptr, comms_.data()); s) {
      return "xal_comm_create: " + err(s);
    }
    streams_.resize(n_);
    for (uint32_t r = 0; r < n_; ++r)
      if (xal_status_t s = xal_stream_create(devs_[r], 0, &streams_[r]); s)
        return "xal_stream_create: " + err(s);
    return "";
  }

  // Ranks of the communicator (every process's with --mpi).
  uint32_t size() const { return o_.total ? o_.total : n_; }
  // Elements of send and recv for one rank at `count`.
  size_t in_elems(size_t count) const {
    return (o_.collective == "reduce_scatter" || o_.collective == "alltoall") ? count * size() : count;
  }
  size_t out_elems(size_t count) const {
    return (o_.collective == "allgather" || o_.collective == "alltoall") ? count * size() : count;
  }

  std::string run_size(size_t count, Row& row) {
    const size_t es = common::dtype_size(dt_);
    free_buffers();
    send_.assign(n_, 0);
    recv_.assign(n_, 0);
    for (uint32_t r = 0; r < n_; ++r) {
      if (xal_status_t s = xal_mem_alloc(devs_[r], std::max<size_t>(1, in_elems(count) * es), &send_[r]); s)
        return "xal_mem_alloc: " + err(s);
      if (xal_status_t s = xal_mem_alloc(devs_[r], std::max<size_t>(1, out_elems(count) * es), &recv_[r]); s)
        return "xal_mem_alloc: " + err(s);
      std::vector<uint8_t> host(in_elems(count) * es, 0);
      if (dt_ == XAL_DTYPE_F32)  // rank r holds r+1 everywhere
        for (size_t i = 0; i < in_elems(count); ++i) {
          const float v = static_cast<float>(o_.first + r + 1);
          std::memcpy(host.data() + i * 4, &v, 4);
        }
      if (xal_status_t s = xal_memcpy_htod(streams_[r], send_[r], host.data(), host.size()); s)
        return "xal_memcpy_htod: " + err(s);
      if (xal_status_t s = xal_stream_synchronize(streams_[r]); s) return "sync: " + err(s);
    }
    for (int i = 0; i < o_.warmup; ++i)
      if (auto e = once(count); !e.empty()) return e;
    if (auto e = sync(); !e.empty()) return e;
    const auto t0 = Clock::now();
    for (int i = 0; i < o_.iters; ++i)
      if (auto e = once(count); !e.empty()) return e;
    if (auto e = sync(); !e.empty()) return e;
    const double sec = std::chrono::duration<double>(Clock::now() - t0).count() / o_.iters;
    row.count = count;
    row.bytes = count * es * ((o_.collective == "allgather" || o_.collective == "reduce_scatter" ||
                               o_.collective == "alltoall") ? size() : 1);
    row.time_us = sec * 1e6;
    row.algbw = static_cast<double>(row.bytes) / sec / 1e9;
    row.busbw = row.algbw * bus_factor(o_.collective, size());
    if (o_.check && o_.collective == "allreduce" && dt_ == XAL_DTYPE_F32 && op_ == XAL_OP_SUM)
      row.wrong = check_allreduce(count);
    return "";
  }

 private:
  std::string once(size_t count) {
    if (xal_status_t s = xal_group_start(); s) return "xal_group_start: " + err(s);
    for (uint32_t r = 0; r < n_; ++r) {
      xal_status_t s = XAL_SUCCESS;
      const auto& c = o_.collective;
      if (c == "allreduce") s = xal_allreduce(comms_[r], send_[r], recv_[r], count, dt_, op_, streams_[r]);
      else if (c == "broadcast") s = xal_broadcast(comms_[r], send_[r], recv_[r], count, dt_, 0, streams_[r]);
      else if (c == "reduce") s = xal_reduce(comms_[r], send_[r], recv_[r], count, dt_, op_, 0, streams_[r]);
      else if (c == "allgather") s = xal_allgather(comms_[r], send_[r], recv_[r], count, dt_, streams_[r]);
      else if (c == "reduce_scatter") s = xal_reduce_scatter(comms_[r], send_[r], recv_[r], count, dt_, op_, streams_[r]);
      else s = xal_alltoall(comms_[r], send_[r], recv_[r], count, dt_, streams_[r]);
      if (s) {
        xal_group_end();
        return c + ": " + err(s);
      }
    }
    if (xal_status_t s = xal_group_end(); s) return "xal_group_end: " + err(s);
    return "";
  }

  std::string sync() {
    for (uint32_t r = 0; r < n_; ++r) {
      if (xal_status_t s = xal_stream_synchronize(streams_[r]); s) return "sync: " + err(s);
      xal_status_t async = XAL_SUCCESS;
      xal_comm_get_async_error(comms_[r], &async);
      if (async) return std::string("collective failed: ") + xal_status_name(async);
    }
    return "";
  }

  uint64_t check_allreduce(size_t count) {
    const float want = static_cast<float>(size()) * static_cast<float>(size() + 1) / 2.0f;
    uint64_t wrong = 0;
    std::vector<float> got(count);
    for (uint32_t r = 0; r < n_; ++r) {
      if (xal_memcpy_dtoh(streams_[r], got.data(), recv_[r], count * 4) ||
          xal_stream_synchronize(streams_[r]))
        return count;
      for (float v : got) wrong += v != want;
    }
    return wrong;
  }

  void free_buffers() {
    for (uint32_t r = 0; r < send_.size(); ++r) {
      if (send_[r]) xal_mem_free(devs_[r], send_[r]);
      if (recv_[r]) xal_mem_free(devs_[r], recv_[r]);
    }
    send_.clear();
    recv_.clear();
  }

  std::vector<xal_device_t> devs_;
  const Options& o_;
  xal_dtype_t dt_;
  xal_op_t op_;
  uint32_t n_;
  std::vector<xal_comm_t> comms_;
  std::vector<xal_stream_t> streams_;
  std::vector<xal_devptr_t> send_, recv_;
};

// Seconds for one host memcpy of `bytes` (median of 5), for the bound.
double memcpy_seconds(size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

// xal_init with the backends of XAL_BACKENDS, else the mock, as the other
// subcommands (session.cpp).
xal_status_t init_backends() {
  const char* backends = std::getenv("XAL_BACKENDS");
  xal_init_options_t options{};
  options.struct_size = sizeof(options);
  options.backends = backends != nullptr && backends[0] != '\0' ? nullptr : "mock";
  options.validation = -1;
  return xal_init(&options);
}

}  // namespace

int coll_main(int argc, char** argv) {
  Options o;
  CLI::App app{"xal-bench coll: collective bandwidth, nccl-tests style, with MPI_Allreduce side by side"};
  app.add_option("-b,--minbytes", o.begin, "smallest size per rank (e.g. 1M)");
  app.add_option("-e,--maxbytes", o.end, "largest size per rank (e.g. 64M)");
  app.add_option("-f,--stepfactor", o.factor, "size multiplier between steps")->check(CLI::Range(1.01, 1024.0));
  app.add_option("-C,--collective", o.collective, "allreduce, broadcast, reduce, allgather, reduce_scatter, alltoall")
      ->check(CLI::IsMember(kColls));
  app.add_option("-o,--op", o.op, "sum, prod, min, max, avg");
  app.add_option("-d,--datatype", o.dtype, "i8 u8 i32 u32 i64 u64 f16 bf16 f32 f64");
  app.add_option("-n,--iters", o.iters, "timed iterations per size")->check(CLI::Range(1, 1000000));
  app.add_option("-w,--warmup_iters", o.warmup, "untimed iterations per size")->check(CLI::Range(0, 1000000));
  app.add_option("-c,--check", o.check, "check results (allreduce f32 sum)")->check(CLI::Range(0, 1));
  app.add_option("-g,--devices", o.devices, "devices to use (0: all)")->check(CLI::Range(0, 1024));
  app.add_option("--json", o.json, "write the results as JSON to this file ('-' for stdout)")
      ->check(common::WritableFile());
  app.add_flag("--no-mpi", o.no_mpi, "do not run the MPI_Allreduce baseline");
  app.add_option("--mpi-np", o.mpi_np, "processes of the MPI baseline (default: the device count); with --mpi, processes of the job (default 2)")
      ->check(common::AtLeast(1));
  app.add_flag("--mpi", o.mpi, "run under mpirun: each process measures xal over its devices, one communicator from xal_comm_create_mpi");
  if (const auto status = common::parse_options(app, "xal-bench coll", argc, argv)) return *status;
  static const char* dnames[] = {"i8", "u8", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"};
  static const char* onames[] = {"sum", "prod", "min", "max", "avg"};
  const int dt = find(dnames, 10, o.dtype), op = find(onames, 5, o.op);
  if (dt < 0 || op < 0) {
    std::cerr << "xal-bench coll: unknown " << (dt < 0 ? "datatype '" + o.dtype : "op '" + o.op) << "'\n";
    return 2;
  }
  std::string why;
  const auto lo = common::parse_bytes(o.begin, &why), hi = common::parse_bytes(o.end, &why);
  if (!lo || !hi || *lo > *hi || *lo == 0) {  // from 0 the sizes would never grow
    if (lo && *lo == 0) why = "(sizes start at 1 byte)";
    std::cerr << "xal-bench coll: bad size range " << o.begin << ".." << o.end << " " << why << "\n";
    return 2;
  }
  if (xal_status_t s = init_backends(); s) {
    std::cerr << "xal-bench coll: xal_init: " << err(s) << "\n";
    return 1;
  }
  uint32_t ndev = 0;
  xal_device_count(&ndev);
  if (o.devices > 0) ndev = std::min<uint32_t>(ndev, static_cast<uint32_t>(o.devices));
  // One device is a valid communicator (a single GPU's native library, as
  // nccl-tests runs on one GPU): busbw is then 0, algbw and the check stand.
  if (ndev < 1) {
    std::cerr << "xal-bench coll: needs at least 1 device, found " << ndev << "\n";
    xal_shutdown();
    return 1;
  }
  const size_t es = common::dtype_size(dt);
  MpiPlace place;
  if (o.mpi && !mpi_inside()) {  // run the baseline, then this command under mpirun
    xal_shutdown();
    const int procs = o.mpi_np > 0 ? o.mpi_np : 2;
    size_t last = 0;
    for (double size = static_cast<double>(*lo); size <= static_cast<double>(*hi) * 1.0001; size *= o.factor)
      last = std::max<size_t>(1, static_cast<size_t>(size) / es) * es;
    std::vector<MpiRow> base;
    std::string note = "not run";
    if (!o.no_mpi && o.collective == "allreduce")
      note = run_mpi_allreduce(procs * static_cast<int>(ndev), o.dtype, o.op,
                               std::max<size_t>(1, *lo / es) * es, last, o.factor, o.iters, o.warmup, base);
    return mpi_relaunch(procs, argc, argv, note, base);
  }
  if (o.mpi) {
    if (std::string e = mpi_start(ndev, place); !e.empty()) {
      std::cerr << "xal-bench coll --mpi: " << e << "\n";
      xal_shutdown();
      return 1;
    }
    o.first = place.first;
    o.total = place.total;
  }
  std::vector<xal_device_t> devs(ndev);
  for (uint32_t i = 0; i < ndev; ++i) xal_device_get(i, &devs[i]);
  std::vector<Row> rows;
  std::string failure;
  {
    Bench bench(devs, o, static_cast<xal_dtype_t>(dt), static_cast<xal_op_t>(op));
    failure = bench.setup();
    for (double size = static_cast<double>(*lo); failure.empty() && size <= static_cast<double>(*hi) * 1.0001;
         size *= o.factor) {
      Row row;
      const size_t count = std::max<size_t>(1, static_cast<size_t>(size) / es);
      failure = bench.run_size(count, row);
      if (failure.empty()) {
        if (o.collective == "allreduce")
          row.bound_us = (o.total ? o.total : ndev) * memcpy_seconds(count * es) * 1e6;
        rows.push_back(row);
      }
    }
  }
  xal_shutdown();
  if (o.mpi) mpi_finish();
  if (!failure.empty()) {
    std::cerr << "xal-bench coll: " << failure << "\n";
    return 1;
  }
  if (o.mpi && place.rank != 0) {  // rank 0 prints
    for (const Row& r : rows)
      if (r.wrong) return 1;
    return 0;
  }
  const int np = o.mpi ? static_cast<int>(o.total)  // the baseline ran over as many processes
                       : (o.mpi_np > 0 ? o.mpi_np : static_cast<int>(ndev));
  std::string mpi_note;
  if (!o.no_mpi && o.collective == "allreduce") {
    std::vector<MpiRow> mpi;
    mpi_note = o.mpi ? mpi_baseline(mpi)
                     : run_mpi_allreduce(np, o.dtype, o.op, rows.front().count * es,
                                         rows.back().count * es, o.factor, o.iters, o.warmup, mpi);
    for (Row& r : rows)
      for (const MpiRow& m : mpi)
        if (m.bytes == r.bytes && m.time_us > 0) {
          r.mpi_time_us = m.time_us;
          r.mpi_busbw = static_cast<double>(r.bytes) / (m.time_us * 1e-6) / 1e9 *
                        bus_factor(o.collective, static_cast<uint32_t>(np));
        }
  }
  // The table; on stderr when the JSON goes to stdout, which then holds
  // JSON alone.
  FILE* const table = o.json == "-" ? stderr : stdout;
  std::fprintf(table, "# xal-bench coll: %s %s %s over %u devices\n", o.collective.c_str(), o.dtype.c_str(),
                      o.op.c_str(), ndev);
  if (o.mpi)
    std::fprintf(table, "# across %d processes (xal_comm_create_mpi, mpirun): %u ranks in all\n", place.size,
                        o.total);
  if (!mpi_note.empty()) std::fprintf(table, "# MPI baseline: %s\n", mpi_note.c_str());
  std::fprintf(table, "%12s %12s %6s %6s %11s %9s %9s %7s %9s %11s %9s %8s\n", "size(B)", "count", "type",
                      "redop", "time(us)", "algbw", "busbw", "#wrong", "bound", "mpi(us)", "mpi_busbw",
                      "xal/mpi");
  for (const Row& r : rows) {
    std::fprintf(table, "%12zu %12zu %6s %6s %11.1f %9.2f %9.2f %7llu %9.2f %11.1f %9.2f %8.2f\n", r.bytes, r.count,
                        o.dtype.c_str(), o.op.c_str(), r.time_us, r.algbw, r.busbw,
                        static_cast<unsigned long long>(r.wrong), r.bound_us > 0 ? r.bound_us / r.time_us : 0.0,
                        r.mpi_time_us, r.mpi_busbw, r.mpi_busbw > 0 ? r.busbw / r.mpi_busbw : 0.0);
  }
  std::fprintf(table, "# bound: fraction of the memory-traffic bound reached (1.0 = a perfect in-memory reduction)\n");
  if (!o.json.empty()) {
    nlohmann::json j;
    j["collective"] = o.collective;
    j["dtype"] = o.dtype;
    j["op"] = o.op;
    j["devices"] = ndev;
    j["mpi"] = mpi_note;
    for (const Row& r : rows)
      j["rows"].push_back({{"bytes", r.bytes}, {"count", r.count}, {"time_us", r.time_us},
                           {"algbw_gbps", r.algbw}, {"busbw_gbps", r.busbw}, {"wrong", r.wrong},
                           {"bound_fraction", r.bound_us > 0 ? r.bound_us / r.time_us : 0.0},
                           {"mpi_time_us", r.mpi_time_us}, {"mpi_busbw_gbps", r.mpi_busbw},
                           {"ratio_vs_mpi", r.mpi_busbw > 0 ? r.busbw / r.mpi_busbw : 0.0}});
    const std::string text =
        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (o.json == "-") {
      if (!(std::cout << text << std::flush)) {
        std::cerr << "xal-bench coll: cannot write the JSON to stdout\n";
        return 1;
      }
    } else {
      std::ofstream f(o.json);
      if (!(f << text)) {
        std::cerr << "xal-bench coll: cannot write " << o.json << "\n";
        return 1;
      }
    }
  }
  for (const Row& r : rows)
    if (r.wrong) return 1;
  return 0;
}

}  // namespace xal::bench
