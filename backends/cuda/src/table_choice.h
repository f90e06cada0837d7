// table_choice.h -- which collectives the plugin's table carries: chosen
// when the core asks for the table (plugin.cpp), and read again by init
// (backend.cpp) to open NCCL and word describe's note.
#pragma once

#include <string>

namespace xal::cuda {

enum class Collectives { kCore, kNccl, kPeer };

// XAL_CUDA_COLLECTIVES as set ("" when unset). Thread-safe.
std::string collectives_choice();
// The table's collectives for that choice and what is present (NCCL, the
// embedded kernels). Thread-safe; NCCL is probed once per process.
Collectives chosen_collectives();

}  // namespace xal::cuda
