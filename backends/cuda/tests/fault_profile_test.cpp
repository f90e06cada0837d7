// The fault backend's cuda profile maps each CUDA error as this backend's
// status map does (status, stickiness, name): what `fault:` injects is
// what a real driver's error gives.
#include "../src/status_map.h"
#include "xaltest/fault_profile_check.h"

namespace {

TEST(CudaFaultProfile, MatchesTheStatusMap) {
  xaltest::expect_profile_matches_backend("cuda", [](int64_t code) {
    const auto result = static_cast<CUresult>(code);
    return xaltest::BackendMapping{xal::cuda::map_result(result),
                                   xal::cuda::is_sticky(result),
                                   xal::cuda::fallback_name(result)};
  });
}

}  // namespace
