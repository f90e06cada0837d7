// xal_send / xal_recv between two simulated AMD cards through libxal,
// carried by the plugin's ncclSend/ncclRecv on the simulated RCCL
// (SIMULATION ONLY: XAL_RCCL_LIBRARY names testing/sim_rccl_hip.cpp's
// libxalsim-rccl.so). The cases are backends/testing's
// (xaltest/libxal_p2p_cases.h).
#include "xaltest/libxal_p2p_cases.h"

namespace xaltest {

const P2pCase kHip{"hip", "XAL_RCCL_LIBRARY"};

INSTANTIATE_TEST_SUITE_P(Hip, NativePointToPoint, ::testing::Values(kHip), p2p_case_name);

}  // namespace xaltest
