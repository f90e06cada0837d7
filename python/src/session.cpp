// xal.init / xal.shutdown, the session's generation and the helpers every
// binding uses to call xal.
#include "session.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>

namespace xalpy {

namespace {

std::shared_mutex g_mutex;
// Written under g_mutex held exclusively; atomic so that a reader without
// the lock (a hint with the GIL) sees a whole value.
std::atomic<bool> g_live{false};
std::atomic<uint64_t> g_gen{0};  // 0 before the first init
uint64_t g_last = 0;             // generations handed out so far (g_mutex)

void copy_text(char* dst, size_t size, const char* src) { std::snprintf(dst, size, "%s", src); }

}  // namespace

Error::Error(xal_status_t status, const char* operation, const std::string& message) : info_{} {
  info_.struct_size = sizeof info_;
  info_.status = status;
  copy_text(info_.operation, sizeof info_.operation, operation);
  copy_text(info_.message, sizeof info_.message, message.c_str());
}

namespace session {

std::shared_mutex& mutex() { return g_mutex; }

bool current(uint64_t gen) { return g_live && (gen == 0 || gen == g_gen); }

uint64_t generation() { return g_live ? g_gen.load() : 0; }

Error stale(uint64_t gen, const char* operation) {
  if (!g_live) {
    return Error(XAL_ERROR_NOT_INITIALIZED, operation,
                 gen == 0 ? "xal is not initialised (xal.init)"
                          : "xal was shut down (xal.shutdown) after this object was made");
  }
  return Error(XAL_ERROR_INVALID_HANDLE, operation,
               "the object belongs to an earlier xal session (made before xal.shutdown)");
}

}  // namespace session

xal_error_info_t last_error() {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  if (xal_last_error(&info) != XAL_SUCCESS) info.status = XAL_SUCCESS;
  return info;
}

nb::str text(const char* s) {
  PyObject* o = PyUnicode_DecodeUTF8(s, static_cast<Py_ssize_t>(std::strlen(s)), "replace");
  if (!o) throw nb::python_error();
  return nb::steal<nb::str>(o);
}

void invalid(const char* operation, const std::string& message) {
  throw Error(XAL_ERROR_INVALID_ARGUMENT, operation, message);
}

void out_of_bounds(const char* operation, const std::string& message) {
  throw Error(XAL_ERROR_OUT_OF_BOUNDS, operation, message);
}

namespace {

// xal_init with the options given (None: xal's environment variables).
// Returns the new generation.
uint64_t init(std::optional<std::string> backends, std::optional<std::string> backend_path,
              std::optional<std::string> selector, int validation) {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = backends ? backends->c_str() : nullptr;
  o.backend_path = backend_path ? backend_path->c_str() : nullptr;
  o.device_selector = selector ? selector->c_str() : nullptr;
  o.validation = validation;
  xal_status_t status;
  xal_error_info_t info{};
  uint64_t gen = 0;
  {
    nb::gil_scoped_release nogil;
    std::unique_lock lock(g_mutex);
    status = xal_init(&o);
    if (status < 0) {
      info = last_error();
    } else {
      gen = ++g_last;
      g_gen = gen;
      g_live = true;
    }
  }
  if (status < 0) throw Error(info);
  return gen;
}

// Joins the session another library of the process started (xal_init
// called outside this package, e.g. by the torch backend xal_torch), so
// that both use one xal. Returns the session's generation, 0 when xal is
// not initialised.
uint64_t adopt() {
  nb::gil_scoped_release nogil;
  std::unique_lock lock(g_mutex);
  if (g_live) return g_gen;
  uint32_t count = 0;
  if (xal_device_count(&count) != XAL_SUCCESS) return 0;  // not initialised
  g_gen = ++g_last;
  g_live = true;
  return g_gen;
}

void shutdown() {
  xal_status_t status;
  xal_error_info_t info{};
  {
    nb::gil_scoped_release nogil;
    std::unique_lock lock(g_mutex);
    status = xal_shutdown();
    if (status < 0) info = last_error();
    g_live = false;
  }
  if (status < 0) throw Error(info);
}

nb::dict error_dict(const xal_error_info_t& e) {
  nb::dict d;
  d["status"] = e.status;
  d["status_name"] = xal_status_name(e.status);
  d["operation"] = text(e.operation);
  d["backend"] = text(e.backend);
  d["vendor_code"] = e.vendor_code;
  d["vendor_name"] = text(e.vendor_name);
  d["message"] = text(e.message);
  return d;
}

}  // namespace

void bind_session(nb::module_& m) {
  m.def("init", &init, nb::arg("backends").none(), nb::arg("backend_path").none(),
        nb::arg("selector").none(), nb::arg("validation"),
        "xal_init; returns the session's generation.");
  m.def("adopt", &adopt,
        "Joins a session another library of the process initialised; returns its "
        "generation, 0 when xal is not initialised.");
  m.def("shutdown", &shutdown, "xal_shutdown; every object made before becomes stale.");
  m.def(
      "generation", [] { return session::generation(); },
      "The current session's generation, 0 when xal is not initialised.");
  m.def("abi_version", [] { return xal_abi_version(); });
  m.def("status_name", [](int status) { return std::string(xal_status_name(status)); });
  m.def(
      "last_error", [] { return error_dict(last_error()); },
      "This thread's xal_last_error as a dict.");
}

}  // namespace xalpy
