// The fault backend's hip profile maps each HIP error as this backend's
// status map does (status, stickiness, name): what `fault:` injects is
// what the real runtime's error gives.
#include "../src/status_map.h"
#include "xaltest/fault_profile_check.h"

namespace {

TEST(HipFaultProfile, MatchesTheStatusMap) {
  xaltest::expect_profile_matches_backend("hip", [](int64_t code) {
    const auto m = xal::hip::map_status(code);
    return xaltest::BackendMapping{m.status, m.sticky, m.name};
  });
}

}  // namespace
