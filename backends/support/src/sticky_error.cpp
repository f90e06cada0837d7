#include "xalsupport/sticky_error.h"

#include "xal_common/strings.hpp"
#include "xalsupport/report.h"

namespace xal::support {

void StickyError::record(xal_status_t new_status, int64_t new_code,
                         const char* new_name, const std::string& new_message) {
  if (!healthy()) return;
  status = new_status;
  code = new_code;
  name = new_name != nullptr ? new_name : "";
  message = new_message;
}

void StickyError::describe(xal_device_health_t* out) const {
  out->sticky_status = status;
  out->vendor_code = code;
  if (healthy()) {
    out->state = XAL_HEALTH_OK;
    common::copy_string(out->message, "");
  } else {
    out->state = status == XAL_ERROR_DEVICE_LOST ? XAL_HEALTH_LOST : XAL_HEALTH_ERROR;
    common::copy_string(out->message, message);
  }
}

xal_status_t StickyError::report_again(const std::string& device_text) const {
  return report(status, code, name.c_str(),
                device_text + " has a sticky error (" + message +
                    "); call xal_device_reset");
}

}  // namespace xal::support
