// The release pattern of streams and events: the object leaves its device's
// map while the driver releases it, without the device's lock held (the
// driver may wait there for work behind a host function that waits for a
// thread calling the backend on this device), and comes back on an error,
// for a retry (xal_backend.h, Releases).
#pragma once

#include <mutex>

#include "backend.h"

namespace xal::cuda {

// Takes `key` out of `map` (a device's streams or events), runs `release`
// (returns xal_status_t, reporting its own error) when the object is live
// (made in the device's current generation, on a healthy device), and puts
// it back when that fails. On success the map's node, and so the object,
// is destroyed before this returns. `what` names the object in the error
// for a key not in the map. Thread-safe, but for two releases of one key.
template <typename Map, typename Key, typename Release>
xal_status_t release_from(xal_bdevice_s* device, Map& map, Key* key,
                          const char* what, Release&& release) {
  typename Map::node_type owned;
  bool live = false;
  {
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    owned = map.extract(key);
    if (owned.empty())
      return device->backend->error(XAL_ERROR_INVALID_HANDLE, what);
    live = key->generation == device->generation.load() &&
           !device->unhealthy.load();
  }
  if (!live) return XAL_SUCCESS;
  const xal_status_t s = release();
  if (s != XAL_SUCCESS) {
    // Back in the map (a node: nothing is allocated) for the retry.
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    map.insert(std::move(owned));
  }
  return s;
}

}  // namespace xal::cuda
