// xal_mpi_test CASE FILE, under mpirun: libxal_mpi on mock cards. Process
// p uses 1 + p % 3 of its mock cards (collectives_uneven: 1 + 2 (p % 2)),
// so local device counts differ. Exit status 0 when every check held.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "mpi_test.hpp"

namespace xal_mpi_test {

int g_failures = 0;

std::string last_message() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  return e.message;
}

void note(const Job& job, const std::string& line) {
  std::ofstream(job.file + "." + std::to_string(job.rank), std::ios::app) << line << std::endl;
}

bool open(Job& job, uint32_t timeout_ms) {
  const uint32_t n = job.local[static_cast<size_t>(job.rank)];
  for (uint32_t i = 0; i < n; ++i) {
    xal_device_t d;
    xal_stream_t s;
    if (xal_device_get(i, &d) || xal_stream_create(d, 0, &s)) {
      CHECK(false, "device %u: %s", i, last_message().c_str());
      return false;
    }
    job.dev.push_back(d);
    job.stream.push_back(s);
  }
  job.comm.resize(n);
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout_ms;
  const xal_status_t s = xal_comm_create_mpi(MPI_COMM_WORLD, job.dev.data(), n, &o, job.comm.data());
  CHECK(s == XAL_SUCCESS, "xal_comm_create_mpi: %s", last_message().c_str());
  return s == XAL_SUCCESS;
}

void close(Job& job) {
  for (xal_comm_t c : job.comm) CHECK(xal_comm_destroy(c) == XAL_SUCCESS, "%s", last_message().c_str());
  job.comm.clear();
  for (xal_stream_t s : job.stream) xal_stream_destroy(s);
  job.stream.clear();
  job.dev.clear();
}

}  // namespace xal_mpi_test

using namespace xal_mpi_test;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: xal_mpi_test collectives|collectives_serialized|collectives_uneven|"
                 "bad_input|early_exit|killed|thread_single|p2p|p2p_direct FILE\n");
    return 2;
  }
  const std::string which = argv[1];
  int provided = 0;
  if (which == "thread_single") MPI_Init(&argc, &argv);
  else if (which == "collectives_serialized")  // libxal_mpi's own mutex
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  else MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Job job;
  job.file = argv[2];
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  for (int p = 0; p < job.size; ++p) {
    job.local.push_back(which == "collectives_uneven" ? 1 + 2 * static_cast<uint32_t>(p % 2)
                                                      : 1 + static_cast<uint32_t>(p % 3));
    if (p < job.rank) job.first += job.local.back();
    job.total += job.local.back();
  }
  std::remove((job.file + "." + std::to_string(job.rank)).c_str());
  if (xal_init(nullptr) != XAL_SUCCESS) {
    std::fprintf(stderr, "xal_init: %s\n", last_message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (which == "collectives" || which == "collectives_serialized" || which == "collectives_uneven")
    run_collectives(job);
  else if (which == "bad_input") run_bad_input(job);
  else if (which == "early_exit") run_early_exit(job);
  else if (which == "killed") run_killed(job);
  else if (which == "p2p") run_p2p(job);
  else if (which == "p2p_direct") run_p2p_direct(job);
  else if (which == "thread_single") {
    xal_device_t d;
    xal_comm_t c;
    CHECK(xal_device_get(0, &d) == XAL_SUCCESS, "%s", last_message().c_str());
    const xal_status_t s = xal_comm_create_mpi(MPI_COMM_WORLD, &d, 1, nullptr, &c);
    CHECK(s == XAL_ERROR_NOT_SUPPORTED, "status %d", s);
    CHECK(last_message().find("MPI_THREAD_SERIALIZED") != std::string::npos, "%s", last_message().c_str());
  } else {
    std::fprintf(stderr, "unknown case %s\n", which.c_str());
    ++g_failures;
  }
  close(job);
  xal_shutdown();
  int failed = g_failures;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (job.rank == 0) std::printf("%s: %s (%d failures over %d processes)\n", which.c_str(), any ? "FAILED" : "PASSED", any, job.size);
  MPI_Finalize();
  return failed ? 1 : 0;
}
