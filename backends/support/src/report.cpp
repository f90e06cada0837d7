#include "xalsupport/report.h"

#include <atomic>

namespace xal::support {
namespace {
std::atomic<const xal_backend_services_t*> g_services{nullptr};
}  // namespace

xal_status_t report(const xal_backend_services_t* services, xal_status_t status,
                    int64_t vendor_code, const char* vendor_name,
                    const char* message) {
  if (services != nullptr && services->set_error != nullptr) {
    services->set_error(status, vendor_code, vendor_name, message);
  }
  return status;
}

void set_services(const xal_backend_services_t* services) {
  g_services.store(services);
}

const xal_backend_services_t* services() { return g_services.load(); }

xal_status_t report(xal_status_t status, int64_t vendor_code,
                    const char* vendor_name, const std::string& message) {
  return report(g_services.load(), status, vendor_code, vendor_name,
                message.c_str());
}

}  // namespace xal::support
