// Checks a vendor profile of the fault backend (faultinject/profiles/
// vendor_profiles.cpp) against a vendor backend's status map (TESTS ONLY):
// an injected vendor error must reach a program with the xal status,
// stickiness and name that the real backend gives the same code, so that
// `fault:<backend>` in a framework's CI behaves like the card. The test
// compiles faultinject/src/profiles.cpp and vendor_profiles.cpp and has
// faultinject/src on its include path.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "profiles.hpp"

namespace xaltest {

// What a backend's map gives one vendor code.
struct BackendMapping {
  xal_status_t status;
  bool sticky;
  std::string name;  // the vendor enumerator the backend reports
};

// Expects every error of `profile` to map as `map(code)` says.
template <class Map>
void expect_profile_matches_backend(const char* profile, Map map) {
  namespace fault = xal::fault;
  const fault::VendorProfile* p = fault::find_profile(profile);
  ASSERT_NE(p, nullptr) << "no fault profile '" << profile << "'";
  EXPECT_FALSE(p->errors.empty());
  for (const fault::VendorError& e : p->errors) {
    SCOPED_TRACE(std::string(profile) + ":" + std::string(e.name) + " (" +
                 std::to_string(e.code) + ")");
    const BackendMapping m = map(e.code);
    EXPECT_EQ(m.name, e.name) << "the backend names the code differently";
    EXPECT_EQ(fault::status_to_name(e.status), fault::status_to_name(m.status))
        << "profile status (left) differs from the backend's (right)";
    EXPECT_EQ(e.sticky, m.sticky)
        << "profile stickiness (left) differs from the backend's (right)";
  }
}

}  // namespace xaltest
