// xal._xal: the extension module behind the package xal. It binds the public
// C ABI (xal.h, xal_fault.h) handle by handle; the Python package builds the
// user-facing classes on it.
#include "session.hpp"

namespace xalpy {
void bind_session(nb::module_& m);
void bind_errors(nb::module_& m);
void bind_host_view(nb::module_& m);
void bind_device(nb::module_& m);
void bind_memory(nb::module_& m);
void bind_stream(nb::module_& m);
void bind_comm(nb::module_& m);
void bind_dlpack(nb::module_& m);
void bind_interop(nb::module_& m);
void bind_fault(nb::module_& m);
}  // namespace xalpy

NB_MODULE(_xal, m) {
  m.doc() = "Bindings of xal's C ABI (use the package xal, not this module).";
  xalpy::bind_session(m);
  xalpy::bind_errors(m);
  xalpy::bind_host_view(m);
  xalpy::bind_device(m);
  xalpy::bind_memory(m);
  xalpy::bind_stream(m);
  xalpy::bind_comm(m);
  xalpy::bind_dlpack(m);
  xalpy::bind_interop(m);
  xalpy::bind_fault(m);
}
