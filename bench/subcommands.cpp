#include "subcommands.hpp"

namespace xal::bench {

std::span<const Subcommand> subcommands() {
  static constexpr Subcommand kSubcommands[] = {
      {"dispatch",
       "cost of a cheap call through the public ABI vs the backend's table, "
       "validation on and off",
       &register_dispatch_benchmarks},
      {"copy",
       "xal_memcpy_htod/dtoh bandwidth vs the backend's table and plain "
       "memcpy (4 KiB, 1 MiB, 64 MiB)",
       &register_copy_benchmarks},
      {"interop",
       "copies through imported memory (xal_mem_import) vs xal's own, and "
       "the cost of an import (1 MiB, 64 MiB)",
       &register_interop_benchmarks},
      {"share",
       "per-submit cost of a partition's compute share: a whole card, the "
       "process's own bucket, the job's shared bucket (XAL_QUOTA_LEDGER)",
       &register_share_benchmarks},
  };
  return kSubcommands;
}

}  // namespace xal::bench
