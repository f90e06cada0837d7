// Mock device specifications (XAL_MOCK_DEVICES): the compact list and
// JSON (inline, as a file's content would be). The file branch of
// parse_device_spec is left out: a fuzzed path would read this machine's
// files.
#include <cmath>

#include "device_spec.h"
#include "fuzz_check.hpp"
#include "xal_common/strings.hpp"

namespace {

using xal::mock::Profile;

void check_profiles(const std::vector<Profile>& profiles) {
  XAL_FUZZ_CHECK(!profiles.empty(), "an accepted spec with no device");
  XAL_FUZZ_CHECK(profiles.size() <= xal::mock::kMaxDevices, "too many devices");
  for (const Profile& p : profiles) {
    XAL_FUZZ_CHECK(p.memory_bytes >= 4096, "a device below 4096 bytes");
    XAL_FUZZ_CHECK(std::isfinite(p.bandwidth_gbps) && std::isfinite(p.peak_memory_bandwidth_gbps),
                   "a bandwidth that is not finite");
    XAL_FUZZ_CHECK(p.bandwidth_gbps == 0.0 || p.bandwidth_gbps >= xal::mock::kMinRateGbps,
                   "a copy throttle below the least rate");
    XAL_FUZZ_CHECK(p.tdp_w >= p.idle_w, "tdp_w below idle_w");
  }
}

// As parse_device_spec tells a file name: a '/' or a ".json" ending.
bool names_a_file(std::string_view t) {
  return t.find('/') != std::string_view::npos ||
         (t.size() >= 5 && xal::common::to_lower(t.substr(t.size() - 5)) == ".json");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = xal::fuzz::as_text(data, size);
  const std::string_view t = xal::common::trim(text);
  const bool json = !t.empty() && (t.front() == '[' || t.front() == '{');
  try {
    if (json) {
      check_profiles(xal::mock::parse_json_spec(std::string(text), "spec.json"));
    } else if (!names_a_file(t)) {
      check_profiles(xal::mock::parse_device_spec(text));
    } else {
      check_profiles(xal::mock::parse_compact_spec(text));
    }
  } catch (const xal::mock::SpecError& e) {
    XAL_FUZZ_CHECK(xal::fuzz::says_something(e.what()), "an empty refusal");
  }
  return 0;
}
