// xal-bench coll (coll.cpp) and its MPI_Allreduce baseline (coll_mpi.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal::bench {

// The `coll` subcommand; argv[0] is "coll". Returns the exit status.
int coll_main(int argc, char** argv);


// Runs xal-mpi-allreduce (beside this program) under `mpirun -np np` over
// the same sizes and fills rows' mpi columns. Returns a note for the table
// header: what ran, or why the baseline did not run.
struct MpiRow {
  size_t bytes = 0;
  double time_us = 0;
};
std::string run_mpi_allreduce(int np, const std::string& dtype, const std::string& op,
                              size_t min_bytes, size_t max_bytes, double factor, int iters,
                              int warmup, std::vector<MpiRow>& out);

// xal-bench coll --mpi (coll_xal_mpi.cpp). Outside the job:
// mpi_relaunch runs this program's `coll` with the same arguments under
// `mpirun -np np` and returns its exit status, handing the MPI baseline
// (note, rows) to rank 0. Inside (mpi_inside): mpi_start initialises MPI
// and places this process's `local` devices among every process's (empty
// string, or why not); mpi_comm_create makes the communicators;
// mpi_baseline reads the baseline; mpi_finish ends MPI.
struct MpiPlace {
  int rank = 0, size = 1;
  uint32_t first = 0, total = 0;  // global rank of local device 0; ranks
};
bool mpi_inside();
int mpi_relaunch(int np, int argc, char** argv, const std::string& note,
                 const std::vector<MpiRow>& baseline, const char* subcommand = "coll");

// xal-bench sendrecv and alltoallv (p2p_bench.cpp); argv[0] is the
// subcommand. Returns the exit status.
int p2p_main(int argc, char** argv);
std::string mpi_start(uint32_t local, MpiPlace& place);
xal_status_t mpi_comm_create(const xal_device_t* devs, uint32_t n, xal_comm_t* out);
std::string mpi_baseline(std::vector<MpiRow>& out);
void mpi_finish();

}  // namespace xal::bench
