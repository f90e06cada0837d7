// xal-bench coll --mpi: xal's collectives over a communicator from
// xal_comm_create_mpi. The command relaunches this program under mpirun
// (one process per --mpi-np, each on its own devices); rank 0 prints the
// table. The MPI_Allreduce baseline runs first, outside the job, over as
// many processes as the job has ranks, and reaches rank 0 through a file.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "coll.hpp"

#ifdef XAL_BENCH_WITH_MPI
#include "xal/xal_mpi.h"
#endif

namespace xal::bench {

namespace {
constexpr const char* kChildEnv = "XAL_BENCH_MPI_CHILD";
constexpr const char* kBaselineEnv = "XAL_BENCH_MPI_BASELINE";
}  // namespace

// Relaunched by mpi_relaunch, or started under mpirun by the user.
bool mpi_inside() {
  return std::getenv(kChildEnv) || std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE");
}

int mpi_relaunch(int np, int argc, char** argv, const std::string& note,
                 const std::vector<MpiRow>& baseline, const char* subcommand) {
  // The baseline for rank 0: the note, then "bytes time_us" lines.
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("xal-bench-mpi-" + std::to_string(getpid()) + ".txt")).string();
  {
    std::ofstream f(file);
    f << note << "\n";
    for (const MpiRow& r : baseline) f << r.bytes << " " << r.time_us << "\n";
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> args = {"mpirun", "--oversubscribe", "--bind-to", "none", "-np",
                                   std::to_string(np), ec ? std::string("xal-bench") : self, subcommand};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv(kChildEnv, "1", 1);
  setenv(kBaselineEnv, file.c_str(), 1);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    execvp("mpirun", cargs.data());
    std::perror("xal-bench coll --mpi: mpirun");
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) status = -1;
  std::filesystem::remove(file, ec);
  if (pid < 0 || status < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string mpi_baseline(std::vector<MpiRow>& out) {
  const char* file = std::getenv(kBaselineEnv);
  std::ifstream f(file ? file : "");
  std::string note;
  if (!std::getline(f, note)) return "not run (no baseline file)";
  MpiRow r;
  while (f >> r.bytes >> r.time_us) out.push_back(r);
  return note;
}

#ifdef XAL_BENCH_WITH_MPI

std::string mpi_start(uint32_t local, MpiPlace& place) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &place.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &place.size);
  std::vector<uint32_t> all(static_cast<size_t>(place.size));
  MPI_Allgather(&local, 1, MPI_UINT32_T, all.data(), 1, MPI_UINT32_T, MPI_COMM_WORLD);
  place.first = place.total = 0;
  for (int p = 0; p < place.size; ++p) {
    if (p < place.rank) place.first += all[static_cast<size_t>(p)];
    place.total += all[static_cast<size_t>(p)];
  }
  return "";
}

xal_status_t mpi_comm_create(const xal_device_t* devs, uint32_t n, xal_comm_t* out) {
  return xal_comm_create_mpi(MPI_COMM_WORLD, devs, n, nullptr, out);
}

void mpi_finish() {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

#else

std::string mpi_start(uint32_t, MpiPlace&) { return "xal-bench was built without libxal_mpi"; }
xal_status_t mpi_comm_create(const xal_device_t*, uint32_t, xal_comm_t*) {
  return XAL_ERROR_NOT_SUPPORTED;
}
void mpi_finish() {}

#endif

}  // namespace xal::bench
