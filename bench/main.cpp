// xal-bench: micro benchmarks of xal, one subcommand per area.
//
//   xal-bench dispatch [--benchmark_filter=...] [other Google Benchmark flags]
//   xal-bench copy ...
//   xal-bench coll [-b -e -f -o -d -n -w -c ...]   (its own options, coll.cpp)
//   xal-bench all ...        every subcommand
//   xal-bench list           the subcommands
//
// Everything after the subcommand goes to Google Benchmark. Backends come
// from XAL_BACKENDS, else the mock. Exits 1 when a benchmark failed. Ends
// with a line on stderr: how many xal sessions and sets of rounds it took.
#include <benchmark/benchmark.h>

#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

#include "coll.hpp"
#include "session.hpp"
#include "subcommands.hpp"
#include "train.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: xal-bench SUBCOMMAND [Google Benchmark flags]\n\n"
         "subcommands:\n";
  for (const auto& sub : xal::bench::subcommands()) {
    out << "  " << sub.name << "\n      " << sub.summary << '\n';
  }
  out << "  coll\n      collectives, nccl-tests style, beside MPI_Allreduce"
         " (xal-bench coll --help)\n";
  out << "  sendrecv\n      xal_send/xal_recv bandwidth vs memcpy, or with --mpi between"
         " two processes vs MPI_Sendrecv (xal-bench sendrecv --help)\n";
  out << "  alltoallv\n      xal_alltoallv over processes vs MPI_Alltoallv"
         " (xal-bench alltoallv --help)\n";
  out << "  train\n      heterogeneous training on mock cards: efficiency of mixed sets,"
         " loss checked (xal-bench train --help)\n";
  out << "  all\n      every subcommand above\n"
         "  list\n      print this list\n\n"
         "Flags after the subcommand go to Google Benchmark, e.g.\n"
         "  --benchmark_filter=REGEX --benchmark_min_time=0.5\n"
         "  --benchmark_format=json --benchmark_out=FILE\n"
         "Backends: XAL_BACKENDS when set, else the mock.\n";
}

int run(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "list" || command == "--help" || command == "-h") {
    usage(std::cout);
    return 0;
  }
  if (command == "coll") return xal::bench::coll_main(argc - 1, argv + 1);
  if (command == "sendrecv" || command == "alltoallv")
    return xal::bench::p2p_main(argc - 1, argv + 1);
  if (command == "train") return xal::bench::train_main(argc - 1, argv + 1);
  bool found = false;
  for (const auto& sub : xal::bench::subcommands()) {
    if (command == "all" || command == sub.name) {
      sub.register_benchmarks();
      found = true;
    }
  }
  if (!found) {
    std::cerr << "xal-bench: unknown subcommand '" << command << "'\n\n";
    usage(std::cerr);
    return 2;
  }

  // argv[0] followed by what came after the subcommand.
  std::vector<char*> args;
  args.push_back(argv[0]);
  for (int i = 2; i < argc; ++i) {
    args.push_back(argv[i]);
  }
  args.push_back(nullptr);
  int bench_argc = argc - 1;
  benchmark::Initialize(&bench_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, args.data())) {
    return 2;
  }
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  xal::bench::Session::close();
  benchmark::Shutdown();
  // What the run cost besides the benchmarks' loops: each session is an
  // xal_init (a context on a GPU), each set of rounds a case's own timing.
  std::cerr << "xal-bench: " << xal::bench::Session::opened()
            << " xal session(s), " << xal::bench::RoundsCache::measured()
            << " set(s) of rounds\n";
  if (ran == 0) {
    std::cerr << "xal-bench: no benchmark matched the filter\n";
    return 1;
  }
  return xal::bench::any_failed() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "xal-bench: out of host memory\n";
  } catch (const std::exception& e) {
    std::cerr << "xal-bench: " << e.what() << '\n';
  }
  return 1;
}
