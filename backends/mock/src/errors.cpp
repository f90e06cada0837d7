#include "errors.h"

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

xal_status_t Entry::fail(const support::Caught& caught) const {
  const std::string op = caught.operation != nullptr ? caught.operation : "";
  switch (caught.kind) {
    case support::Caught::Kind::kStatusError:
      return report(services, caught.status, caught.what);
    case support::Caught::Kind::kOutOfHostMemory:
      return report(services, caught.status, op + ": out of host memory");
    case support::Caught::Kind::kException:
      return report(services, caught.status, op + ": internal error: " + caught.what);
    case support::Caught::Kind::kUnknown:
      break;
  }
  return report(services, caught.status, op + ": unknown internal error");
}

}  // namespace xal::mock
