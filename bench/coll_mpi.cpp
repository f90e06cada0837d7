// The MPI_Allreduce baseline of xal-bench coll: runs xal-mpi-allreduce
// under mpirun on this machine and reads its figures.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "coll.hpp"

namespace xal::bench {

namespace {

std::string self_dir() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

std::string run_mpi_allreduce(int np, const std::string& dtype, const std::string& op,
                              size_t min_bytes, size_t max_bytes, double factor, int iters,
                              int warmup, std::vector<MpiRow>& out) {
  const std::string prog = self_dir() + "/xal-mpi-allreduce";
  if (access(prog.c_str(), X_OK) != 0) return "not run: " + prog + " was not built (no MPI found)";
  if (!on_path("mpirun")) return "not run: mpirun is not on PATH";
  // Root may run it (CI does), on one host, more processes than cores.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  std::ostringstream cmd;
  cmd << "mpirun --oversubscribe --bind-to none -np " << np << " '" << prog << "' " << dtype << ' '
      << op << ' ' << min_bytes << ' ' << max_bytes << ' ' << factor << ' ' << iters << ' '
      << warmup << " 2>&1";
  FILE* pipe = popen(cmd.str().c_str(), "r");
  if (!pipe) return "not run: cannot start mpirun";
  std::string all, line;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) {
    all += buf;
    unsigned long long bytes = 0;
    double us = 0;
    if (std::sscanf(buf, "xal-mpi %llu %lf", &bytes, &us) == 2)
      out.push_back(MpiRow{static_cast<size_t>(bytes), us});
  }
  const int status = pclose(pipe);
  if (status != 0 || out.empty())
    return "failed (mpirun exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
           "): " + all.substr(0, 400);
  return "Open MPI MPI_Allreduce, " + std::to_string(np) + " processes on this machine (" + cmd.str().substr(0, cmd.str().find(" '")) + ")";
}

}  // namespace xal::bench
