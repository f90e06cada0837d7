// What the torch backend needs of xal itself: one xal_init per process, the
// rank's device, xal's errors as C++ exceptions, and torch dtypes/ops as
// xal's. Knows torch's types (ATen) but not c10d.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal::torch_backend {

// Initialises xal once per process (XAL_BACKENDS, XAL_MOCK_DEVICES, ... from
// the environment) and returns the device of this process, over the visible
// devices: index XAL_TORCH_DEVICE if set, else the process's rank on its
// host as its launcher tells it (LOCAL_RANK: torchrun;
// OMPI_COMM_WORLD_LOCAL_RANK: Open MPI's mpirun; MPI_LOCALRANKID: MPICH's;
// SLURM_LOCALID: srun), else `local_rank` (the rank's place among the
// ranks of its host in the first group made: torch.multiprocessing.spawn
// sets none of the above). The first call decides for the process; later
// calls (new_group) return the same device. Throws c10::Error naming the
// index, where it came from and what is visible. Thread-safe.
xal_device_t process_device(int local_rank);

// "mock:0 A100-SXM4-40GB (mock)"-like text for the device.
std::string describe_device(xal_device_t dev);

// Throws "xal: <what> failed: XAL_ERROR_... (<op>): <message>", with the
// calling thread's xal_last_error: c10::OutOfMemoryError
// (torch.OutOfMemoryError) for XAL_ERROR_OUT_OF_MEMORY and
// OUT_OF_HOST_MEMORY, else c10::DistBackendError
// (torch.distributed.DistBackendError). Records the status for
// last_thrown_status().
[[noreturn]] void throw_xal(const std::string& what, xal_status_t status);
// The status of the calling thread's last throw_xal (XAL_SUCCESS after
// clear_thrown_status()).
xal_status_t last_thrown_status();
void clear_thrown_status();
inline void check_xal(const std::string& what, xal_status_t status) {
  if (status != XAL_SUCCESS) throw_xal(what, status);
}

// xal's dtype for a reduction over `dtype`, or throws c10::TypeError naming
// the op and the dtype. bool maps to u8.
xal_dtype_t reduce_dtype(const char* op_name, at::ScalarType dtype);

}  // namespace xal::torch_backend
