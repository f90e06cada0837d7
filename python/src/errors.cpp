// Turns Error into the xal.Error subclass of its status: the classes live in
// xal/_errors.py, which makes the exception from the detail.
#include "session.hpp"

namespace xalpy {

namespace {

void raise(const Error& e) {
  const xal_error_info_t& i = e.info();
  try {
    nb::module_ errors = nb::module_::import_("xal._errors");
    nb::object exc = errors.attr("_from_detail")(i.status, xal_status_name(i.status),
                                                 text(i.operation), text(i.backend), i.vendor_code,
                                                 text(i.vendor_name), text(i.message));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  } catch (nb::python_error& pe) {
    pe.restore();  // xal._errors itself failed: that error is the one raised
  }
}

}  // namespace

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e);
    }
  });
}

}  // namespace xalpy
