// XAL_MOCK_DEVICES: which simulated cards an instance exposes.
//
//   "2*a100-40g,1*mi250x"    compact list of built-in profiles
//   "/path/devices.json"     a JSON file (anything containing '/' or ending
//                            in ".json")
//   "[{...}]" or "{...}"     the same JSON inline
//
// JSON: a list of entries or {"devices": [entries]}. An entry names a
// built-in "profile" with optional overrides and a "count", or defines a
// full profile ("name", "vendor", "memory", "compute_units",
// "peak_memory_bandwidth_gbps" required). Errors name the source, the place
// (entry index, JSON pointer or byte offset) and what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "profiles.h"

namespace xal::mock {

// A malformed specification; what() is the full message.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Most devices one instance may expose.
inline constexpr size_t kMaxDevices = 64;
// Largest specification file read (a regular file; devices, FIFOs and the
// like are refused).
inline constexpr size_t kMaxSpecFileBytes = 1u << 20;
// Smallest non-zero bandwidth (bandwidth_gbps, peak_memory_bandwidth_gbps),
// in GB/s: 1 MB/s, so that a throttled copy's duration stays representable.
inline constexpr double kMinRateGbps = 1e-3;

// Parses a specification (any of the three forms above) into one profile
// per device. An empty or blank text gives kDefaultDeviceSpec. Throws
// SpecError. Thread-safe (no shared state).
std::vector<Profile> parse_device_spec(std::string_view text);

// Parses the compact form "N*name,...". Throws SpecError.
std::vector<Profile> parse_compact_spec(std::string_view text);

// Parses JSON `content`; `source` names it in messages ("file x.json",
// "XAL_MOCK_DEVICES"). Throws SpecError.
std::vector<Profile> parse_json_spec(const std::string& content,
                                     const std::string& source);

}  // namespace xal::mock
