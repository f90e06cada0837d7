#include "profiles.hpp"

#include <array>

#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

struct StatusName {
  xal_status_t status;
  std::string_view name;  // without the XAL_ERROR_ prefix
};

constexpr std::array kStatusNames = {
    StatusName{XAL_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
    StatusName{XAL_ERROR_INVALID_HANDLE, "INVALID_HANDLE"},
    StatusName{XAL_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED"},
    StatusName{XAL_ERROR_OUT_OF_MEMORY, "OUT_OF_MEMORY"},
    StatusName{XAL_ERROR_OUT_OF_HOST_MEMORY, "OUT_OF_HOST_MEMORY"},
    StatusName{XAL_ERROR_OUT_OF_BOUNDS, "OUT_OF_BOUNDS"},
    StatusName{XAL_ERROR_NOT_INITIALIZED, "NOT_INITIALIZED"},
    StatusName{XAL_ERROR_BACKEND_UNAVAILABLE, "BACKEND_UNAVAILABLE"},
    StatusName{XAL_ERROR_ABI_MISMATCH, "ABI_MISMATCH"},
    StatusName{XAL_ERROR_DEVICE_LOST, "DEVICE_LOST"},
    StatusName{XAL_ERROR_HARDWARE, "HARDWARE"},
    StatusName{XAL_ERROR_TIMEOUT, "TIMEOUT"},
    StatusName{XAL_ERROR_ABORTED, "ABORTED"},
    StatusName{XAL_ERROR_COLLECTIVE_MISMATCH, "COLLECTIVE_MISMATCH"},
    StatusName{XAL_ERROR_BACKEND, "BACKEND"},
    StatusName{XAL_ERROR_INTERNAL, "INTERNAL"},
};

}  // namespace

const VendorProfile* find_profile(std::string_view name) {
  for (const auto& p : vendor_profiles()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const VendorError* find_vendor_error(const VendorProfile& profile,
                                     std::string_view name) {
  for (const auto& e : profile.errors) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const VendorError* find_vendor_error_for_status(const VendorProfile& profile,
                                                xal_status_t status) {
  // Prefer an error as sticky as the status itself (TIMEOUT under cuda is
  // CUDA_ERROR_TIMEOUT, not the sticky CUDA_ERROR_LAUNCH_TIMEOUT).
  const bool sticky =
      status == XAL_ERROR_DEVICE_LOST || status == XAL_ERROR_HARDWARE;
  const VendorError* any = nullptr;
  for (const auto& e : profile.errors) {
    if (e.status != status) continue;
    if (e.sticky == sticky) return &e;
    if (any == nullptr) any = &e;
  }
  return any;
}

xal_status_t status_from_name(std::string_view name) {
  std::string upper = common::to_lower(name);
  for (auto& c : upper) c = static_cast<char>(c - 32 * (c >= 'a' && c <= 'z'));
  std::string_view view = upper;
  if (view.starts_with("XAL_ERROR_")) view.remove_prefix(10);
  for (const auto& s : kStatusNames) {
    if (s.name == view) return s.status;
  }
  return XAL_SUCCESS;
}

std::string status_to_name(xal_status_t status) {
  if (status == XAL_SUCCESS) return "XAL_SUCCESS";
  if (status == XAL_NOT_READY) return "XAL_NOT_READY";
  for (const auto& s : kStatusNames) {
    if (s.status == status) return "XAL_ERROR_" + std::string(s.name);
  }
  return "XAL_STATUS_UNKNOWN";
}

}  // namespace xal::fault
