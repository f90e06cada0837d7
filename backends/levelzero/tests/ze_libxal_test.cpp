// The Level Zero backend through libxal's public ABI, on the simulated
// loader: what xal-info and the conformance suite see. The cases are shared
// by the vendor backends (backends/testing, xaltest/libxal_cases.h).
#include "xaltest/libxal_cases.h"

namespace {

using xaltest::ThroughLibxal;
using xaltest::ThroughLibxalUnavailable;

const xaltest::LibxalCase kLevelZero{
    "levelzero",
    "Intel",
    "XAL_LEVELZERO_LIBRARY",
    XAL_ZE_SIM_PATH,
    "/nonexistent/libze_loader.so.1",
    "XALSIM_ZE_FAIL",
    "zeMemAllocDevice=0x70000003",
    0x70000003,
    "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"};

INSTANTIATE_TEST_SUITE_P(LevelZero, ThroughLibxal, ::testing::Values(kLevelZero),
                         xaltest::case_name);
INSTANTIATE_TEST_SUITE_P(LevelZero, ThroughLibxalUnavailable,
                         ::testing::Values(kLevelZero), xaltest::case_name);

}  // namespace
