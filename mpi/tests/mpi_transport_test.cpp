// xal_mpi_transport_test transport_abort FILE, under mpirun: libxal_mpi's
// MpiTransport on its own (no devices). After abort() a call returns
// XAL_ERROR_ABORTED without starting any MPI request: a request started then
// would stay pending on the caller's buffers. Exit status 0 when every check
// held.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpi_transport.hpp"
#include "pieces.hpp"

namespace {

int g_failures = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      ++g_failures;                                                        \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fprintf(stderr, "\n");                                          \
    }                                                                      \
  } while (0)

// One allreduce (sum) of `value` on `comm`, non-blocking as the
// transport's, so that it would match a request the transport left pending.
float probe(MPI_Comm comm, float value) {
  float sum = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(&value, &sum, 1, MPI_FLOAT, MPI_SUM, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  return sum;
}

void run_transport_abort(int rank, int size) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const MPI_Comm probe_comm = comm;  // the transport frees it when destroyed
  auto transport = std::make_unique<xal::mpi::MpiTransport>(
      comm, rank, std::vector<uint32_t>(static_cast<size_t>(size), 1), false,
      xal::mpi::kMaxPieceCount);
  const xal_comm_transport_t t = transport->table();
  float value = 100;  // rank 0's buffer: written only if its call went out
  if (rank == 0) {
    t.abort(t.user);
    for (int call = 0; call < 2; ++call) {
      char message[256] = "";
      const xal_status_t s = t.allreduce(t.user, &value, &value, 1, XAL_DTYPE_F32, XAL_OP_SUM,
                                         60000, message, sizeof message);
      CHECK(s == XAL_ERROR_ABORTED, "call %d after abort: status %d (%s)", call, s, message);
      CHECK(std::strstr(message, "aborted") != nullptr, "call %d: message '%s'", call, message);
    }
  }
  // Every process allreduces 1 on the transport's communicator. Had rank
  // 0's aborted call started its allreduce, the others' probe matches that
  // one (100 + size - 1) and they probe again to release rank 0's.
  const float sum = probe(probe_comm, 1);
  if (rank != 0 && sum != static_cast<float>(size)) {
    CHECK(false, "rank 0's aborted call started an MPI allreduce (probe gave %g, want %d)",
          static_cast<double>(sum), size);
    probe(probe_comm, 1);
  }
  CHECK(value == 100, "rank 0's buffer was written (%g)", static_cast<double>(value));
  transport.reset();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: xal_mpi_transport_test transport_abort FILE\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string which = argv[1];
  if (which == "transport_abort") {
    run_transport_abort(rank, size);
  } else {
    std::fprintf(stderr, "unknown case %s\n", which.c_str());
    ++g_failures;
  }
  int any = 0;
  MPI_Allreduce(&g_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: %s (%d failures over %d processes)\n", which.c_str(),
                any ? "FAILED" : "PASSED", any, size);
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
