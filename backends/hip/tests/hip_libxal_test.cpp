// The HIP backend through libxal's public ABI, on the simulated runtime:
// what xal-info and the conformance suite see. The cases are shared by the
// vendor backends (backends/testing, xaltest/libxal_cases.h).
#include "xaltest/libxal_cases.h"

namespace {

using xaltest::ThroughLibxal;
using xaltest::ThroughLibxalUnavailable;

const xaltest::LibxalCase kHip{
    "hip",
    "AMD",
    "XAL_HIP_LIBRARY",
    XAL_HIP_SIM_PATH,
    "/nonexistent/libamdhip64.so.5",
    "XALSIM_HIP_FAIL",
    "hipMalloc=2",
    2,
    "hipErrorOutOfMemory"};

INSTANTIATE_TEST_SUITE_P(Hip, ThroughLibxal, ::testing::Values(kHip),
                         xaltest::case_name);
INSTANTIATE_TEST_SUITE_P(Hip, ThroughLibxalUnavailable, ::testing::Values(kHip),
                         xaltest::case_name);

}  // namespace
