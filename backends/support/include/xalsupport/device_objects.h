// The objects a device owns (streams, events, modules), keyed by their
// handle. Each is stamped with the device generation it was made in: a
// device reset starts a new generation, and objects of an older one are
// dead (their native handles went with the reset).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

namespace xal::support {

template <typename T>
using Objects = std::unordered_map<T*, std::unique_ptr<T>>;

// Stamps `object` with `generation`, keeps it in `objects` (which owns it
// from now on) and returns its handle. The caller holds the lock that
// guards `objects`.
template <typename T>
T* keep(Objects<T>& objects, std::unique_ptr<T> object, uint64_t generation) {
  object->generation = generation;
  T* handle = object.get();
  objects.emplace(handle, std::move(object));
  return handle;
}

// Takes `handle` out of `objects` and hands it to the caller; null when it
// is not there (not a live object). The caller holds the lock.
template <typename T>
std::unique_ptr<T> take(Objects<T>& objects, T* handle) {
  auto found = objects.find(handle);
  if (found == objects.end()) return nullptr;
  std::unique_ptr<T> owned = std::move(found->second);
  objects.erase(found);
  return owned;
}

}  // namespace xal::support
