// xal_soak_mpi: collectives across processes for scripts/soak.sh, under
// mpirun, each process on two mock cards, in cycles of xal_init ..
// xal_shutdown (--cycle-ms each): a communicator over every process
// (xal_comm_create_mpi), rounds of every collective with the results
// compared, then the communicator destroyed.
//
//   mpirun -np P xal_soak_mpi --seconds S [--cycle-ms MS] [--status FILE] [--trace FILE]
//
// The status file (FILE.<rank>) gets one JSON line per cycle; the trace is
// FILE.<rank>.json. The processes agree on when to stop between cycles.
// Exit status 0 when every check held.
#include <mpi.h>
#include <xal/xal_mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "soak_common.hpp"

using namespace xal_soak;

namespace {

constexpr uint32_t kLocal = 2;
constexpr size_t kMax = 2048;

using Vec = std::vector<int32_t>;

struct Job {
  int rank = 0, size = 1;
  uint32_t first = 0;  // global rank of local device 0
  uint32_t total = 0;  // ranks over every process
};

int32_t val(uint32_t g, size_t i, uint64_t it) { return static_cast<int32_t>(g * 11 + i + it % 997); }

void rounds(const Job& job, const Options& opt, uint64_t cycle, Clock::time_point deadline) {
  xal_device_t dev[kLocal];
  std::vector<Stream> st;
  std::vector<DevMem> send, recv;
  const uint32_t R = job.total;
  for (uint32_t l = 0; l < kLocal; ++l) {
    SOAK_OK(xal_device_get(l, &dev[l]));
    st.emplace_back(dev[l]);
    send.emplace_back(dev[l], kMax * R * 4);
    recv.emplace_back(dev[l], kMax * R * 4);
    if (!st.back().s || !send.back() || !recv.back()) return;
  }
  xal_comm_t raw[kLocal] = {};
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = 30000;
  if (!SOAK_OK(xal_comm_create_mpi(MPI_COMM_WORLD, dev, kLocal, &o, raw))) return;
  std::vector<Comm> comms(kLocal);
  for (uint32_t l = 0; l < kLocal; ++l) {
    comms[l].c = raw[l];
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    SOAK_OK(xal_comm_get_info(raw[l], &info));
    SOAK_CHECK(info.rank == job.first + l && info.size == R && info.path == XAL_COMM_PATH_MPI,
               "comm info rank %u size %u path %u", info.rank, info.size, info.path);
  }
  // Every process draws the same sequence (the seed is the cycle's).
  Rng rng(cycle * 101 + 9);
  // Rounds until the cycle's time is up on some process (they agree every
  // 8 rounds, between collectives).
  const auto cycle_end = Clock::now() + std::chrono::milliseconds(opt.cycle_ms);
  for (int it = 0;; ++it) {
    if (it % 8 == 0) {
      int done = Clock::now() >= std::min(cycle_end, deadline);
      MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (done) break;
    }
    const size_t count = 1 + rng.below(kMax);
    const int op = static_cast<int>(rng.below(6));
    const uint32_t root = static_cast<uint32_t>(rng.below(R));
    size_t in_n = count, out_n = count;
    if (op == 3) out_n = count * R;             // allgather
    if (op == 4) in_n = count * R;              // reduce_scatter
    if (op == 5) in_n = out_n = count * R;      // alltoall
    auto in = [&](uint32_t g, size_t i) { return op == 5 ? static_cast<int32_t>(g * 100003 + i) : val(g, i, static_cast<uint64_t>(it)); };
    for (uint32_t l = 0; l < kLocal; ++l) {
      Vec h(in_n);
      for (size_t i = 0; i < in_n; ++i) h[i] = in(job.first + l, i);
      SOAK_OK(xal_memcpy_htod(st[l].s, send[l].p, h.data(), in_n * 4));
      SOAK_OK(xal_memset(st[l].s, recv[l].p, 0xFF, out_n * 4));
      SOAK_OK(xal_stream_synchronize(st[l].s));
    }
    SOAK_OK(xal_group_start());
    for (uint32_t l = 0; l < kLocal; ++l) {
      xal_comm_t c = comms[l].c;
      const auto sp = send[l].p, rp = recv[l].p;
      switch (op) {
        case 0: SOAK_OK(xal_allreduce(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_SUM, st[l].s)); break;
        case 1: SOAK_OK(xal_broadcast(c, sp, rp, count, XAL_DTYPE_I32, root, st[l].s)); break;
        case 2: SOAK_OK(xal_reduce(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_MAX, root, st[l].s)); break;
        case 3: SOAK_OK(xal_allgather(c, sp, rp, count, XAL_DTYPE_I32, st[l].s)); break;
        case 4: SOAK_OK(xal_reduce_scatter(c, sp, rp, count, XAL_DTYPE_I32, XAL_OP_SUM, st[l].s)); break;
        default: SOAK_OK(xal_alltoall(c, sp, rp, count, XAL_DTYPE_I32, st[l].s)); break;
      }
    }
    SOAK_OK(xal_group_end());
    for (uint32_t l = 0; l < kLocal; ++l) {
      const uint32_t g = job.first + l;
      if (op == 2 && g != root) {
        SOAK_OK(xal_stream_synchronize(st[l].s));
        continue;
      }
      Vec want(out_n);
      for (size_t i = 0; i < out_n; ++i) {
        switch (op) {
          case 0: {
            int64_t s = 0;
            for (uint32_t r = 0; r < R; ++r) s += in(r, i);
            want[i] = static_cast<int32_t>(s);
            break;
          }
          case 1: want[i] = in(root, i); break;
          case 2: {
            int32_t m = in(0, i);
            for (uint32_t r = 1; r < R; ++r) m = std::max(m, in(r, i));
            want[i] = m;
            break;
          }
          case 3: want[i] = in(static_cast<uint32_t>(i / count), i % count); break;
          case 4: {
            int64_t s = 0;
            for (uint32_t r = 0; r < R; ++r) s += in(r, g * count + i);
            want[i] = static_cast<int32_t>(s);
            break;
          }
          default: want[i] = in(static_cast<uint32_t>(i / count), g * count + i % count);
        }
      }
      Vec got(out_n, -2);
      SOAK_OK(xal_memcpy_dtoh(st[l].s, got.data(), recv[l].p, out_n * 4));
      SOAK_OK(xal_stream_synchronize(st[l].s));
      SOAK_CHECK(got == want, "collective %d rank %u of %u, count %zu", op, g, R, count);
    }
    checker().op(2 * kLocal);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const Options opt = parse_options(argc, argv);
  Job job;
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  job.first = static_cast<uint32_t>(job.rank) * kLocal;
  job.total = static_cast<uint32_t>(job.size) * kLocal;
  const std::string status = opt.status.empty() ? "" : opt.status + "." + std::to_string(job.rank);
  const std::string trace = opt.trace.empty() ? "" : opt.trace + "." + std::to_string(job.rank) + ".json";
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(opt.seconds * 1000));
  uint64_t cycle = 0;
  for (;;) {
    int done = Clock::now() >= deadline;
    MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (done) break;
    if (!trace.empty()) setenv("XAL_TRACE", trace.c_str(), 1);
    uint64_t end_bytes = 0;
    if (SOAK_OK(xal_init(nullptr))) {
      rounds(job, opt, cycle, deadline);
      for (uint32_t l = 0; l < kLocal; ++l) {
        xal_device_t d;
        xal_device_metrics_t m{};
        m.struct_size = sizeof m;
        if (xal_device_get(l, &d) == XAL_SUCCESS && xal_device_get_metrics(d, &m) == XAL_SUCCESS)
          end_bytes += m.xal_alloc_bytes_current;
      }
      SOAK_CHECK(end_bytes == 0, "%llu bytes left after the cycle", static_cast<unsigned long long>(end_bytes));
      SOAK_OK(xal_shutdown());
      if (!trace.empty()) SOAK_CHECK(file_size(trace) > 0, "the trace %s was written", trace.c_str());
    }
    const uint64_t heap_after = heap_in_use();
    const uint64_t rss_trim = rss_after_trim_kb();
    char line[384];
    std::snprintf(line, sizeof line,
                  "{\"t\":%.1f,\"cycle\":%llu,\"ops\":%llu,\"checks\":%llu,\"failures\":%llu,"
                  "\"device_bytes_end\":%llu,\"heap_after_shutdown\":%llu,"
                  "\"rss_after_trim_kb\":%llu}",
                  std::chrono::duration<double>(Clock::now() - start).count(),
                  static_cast<unsigned long long>(cycle), static_cast<unsigned long long>(checker().ops()),
                  static_cast<unsigned long long>(checker().checks()),
                  static_cast<unsigned long long>(checker().failures()),
                  static_cast<unsigned long long>(end_bytes),
                  static_cast<unsigned long long>(heap_after),
                  static_cast<unsigned long long>(rss_trim));
    status_line(status, line);
    ++cycle;
  }
  std::fprintf(stderr, "xal_soak_mpi rank %d: %llu cycles, %llu operations, %llu checks, %llu failed\n",
               job.rank, static_cast<unsigned long long>(cycle),
               static_cast<unsigned long long>(checker().ops()),
               static_cast<unsigned long long>(checker().checks()),
               static_cast<unsigned long long>(checker().failures()));
  const int failed = checker().failures() != 0 || cycle == 0;
  int any = failed;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed ? 1 : 0;
}
