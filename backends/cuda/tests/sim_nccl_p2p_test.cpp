// xal_send / xal_recv between two simulated NVIDIA cards through libxal,
// carried by the plugin's ncclSend/ncclRecv on the simulated NCCL
// (SIMULATION ONLY: XAL_CUDA_NCCL names backends/cuda/testing's
// libxalsim-nccl.so). The cases are backends/testing's
// (xaltest/libxal_p2p_cases.h).
#include "xaltest/libxal_p2p_cases.h"

namespace xaltest {

const P2pCase kCuda{"cuda", "XAL_CUDA_NCCL"};

INSTANTIATE_TEST_SUITE_P(Cuda, NativePointToPoint, ::testing::Values(kCuda), p2p_case_name);

}  // namespace xaltest
