#include "error.hpp"

#include <cstddef>
#include <cstdio>

namespace xal::mock {

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

xal_status_t report(const xal_backend_services_t* services,
                    xal_status_t status, const std::string& message) {
  constexpr size_t kNeeded =
      offsetof(xal_backend_services_t, set_error) + sizeof(services->set_error);
  if (services && services->struct_size >= kNeeded && services->set_error) {
    try {
      services->set_error(status, 0, nullptr, message.c_str());
    } catch (...) {
      // A services table must not throw; never let it cross our entry.
    }
  }
  return status;
}

}  // namespace xal::mock
