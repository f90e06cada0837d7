#include "xalsupport/interop_entries.h"

#include "xal_common/strings.hpp"
#include "xalsupport/report.h"

namespace xal::support {

xal_status_t accept_import(uint64_t native, size_t bytes, uint64_t base, size_t size,
                           const std::string& what, xal_devptr_t* out_ptr) {
  if (native - base > size || bytes > size - (native - base)) {
    return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                  what + " + " + std::to_string(bytes) + " bytes runs past its allocation [" +
                      common::hex(base) + ", +" + std::to_string(size) + ")");
  }
  *out_ptr = native;
  return XAL_SUCCESS;
}

xal_status_t check_ipc_mapping(size_t named, size_t mapped, const char* mapper) {
  if (mapped >= named) return XAL_SUCCESS;
  return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                "mem_ipc_open: the handle names " + std::to_string(named) + " bytes, " +
                    mapper + " mapped " + std::to_string(mapped));
}

xal_status_t report_lacks(const char* library, const char* function) {
  return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                std::string(library) + " lacks " + function);
}

}  // namespace xal::support
