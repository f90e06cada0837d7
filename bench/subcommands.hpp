// The subcommands of xal-bench. Each registers its Google Benchmark cases;
// main() runs the chosen one with the remaining arguments. A new
// subcommand is one more entry in subcommands() (subcommands.cpp).
#pragma once

#include <span>

namespace xal::bench {

struct Subcommand {
  const char* name;
  const char* summary;
  void (*register_benchmarks)();
};

// Every subcommand, in the order `xal-bench all` runs them. Static storage.
std::span<const Subcommand> subcommands();

// Registration functions, one per subcommand.
void register_dispatch_benchmarks();  // dispatch_bench.cpp
void register_copy_benchmarks();      // copy_bench.cpp
void register_interop_benchmarks();   // interop_bench.cpp
void register_share_benchmarks();     // share_bench.cpp

}  // namespace xal::bench
