// Shared pieces of xal_mpi_test: a process's view of the job, checks that
// count failures, and typed host values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "xal/xal_mpi.h"

namespace xal_mpi_test {

struct Job {
  int rank = 0;           // MPI rank
  int size = 0;           // MPI processes
  std::string file;       // where survivors write what they saw
  std::vector<uint32_t> local;  // devices of each MPI rank
  uint32_t first = 0;     // global rank of local device 0
  uint32_t total = 0;     // global ranks
  std::vector<xal_device_t> dev;
  std::vector<xal_stream_t> stream;
  std::vector<xal_comm_t> comm;
};

extern int g_failures;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      ++xal_mpi_test::g_failures;                                            \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
      std::fprintf(stderr, __VA_ARGS__);                                     \
      std::fprintf(stderr, "\n");                                            \
    }                                                                        \
  } while (0)

std::string last_message();

// Opens the job's local devices and streams, and its communicators over
// MPI_COMM_WORLD with `timeout_ms`. False (reported) on failure.
bool open(Job& job, uint32_t timeout_ms);
void close(Job& job);

// Appends a line to the job's file for this rank (FILE.rank).
void note(const Job& job, const std::string& line);

// The cases; each returns normally, failures counted in g_failures.
void run_collectives(Job& job);
void run_bad_input(Job& job);
void run_early_exit(Job& job);
void run_killed(Job& job);
void run_p2p(Job& job);
void run_p2p_direct(Job& job);

}  // namespace xal_mpi_test
