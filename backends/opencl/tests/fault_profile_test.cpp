// The fault backend's opencl profile maps each CL code as this backend's
// status map does (status, name): what `fault:` injects is what the real
// platform's error gives. The backend has no sticky errors (OpenCL reports
// them per call), so no profile error is sticky either.
#include "status_map.h"
#include "xaltest/fault_profile_check.h"

namespace {

TEST(OpenclFaultProfile, MatchesTheStatusMap) {
  xaltest::expect_profile_matches_backend("opencl", [](int64_t code) {
    const auto cl = static_cast<cl_int>(code);
    return xaltest::BackendMapping{xal::opencl::cl_to_status(cl), false,
                                   xal::opencl::cl_error_name(cl)};
  });
}

}  // namespace
