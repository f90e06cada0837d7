// Vendor error profiles: each vendor error name with its xal status, the
// vendor's own code and whether it is sticky (the device needs a reset).
// The tables live in faultinject/profiles/vendor_profiles.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "xal/xal.h"

namespace xal::fault {

struct VendorError {
  std::string_view name;  // "CUDA_ERROR_ILLEGAL_ADDRESS"
  int64_t code;           // 700
  xal_status_t status;    // XAL_ERROR_BACKEND
  bool sticky;            // true: every later call fails until device_reset
};

struct VendorProfile {
  std::string_view name;  // "cuda"
  std::span<const VendorError> errors;
};

// Every profile (cuda, hip, levelzero, opencl).
std::span<const VendorProfile> vendor_profiles();
const VendorProfile* find_profile(std::string_view name);
// Looks `name` up in `profile` (exact, case-sensitive).
const VendorError* find_vendor_error(const VendorProfile& profile,
                                     std::string_view name);
// The first error of `profile` that maps to `status`, or nullptr.
const VendorError* find_vendor_error_for_status(const VendorProfile& profile,
                                                xal_status_t status);

// xal status names: "OUT_OF_MEMORY", "XAL_ERROR_OUT_OF_MEMORY" (any case).
// Returns XAL_SUCCESS when `name` is not an error status.
xal_status_t status_from_name(std::string_view name);
// "XAL_ERROR_OUT_OF_MEMORY" for any status.
std::string status_to_name(xal_status_t status);

}  // namespace xal::fault
