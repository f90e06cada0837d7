#include "handles.hpp"

#include <cstdio>

namespace xalpy {

void Owned::check(const char* operation) const {
  if (closed_) throw Error(XAL_ERROR_INVALID_HANDLE, operation, "the object is closed");
  if (!session::current(gen_)) throw session::stale(gen_, operation);
}

void same_session(const char* operation, uint64_t a, uint64_t b) {
  if (a == b) return;
  throw session::stale(session::current(a) ? b : a, operation);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace xalpy
