// The fault backend's levelzero profile maps each ze_result_t as this
// backend's status map does (status, stickiness, name): what `fault:`
// injects is what the real loader's error gives.
#include "../src/status_map.h"
#include "xaltest/fault_profile_check.h"

namespace {

TEST(LevelZeroFaultProfile, MatchesTheStatusMap) {
  xaltest::expect_profile_matches_backend("levelzero", [](int64_t code) {
    const auto m = xal::levelzero::map_status(code);
    return xaltest::BackendMapping{m.status, m.sticky, m.name};
  });
}

}  // namespace
