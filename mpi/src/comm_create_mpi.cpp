// xal_comm_create_mpi (xal/xal_mpi.h): checks the arguments, agrees with
// every process on the device counts (non-blocking MPI, within one
// timeout), then hands an MpiTransport to xal_comm_create_transport.
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "pieces.hpp"
#include "xal/xal_mpi.h"

namespace {

using xal::mpi::MpiLock;
using xal::mpi::MpiTransport;

constexpr const char* kOp = "xal_comm_create_mpi";
constexpr uint32_t kDefaultTimeoutMs = 300000;

xal_status_t fail(xal_status_t status, const std::string& message) {
  return xal_transport_set_error(kOp, status, message.c_str());
}

// As xal_comm_create: options->timeout_ms, else XAL_COMM_TIMEOUT_MS. Options
// whose struct_size is too small are not read (check_local refuses them).
uint32_t timeout_from(const xal_comm_options_t* o) {
  if (o && o->struct_size >= sizeof(xal_comm_options_t) && o->timeout_ms) return o->timeout_ms;
  if (const char* v = std::getenv("XAL_COMM_TIMEOUT_MS")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0' && n > 0 && n <= 0xffffffffull) return static_cast<uint32_t>(n);
  }
  return kDefaultTimeoutMs;
}

// The local checks; XAL_SUCCESS or the status with *why.
xal_status_t check_local(const xal_device_t* devs, uint32_t n, const xal_comm_options_t* options,
                         const xal_comm_t* out, size_t* piece_limit, std::string* why) {
  if (!xal::mpi::piece_limit_from_env(piece_limit, why)) return XAL_ERROR_INVALID_ARGUMENT;
  if (!devs) return *why = "local_devices is NULL", XAL_ERROR_INVALID_ARGUMENT;
  if (!out) return *why = "out_comms is NULL", XAL_ERROR_INVALID_ARGUMENT;
  if (n == 0) return *why = "n is 0 (no devices)", XAL_ERROR_INVALID_ARGUMENT;
  if (options && options->struct_size < sizeof(xal_comm_options_t))
    return *why = "options->struct_size is too small", XAL_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < n; ++i) {
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    if (xal_status_t s = xal_device_get_properties(devs[i], &p); s)
      return *why = "local_devices[" + std::to_string(i) + "] is not a device", s;
    for (uint32_t j = 0; j < i; ++j)
      if (devs[j] == devs[i])
        return *why = "device " + std::to_string(p.index) + " is listed twice (local_devices[" +
                      std::to_string(i) + "])",
               XAL_ERROR_INVALID_ARGUMENT;
  }
  return XAL_SUCCESS;
}

// Requests of a creation that ran out of time, with what they write into:
// MPI forbids freeing a pending collective request, so each is kept until
// it completes (tested at every later creation), then what it held is
// freed. Guarded by g_parked_mu.
struct Counts {
  uint32_t mine = 0;
  std::vector<uint32_t> all;
};
struct Parked {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<MPI_Comm> dup;    // an idup's new communicator, to free
  std::unique_ptr<Counts> counts;   // the count exchange's buffers
};
std::mutex g_parked_mu;
std::vector<Parked> g_parked;

void park(Parked parked) {
  std::lock_guard lock(g_parked_mu);
  g_parked.push_back(std::move(parked));
}

// Frees what the parked requests that completed held.
void reap_parked(bool serialize) {
  std::lock_guard lock(g_parked_mu);
  MpiLock mpi(serialize);
  std::erase_if(g_parked, [](Parked& p) {
    int done = 0;
    if (MPI_Test(&p.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) return false;
    if (p.dup && *p.dup != MPI_COMM_NULL) MPI_Comm_free(p.dup.get());
    return true;
  });
}

xal_status_t create(MPI_Comm comm, const xal_device_t* devs, uint32_t n,
                    const xal_comm_options_t* options, xal_comm_t* out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return fail(XAL_ERROR_NOT_INITIALIZED, "MPI is not initialised (call MPI_Init_thread first)");
  if (comm == MPI_COMM_NULL) return fail(XAL_ERROR_INVALID_ARGUMENT, "comm is MPI_COMM_NULL");
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED)
    return fail(XAL_ERROR_NOT_SUPPORTED,
                "MPI runs below MPI_THREAD_SERIALIZED: initialise it with MPI_Init_thread and "
                "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (collectives run on xal's stream "
                "threads)");
  const bool serialize = provided < MPI_THREAD_MULTIPLE;
  reap_parked(serialize);
  int inter = 0;
  {
    MpiLock lock(serialize);
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
      return fail(XAL_ERROR_INVALID_ARGUMENT, "comm is not a valid MPI communicator");
  }
  if (inter)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                "comm is an intercommunicator: xal_comm_create_mpi needs an intracommunicator "
                "(MPI_Intercomm_merge makes one)");
  // One deadline for the whole creation (xal_mpi.h: at most the timeout).
  const uint32_t timeout = timeout_from(options);
  const auto deadline = xal::mpi::Clock::now() + std::chrono::milliseconds(timeout);
  std::string why;
  size_t piece_limit = xal::mpi::kMaxPieceCount;
  const xal_status_t local = check_local(devs, n, options, out, &piece_limit, &why);

  // A duplicate for xal's traffic, then every process's device count (0
  // where the local checks failed, so that every process fails alike).
  // Heap storage: after a timeout the pending request may still write it.
  auto dup = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  MPI_Request request = MPI_REQUEST_NULL;
  int rank = 0, size = 0;
  {
    MpiLock lock(serialize);
    int rc = MPI_Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_idup(comm, dup.get(), &request);
    if (rc != MPI_SUCCESS) return fail(XAL_ERROR_INVALID_ARGUMENT, "comm is not a valid MPI communicator");
  }
  std::string wait_why;
  if (xal_status_t s = xal::mpi::wait_requests({&request, 1}, deadline, timeout, serialize, nullptr,
                                               &wait_why);
      s) {
    park({request, std::move(dup), nullptr});
    return fail(s, "duplicating the MPI communicator: " + wait_why);
  }
  auto counts = std::make_unique<Counts>();
  counts->mine = local == XAL_SUCCESS ? n : 0;
  counts->all.resize(static_cast<size_t>(size));
  {
    MpiLock lock(serialize);
    const int rc = MPI_Iallgather(&counts->mine, 1, MPI_UINT32_T, counts->all.data(), 1,
                                  MPI_UINT32_T, *dup, &request);
    if (rc != MPI_SUCCESS) {  // only with MPI_ERRORS_RETURN on comm
      MPI_Comm_free(dup.get());
      return fail(XAL_ERROR_BACKEND, "exchanging device counts with every process: "
                                     "MPI_Iallgather failed: " + xal::mpi::mpi_error(rc));
    }
  }
  if (xal_status_t s = xal::mpi::wait_requests({&request, 1}, deadline, timeout, serialize, nullptr,
                                               &wait_why);
      s) {
    {
      MpiLock lock(serialize);
      MPI_Comm_free(dup.get());  // freed by MPI once the pending request ends
    }
    park({request, nullptr, std::move(counts)});
    return fail(s, "exchanging device counts with every process: " + wait_why);
  }
  const std::vector<uint32_t>& ranks = counts->all;
  auto transport = std::make_unique<MpiTransport>(*dup, rank, ranks, serialize, piece_limit);
  if (local != XAL_SUCCESS) return fail(local, why);
  for (int p = 0; p < size; ++p)
    if (ranks[static_cast<size_t>(p)] == 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  "MPI rank " + std::to_string(p) + " passed invalid arguments (see its error)");
  const xal_comm_transport_t table = transport->table();
  if (xal_status_t s = xal_comm_create_transport(devs, n, options, &table, out); s) return s;
  static_cast<void>(transport.release());  // the communicators own it now
  return XAL_SUCCESS;
}

}  // namespace

extern "C" xal_status_t xal_comm_create_mpi(MPI_Comm comm, const xal_device_t* local_devices,
                                            uint32_t n, const xal_comm_options_t* options,
                                            xal_comm_t* out_comms) {
  try {
    return create(comm, local_devices, n, options, out_comms);
  } catch (const std::bad_alloc&) {
    return fail(XAL_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(XAL_ERROR_INTERNAL, e.what());
  }
}
