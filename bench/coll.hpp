// xal-bench coll (coll.cpp) and its MPI_Allreduce baseline (coll_mpi.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

}  // namespace xal::bench
