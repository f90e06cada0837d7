// Releasing a device's streams and events: an object is freed only once
// its HIP calls succeed, as the core keeps its handle (for a retry) when a
// destroy fails. (Modules are not: libxal drops a module whatever
// module_unload returns, and so does module_unload, module.cpp.)
#pragma once

#include <string>

#include "backend.h"
#include "errors.h"

namespace xal::hip {

// Destroys `handle`, an object of `objects` (a map of `device`), with
// `destroy` (its HIP calls, returning a status; run without the device's
// lock). An object that a device reset destroyed already, or one of a
// device with a sticky error (whose work is lost, and which
// hipDeviceReset destroys), is released without HIP calls. When `destroy`
// fails the object is kept, so that the call can be retried. `what` names
// the kind ("HIP stream"). Thread-safe, but for two destroys of one handle.
template <typename T, typename Destroy>
xal_status_t release_object(xal_bdevice_s* device, support::Objects<T>& objects,
                            T* handle, const char* what, Destroy&& destroy) {
  typename support::Objects<T>::node_type owned;
  {
    std::lock_guard lock(device->mutex);
    owned = objects.extract(handle);
    if (owned.empty()) {
      return report(XAL_ERROR_INVALID_HANDLE, 0, nullptr,
                    std::string("not a live ") + what);
    }
    if (owned.mapped()->generation != device->generation ||
        !device->sticky.healthy()) {
      return XAL_SUCCESS;
    }
  }
  const xal_status_t status = destroy(*owned.mapped());
  if (status != XAL_SUCCESS) {
    // Back in the map (a node: nothing is allocated) for the retry.
    std::lock_guard lock(device->mutex);
    objects.insert(std::move(owned));
  }
  return status;
}

}  // namespace xal::hip
