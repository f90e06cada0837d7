// A device's sticky error: the first error after which the vendor runtime
// fails every call on the device until the device is reset (HIP's kernel
// faults, Level Zero's lost device, ...). Which codes are sticky is each
// backend's status table's business.
#pragma once

#include <cstdint>
#include <string>

#include "xal/xal.h"

namespace xal::support {

// Not thread-safe: the device's lock guards it.
struct StickyError {
  xal_status_t status = XAL_SUCCESS;  // XAL_SUCCESS: none
  int64_t code = 0;                   // the vendor code
  std::string name;                   // its vendor name
  std::string message;                // the failure as it was reported

  bool healthy() const { return status == XAL_SUCCESS; }

  // Keeps the first error only: the device stays with the one that broke
  // it. `name` may be null.
  void record(xal_status_t status, int64_t code, const char* name,
              const std::string& message);

  // Forgets the error (the device was reset).
  void clear() { *this = StickyError{}; }

  // Fills state, sticky_status, vendor_code and message of `out` as
  // xal_device_get_health reports them; other fields are left as they are.
  void describe(xal_device_health_t* out) const;

  // Reports the error again through the plugin's services (report.h) for a
  // call on `device_text` ("HIP device 0") and returns its status; call
  // only when !healthy().
  xal_status_t report_again(const std::string& device_text) const;
};

}  // namespace xal::support
