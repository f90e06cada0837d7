#include "host_view.hpp"

#include <string>

namespace xalpy {

HostView::HostView(nb::handle obj, bool writable) {
  const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) {
    nb::python_error cause;
    const std::string why = nb::str(cause.value()).c_str();
    invalid("HostView", std::string(writable ? "a writable, " : "a ") +
                            "C-contiguous host buffer is needed: " + why);
  }
}

HostView::~HostView() { PyBuffer_Release(&view_); }

void HostView::check_range(const char* operation, size_t offset, size_t bytes) const {
  const size_t n = nbytes();
  if (offset > n || bytes > n - offset) {
    out_of_bounds(operation, "host range [" + std::to_string(offset) + ", +" +
                                 std::to_string(bytes) + ") is outside the host buffer of " +
                                 std::to_string(n) + " bytes");
  }
}

void bind_host_view(nb::module_& m) {
  nb::class_<HostView>(m, "HostView", "Host memory of a buffer-protocol object, held exported.")
      .def(nb::init<nb::handle, bool>(), nb::arg("obj"), nb::arg("writable") = false)
      .def_prop_ro("nbytes", &HostView::nbytes)
      .def_prop_ro("readonly", &HostView::readonly)
      .def_prop_ro("address",
                   [](const HostView& v) { return reinterpret_cast<uintptr_t>(v.data()); });
}

}  // namespace xalpy
