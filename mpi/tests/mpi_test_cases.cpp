// The cases of xal_mpi_test (mpi_test.hpp).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "mpi_test.hpp"
#include "xal_common/reduce.hpp"

namespace {

// When set, the next MPI_Iallgather fails (as one does with
// MPI_ERRORS_RETURN); see the interposer below.
std::atomic<bool> g_fail_iallgather{false};

}  // namespace

// Interposes libmpi's MPI_Iallgather for libxal_mpi (PMPI profiling
// interface): fails once when asked to.
extern "C" int MPI_Iallgather(const void* send, int send_count, MPI_Datatype send_type,
                              void* recv, int recv_count, MPI_Datatype recv_type, MPI_Comm comm,
                              MPI_Request* request) {
  if (g_fail_iallgather.exchange(false)) return MPI_ERR_OTHER;
  return PMPI_Iallgather(send, send_count, send_type, recv, recv_count, recv_type, comm,
                         request);
}

namespace xal_mpi_test {

namespace {

using Clock = std::chrono::steady_clock;
enum Kind { kAllreduce, kBroadcast, kReduce, kAllgather, kReduceScatter, kAlltoall };
const char* kNames[] = {"allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall"};

bool is_float(xal_dtype_t d) {
  return d == XAL_DTYPE_F16 || d == XAL_DTYPE_BF16 || d == XAL_DTYPE_F32 || d == XAL_DTYPE_F64;
}

void store(xal_dtype_t d, double v, void* p) {
  switch (d) {
    case XAL_DTYPE_I8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case XAL_DTYPE_U8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case XAL_DTYPE_I32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case XAL_DTYPE_U32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case XAL_DTYPE_I64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case XAL_DTYPE_U64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(p, &x, 8); break; }
    case XAL_DTYPE_F16: { uint16_t x = xal::common::float_to_f16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case XAL_DTYPE_BF16: { uint16_t x = xal::common::float_to_bf16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case XAL_DTYPE_F32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

double load(xal_dtype_t d, const void* p) {
  switch (d) {
    case XAL_DTYPE_I8: { int8_t x; std::memcpy(&x, p, 1); return x; }
    case XAL_DTYPE_U8: { uint8_t x; std::memcpy(&x, p, 1); return x; }
    case XAL_DTYPE_I32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case XAL_DTYPE_U32: { uint32_t x; std::memcpy(&x, p, 4); return x; }
    case XAL_DTYPE_I64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case XAL_DTYPE_U64: { uint64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case XAL_DTYPE_F16: { uint16_t x; std::memcpy(&x, p, 2); return xal::common::f16_to_float(x); }
    case XAL_DTYPE_BF16: { uint16_t x; std::memcpy(&x, p, 2); return xal::common::bf16_to_float(x); }
    case XAL_DTYPE_F32: { float x; std::memcpy(&x, p, 4); return x; }
    default: { double x; std::memcpy(&x, p, 8); return x; }
  }
}

// Global rank g's input element k: small integers, exact in every dtype.
double input(uint32_t g, size_t k, xal_op_t op) {
  if (op == XAL_OP_PROD) return (g + k) % 3 == 0 ? 2 : 1;
  return static_cast<double>((g * 3 + k) % 11);
}

double combine(xal_op_t op, uint32_t n, size_t k, size_t offset) {
  double acc = input(0, k + offset, op);
  for (uint32_t j = 1; j < n; ++j) {
    const double v = input(j, k + offset, op);
    if (op == XAL_OP_PROD) acc *= v;
    else if (op == XAL_OP_MIN) acc = std::min(acc, v);
    else if (op == XAL_OP_MAX) acc = std::max(acc, v);
    else acc += v;
  }
  return op == XAL_OP_AVG ? acc / n : acc;
}

struct Case {
  Kind kind;
  xal_dtype_t dtype;
  xal_op_t op;
  size_t count;
  uint32_t root;
  bool in_place;
};

// Runs one case on every local rank and checks every local output.
void run_case(Job& job, const Case& c) {
  const uint32_t n = job.total;
  const size_t es = xal::common::dtype_size(c.dtype);
  const bool wide_in = c.kind == kReduceScatter || c.kind == kAlltoall;
  const bool wide_out = c.kind == kAllgather || c.kind == kAlltoall;
  const size_t in_n = wide_in ? c.count * n : c.count, out_n = wide_out ? c.count * n : c.count;
  const size_t local = job.dev.size();
  std::vector<xal_devptr_t> send(local), recv(local);
  std::vector<std::vector<char>> host(local);
  for (size_t i = 0; i < local; ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    CHECK(xal_mem_alloc(job.dev[i], std::max<size_t>(1, in_n * es), &send[i]) == XAL_SUCCESS, "alloc");
    recv[i] = send[i];
    if (!c.in_place) CHECK(xal_mem_alloc(job.dev[i], std::max<size_t>(1, out_n * es), &recv[i]) == XAL_SUCCESS, "alloc");
    host[i].resize(std::max(in_n, out_n) * es);
    for (size_t k = 0; k < in_n; ++k) store(c.dtype, input(g, k, c.op), host[i].data() + k * es);
    if (in_n) xal_memcpy_htod(job.stream[i], send[i], host[i].data(), in_n * es);
    xal_stream_synchronize(job.stream[i]);
  }
  CHECK(xal_group_start() == XAL_SUCCESS, "group");
  for (size_t i = 0; i < local; ++i) {
    xal_status_t s = XAL_SUCCESS;
    switch (c.kind) {
      case kAllreduce: s = xal_allreduce(job.comm[i], send[i], recv[i], c.count, c.dtype, c.op, job.stream[i]); break;
      case kBroadcast: s = xal_broadcast(job.comm[i], send[i], recv[i], c.count, c.dtype, c.root, job.stream[i]); break;
      case kReduce: s = xal_reduce(job.comm[i], send[i], recv[i], c.count, c.dtype, c.op, c.root, job.stream[i]); break;
      case kAllgather: s = xal_allgather(job.comm[i], send[i], recv[i], c.count, c.dtype, job.stream[i]); break;
      case kReduceScatter: s = xal_reduce_scatter(job.comm[i], send[i], recv[i], c.count, c.dtype, c.op, job.stream[i]); break;
      case kAlltoall: s = xal_alltoall(job.comm[i], send[i], recv[i], c.count, c.dtype, job.stream[i]); break;
    }
    CHECK(s == XAL_SUCCESS, "%s: %s", kNames[c.kind], last_message().c_str());
  }
  CHECK(xal_group_end() == XAL_SUCCESS, "%s: %s", kNames[c.kind], last_message().c_str());
  const double tol = c.dtype == XAL_DTYPE_F16 || c.dtype == XAL_DTYPE_BF16 ? 1e-2 : 1e-6;
  int wrong = 0;
  for (size_t i = 0; i < local; ++i) {
    const uint32_t g = job.first + static_cast<uint32_t>(i);
    CHECK(xal_stream_synchronize(job.stream[i]) == XAL_SUCCESS, "sync");
    xal_status_t async = XAL_SUCCESS;
    xal_comm_get_async_error(job.comm[i], &async);
    CHECK(async == XAL_SUCCESS, "%s %s: async error %d", kNames[c.kind],
          xal::common::dtype_name(c.dtype), async);
    if (c.kind == kReduce && g != c.root) continue;
    if (out_n) xal_memcpy_dtoh(job.stream[i], host[i].data(), recv[i], out_n * es);
    xal_stream_synchronize(job.stream[i]);
    for (size_t k = 0; k < out_n && wrong < 3; ++k) {
      double want = 0;
      switch (c.kind) {
        case kAllreduce: case kReduce: want = combine(c.op, n, k, 0); break;
        case kBroadcast: want = input(c.root, k, c.op); break;
        case kAllgather: want = input(static_cast<uint32_t>(k / c.count), k % c.count, c.op); break;
        case kReduceScatter: want = combine(c.op, n, k, g * c.count); break;
        case kAlltoall: want = input(static_cast<uint32_t>(k / c.count), g * c.count + k % c.count, c.op); break;
      }
      const double got = load(c.dtype, host[i].data() + k * es);
      const bool ok = is_float(c.dtype) ? std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want))
                                        : got == want;
      if (!ok) ++wrong;
      CHECK(ok, "%s %s %s count %zu%s rank %u element %zu: got %g want %g", kNames[c.kind],
            xal::common::dtype_name(c.dtype), xal::common::op_name(c.op), c.count,
            c.in_place ? " in place" : "", g, k, got, want);
    }
  }
  for (size_t i = 0; i < local; ++i) {
    xal_mem_free(job.dev[i], send[i]);
    if (recv[i] != send[i]) xal_mem_free(job.dev[i], recv[i]);
  }
}

}  // namespace

void run_collectives(Job& job) {
  if (!open(job, 60000)) return;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  for (size_t i = 0; i < job.comm.size(); ++i) {
    CHECK(xal_comm_get_info(job.comm[i], &info) == XAL_SUCCESS, "info");
    CHECK(info.rank == job.first + i && info.size == job.total && info.path == XAL_COMM_PATH_MPI,
          "rank %u size %u path %u", info.rank, info.size, info.path);
  }
  const xal_dtype_t dtypes[] = {XAL_DTYPE_I8, XAL_DTYPE_U8, XAL_DTYPE_I32, XAL_DTYPE_U32,
                                XAL_DTYPE_I64, XAL_DTYPE_U64, XAL_DTYPE_F16, XAL_DTYPE_BF16,
                                XAL_DTYPE_F32, XAL_DTYPE_F64};
  const xal_op_t ops[] = {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX, XAL_OP_AVG};
  const uint32_t last = job.total - 1, second = job.local[0] < job.total ? job.local[0] : 0;
  for (xal_dtype_t d : dtypes)
    for (xal_op_t op : ops) {
      if (op == XAL_OP_AVG && !is_float(d)) continue;
      run_case(job, {kAllreduce, d, op, 1023, 0, false});
    }
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{(1u << 20) + 3}})
    run_case(job, {kAllreduce, XAL_DTYPE_F32, XAL_OP_SUM, count, 0, count == 7});
  for (xal_dtype_t d : {XAL_DTYPE_I32, XAL_DTYPE_F16, XAL_DTYPE_F64}) {
    for (uint32_t root : {last, second}) {
      run_case(job, {kBroadcast, d, XAL_OP_SUM, 1023, root, false});
      run_case(job, {kReduce, d, XAL_OP_MAX, 777, root, false});
    }
    run_case(job, {kBroadcast, d, XAL_OP_SUM, 100, last, true});
    run_case(job, {kAllgather, d, XAL_OP_SUM, 301, 0, false});
    run_case(job, {kReduceScatter, d, XAL_OP_SUM, 129, 0, false});
    run_case(job, {kReduceScatter, d, d == XAL_DTYPE_I32 ? XAL_OP_MIN : XAL_OP_AVG, 7, 0, false});
    run_case(job, {kAlltoall, d, XAL_OP_SUM, 65, 0, false});
    run_case(job, {kAlltoall, d, XAL_OP_SUM, 3, 0, true});
  }
  run_case(job, {kAllreduce, XAL_DTYPE_F32, XAL_OP_AVG, 4096, 0, true});
  // Reduce to a root in every process (only the root's process receives
  // the exchange): the first and the last rank of each.
  for (int p = 0; p < job.size; ++p) {
    uint32_t first = 0;
    for (int q = 0; q < p; ++q) first += job.local[static_cast<size_t>(q)];
    const uint32_t last_of_p = first + job.local[static_cast<size_t>(p)] - 1;
    run_case(job, {kReduce, XAL_DTYPE_F32, XAL_OP_SUM, 5000, first, p % 2 == 0});
    run_case(job, {kReduce, XAL_DTYPE_BF16, XAL_OP_AVG, 1031, last_of_p, false});
  }
  // Large allreduces run pairwise (blocks of P near-equal sizes).
  run_case(job, {kAllreduce, XAL_DTYPE_BF16, XAL_OP_MAX, 200003, 0, true});
  run_case(job, {kAllreduce, XAL_DTYPE_F64, XAL_OP_AVG, 70001, 0, false});
  run_case(job, {kAllreduce, XAL_DTYPE_I8, XAL_OP_SUM, 300007, 0, false});
  run_case(job, {kReduce, XAL_DTYPE_F32, XAL_OP_MIN, 300001, last, true});
  // Reduce_scatter: each process receives only its own ranks' blocks.
  run_case(job, {kReduceScatter, XAL_DTYPE_F32, XAL_OP_SUM, 1500, 0, false});
  run_case(job, {kReduceScatter, XAL_DTYPE_F64, XAL_OP_AVG, 333, 0, false});
  run_case(job, {kReduceScatter, XAL_DTYPE_U8, XAL_OP_MAX, 2000, 0, false});
  run_case(job, {kReduceScatter, XAL_DTYPE_F16, XAL_OP_SUM, 1, 0, false});
  run_case(job, {kReduceScatter, XAL_DTYPE_I32, XAL_OP_SUM, 4099, 0, true});
}

void run_bad_input(Job& job) {
  xal_device_t d[2];
  xal_comm_t out[2];
  CHECK(xal_device_get(0, &d[0]) == XAL_SUCCESS && xal_device_get(1, &d[1]) == XAL_SUCCESS, "devices");
  // Local refusals: no exchange with other processes.
  CHECK(xal_comm_create_mpi(MPI_COMM_NULL, d, 1, nullptr, out) == XAL_ERROR_INVALID_ARGUMENT, "null comm");
  CHECK(last_message().find("MPI_COMM_NULL") != std::string::npos, "%s", last_message().c_str());
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = 20000;
  // An intercommunicator (rank 0 against the others: groups of different
  // sizes) is refused by every process.
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, job.rank == 0 ? 0 : 1, job.rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, job.rank == 0 ? 1 : 0, 17, &inter);
  const xal_status_t is = xal_comm_create_mpi(inter, d, 1, &o, out);
  CHECK(is == XAL_ERROR_INVALID_ARGUMENT, "intercommunicator: %d", is);
  CHECK(last_message().find("intercommunicator") != std::string::npos, "%s", last_message().c_str());
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  // Refusals that every process sees alike (after the exchange).
  CHECK(xal_comm_create_mpi(MPI_COMM_WORLD, d, 0, &o, out) == XAL_ERROR_INVALID_ARGUMENT, "n = 0");
  CHECK(last_message().find("n is 0") != std::string::npos, "%s", last_message().c_str());
  xal_device_t twice[] = {d[0], d[0]};
  const xal_status_t s = xal_comm_create_mpi(MPI_COMM_WORLD, job.rank == 0 ? twice : d, 2, &o, out);
  CHECK(s == XAL_ERROR_INVALID_ARGUMENT, "device twice on rank 0: %d", s);
  if (job.rank == 0) CHECK(last_message().find("twice") != std::string::npos, "%s", last_message().c_str());
  else CHECK(last_message().find("MPI rank 0") != std::string::npos, "%s", last_message().c_str());
  CHECK(xal_comm_create_mpi(MPI_COMM_WORLD, d, 1, &o, nullptr) == XAL_ERROR_INVALID_ARGUMENT, "null out");
  // A malformed test piece limit on one process fails every process.
  if (job.rank == 0) setenv("XAL_MPI_TEST_MAX_COUNT", "12x", 1);
  const xal_status_t limit = xal_comm_create_mpi(MPI_COMM_WORLD, d, 1, &o, out);
  CHECK(limit == XAL_ERROR_INVALID_ARGUMENT, "bad XAL_MPI_TEST_MAX_COUNT on rank 0: %d", limit);
  if (job.rank == 0) {
    CHECK(last_message().find("XAL_MPI_TEST_MAX_COUNT") != std::string::npos, "%s", last_message().c_str());
    unsetenv("XAL_MPI_TEST_MAX_COUNT");
  }
  // Options too small to hold timeout_ms are refused without reading it:
  // rank 0's field says 1 ms, which would run out before the others come.
  // (They come 200 ms late on purpose: a delay, not a synchronisation.)
  xal_comm_options_t small = o;
  small.struct_size = sizeof(size_t);  // struct_size alone
  small.timeout_ms = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (job.rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const xal_status_t st = xal_comm_create_mpi(MPI_COMM_WORLD, d, 1, job.rank == 0 ? &small : &o, out);
  CHECK(st == XAL_ERROR_INVALID_ARGUMENT, "options too small on rank 0: %d (%s)", st, last_message().c_str());
  if (job.rank == 0) CHECK(last_message().find("struct_size") != std::string::npos, "%s", last_message().c_str());
  // An MPI call that fails inside the creation (every process alike): the
  // backend's error with MPI's text, not another rank's invalid arguments.
  g_fail_iallgather.store(true);
  const xal_status_t mf = xal_comm_create_mpi(MPI_COMM_WORLD, d, 1, &o, out);
  CHECK(mf == XAL_ERROR_BACKEND, "failed MPI_Iallgather: %d (%s)", mf, last_message().c_str());
  CHECK(last_message().find("MPI_Iallgather failed") != std::string::npos, "%s",
        last_message().c_str());
  // Bad calls on a good communicator.
  if (!open(job, 20000)) return;
  xal_devptr_t buf;
  CHECK(xal_mem_alloc(job.dev[0], 64, &buf) == XAL_SUCCESS, "alloc");
  CHECK(xal_allreduce(nullptr, buf, buf, 4, XAL_DTYPE_F32, XAL_OP_SUM, job.stream[0]) == XAL_ERROR_INVALID_HANDLE, "null comm");
  CHECK(xal_broadcast(job.comm[0], buf, buf, 4, XAL_DTYPE_F32, job.total, job.stream[0]) == XAL_ERROR_INVALID_ARGUMENT, "root");
  CHECK(xal_allreduce(job.comm[0], buf, buf, 4, XAL_DTYPE_I32, XAL_OP_AVG, job.stream[0]) == XAL_ERROR_NOT_SUPPORTED, "avg i32");
  CHECK(xal_allgather(job.comm[0], buf, buf, 16, XAL_DTYPE_F32, job.stream[0]) == XAL_ERROR_OUT_OF_BOUNDS, "overflow");
  xal_mem_free(job.dev[0], buf);
}

void run_early_exit(Job& job) {
  if (!open(job, 2000)) return;
  if (job.rank == job.size - 1) {  // never joins the collective
    note(job, "absent");
    return;
  }
  std::vector<xal_devptr_t> buf(job.dev.size());
  for (size_t i = 0; i < buf.size(); ++i) xal_mem_alloc(job.dev[i], 4096, &buf[i]);
  const auto start = Clock::now();
  xal_group_start();
  for (size_t i = 0; i < buf.size(); ++i)
    CHECK(xal_allreduce(job.comm[i], buf[i], buf[i], 1024, XAL_DTYPE_F32, XAL_OP_SUM, job.stream[i]) == XAL_SUCCESS, "%s", last_message().c_str());
  xal_group_end();
  for (xal_stream_t s : job.stream) xal_stream_synchronize(s);
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  xal_status_t async = XAL_SUCCESS;
  xal_comm_get_async_error(job.comm[0], &async);
  CHECK(async == XAL_ERROR_TIMEOUT, "async error %d", async);
  CHECK(secs >= 1.9 && secs < 60, "TIMEOUT after %.2f s (configured 2 s)", secs);
  const xal_status_t again = xal_allreduce(job.comm[0], buf[0], buf[0], 1024, XAL_DTYPE_F32, XAL_OP_SUM, job.stream[0]);
  CHECK(again == XAL_ERROR_TIMEOUT, "the next call gave %d: %s", again, last_message().c_str());
  note(job, "TIMEOUT after " + std::to_string(secs) + " s: " + last_message());
  for (size_t i = 0; i < buf.size(); ++i) xal_mem_free(job.dev[i], buf[i]);
}

void run_killed(Job& job) {
  if (!open(job, 3000)) return;
  // XAL_MPI_TEST_KILL_MIDWAY=1: the last process is killed while its own
  // allreduce of round 1 is under way (its exchange cut into many MPI calls
  // with XAL_MPI_TEST_MAX_COUNT), not before it starts.
  // Its allreduce is then of 2^22 floats: with the exchange cut into
  // thousands of MPI calls it lasts tens of milliseconds even on an idle
  // machine, long enough to be killed in.
  const bool midway = std::getenv("XAL_MPI_TEST_KILL_MIDWAY") != nullptr;
  const size_t count = midway ? size_t{1} << 22 : size_t{1} << 18;
  std::vector<xal_devptr_t> buf(job.dev.size());
  for (size_t i = 0; i < buf.size(); ++i) xal_mem_alloc(job.dev[i], count * 4, &buf[i]);
  for (int round = 0; round < 2; ++round) {
    if (round == 1 && job.rank == job.size - 1) {
      if (midway) {
        const xal_stream_t s = job.stream[0];
        std::thread([&job, s] {
          // Until its stream has started the collective's host step, then
          // a little into the exchange.
          while (xal_stream_query(s) == XAL_SUCCESS) std::this_thread::yield();
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          note(job, "killed with the second collective in flight");
          raise(SIGKILL);
        }).detach();
      } else {
        // The others are inside the collective, waiting for this process.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        raise(SIGKILL);
      }
    }
    note(job, "round " + std::to_string(round) + " started");
    const auto start = Clock::now();
    xal_group_start();
    for (size_t i = 0; i < buf.size(); ++i)
      xal_allreduce(job.comm[i], buf[i], buf[i], count, XAL_DTYPE_F32, XAL_OP_SUM, job.stream[i]);
    xal_group_end();
    for (xal_stream_t s : job.stream) xal_stream_synchronize(s);
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    xal_status_t async = XAL_SUCCESS;
    xal_comm_get_async_error(job.comm[0], &async);
    note(job, "round " + std::to_string(round) + " status " + xal_status_name(async) + " after " +
                  std::to_string(secs) + " s");
  }
  // A peer is gone: MPI_Finalize could wait for it forever. Leave now; the
  // driver reads what was noted.
  std::_Exit(0);
}

}  // namespace xal_mpi_test
