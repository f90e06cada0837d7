// The native handle behind an xal stream (a CUstream, hipStream_t, ...; on
// the mock, its own stream object), as xal_stream_import takes it. This is
// the one entry the package takes from xal_backend.h (xal_handle_get_native,
// exported by libxal): Stream.native_handle, so that a program can hand a
// stream to a framework, or adopt one the way a framework would.
#include "stream.hpp"
#include "xal/xal_backend.h"

namespace xalpy {

namespace {

uint64_t stream_native(const Stream& s) {
  const char* op = "xal_handle_get_native";
  xal_stream_t h = s.get(op);
  void* native = nullptr;
  const xal_backend_table_t* table = nullptr;
  call(s.generation(), op, [&] { return xal_handle_get_native(h, &table, &native); });
  return reinterpret_cast<uintptr_t>(native);
}

}  // namespace

void bind_interop(nb::module_& m) { m.def("stream_native", &stream_native); }

}  // namespace xalpy
