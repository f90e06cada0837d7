// DLPack through nanobind's nb::ndarray, both ways.
//
// Export: an nb::ndarray over an allocation's memory whose owner holds the
// Allocation object, so that the memory lives until the consumer
// calls the capsule's deleter -- from any thread, and not at all once the
// interpreter is finalising (nanobind's deleter checks both). Its
// __dlpack__ gives the versioned capsule (DLManagedTensorVersioned, with
// the read-only flag) when max_version >= (1, 0), else the legacy one.
//
// Import: nb::ndarray takes a producer's capsule (versioned or legacy,
// asking for a writable tensor first, a read-only one second) and keeps it
// until the last reference to the ndarray goes; xal/_dlpack.py imports its
// memory with xal_mem_import and keeps the ndarray as the allocation's
// keepalive.
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "memory.hpp"

namespace xalpy {

namespace {

// The bytes a strided layout reaches, from its first element on; raises
// for negative strides (xal exports and imports none).
size_t extent_bytes(const char* op, const std::vector<size_t>& shape,
                    const std::vector<int64_t>& strides, size_t itemsize) {
  size_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    if (strides[i] < 0) invalid(op, "negative strides are not supported");
    last += (shape[i] - 1) * static_cast<size_t>(strides[i]);
  }
  return (last + 1) * itemsize;
}

// An nb_ndarray over [offset, ...) of `a`, owned by `owner` (a Python
// object that holds `a`: the export's pin). Strides are in elements.
nb::object dlpack_export(const Allocation& a, nb::handle owner, size_t offset,
                         std::vector<size_t> shape, std::vector<int64_t> strides, uint8_t code,
                         uint8_t bits, int device_type, int device_id, bool readonly) {
  const char* op = "Buffer.__dlpack__";
  if (strides.size() != shape.size()) invalid(op, "shape and strides differ in length");
  if (bits == 0 || bits % 8 != 0) invalid(op, "dtype bits must be a positive multiple of 8");
  const size_t extent = extent_bytes(op, shape, strides, bits / 8);
  const xal_devptr_t ptr = a.at(op, offset, extent);
  nb::dlpack::dtype dt{code, bits, 1};
  void* data = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  if (readonly) {
    nb::ndarray<nb::array_api, nb::ro> arr(data, shape.size(), shape.data(), owner, strides.data(),
                                           dt, device_type, device_id);
    return nb::cast(arr);
  }
  nb::ndarray<nb::array_api> arr(data, shape.size(), shape.data(), owner, strides.data(), dt,
                                 device_type, device_id);
  return nb::cast(arr);
}

// What a producer's DLPack object holds: (keepalive, address, nbytes,
// shape, strides in elements, (code, bits, lanes), (device_type,
// device_id), readonly). nbytes counts from the first element to one past
// the last reachable one. Raises BufferError when `obj` exports nothing.
template <class Array>
nb::tuple describe(const Array& arr, bool readonly) {
  std::vector<size_t> shape(arr.ndim());
  std::vector<int64_t> strides(arr.ndim());
  for (size_t i = 0; i < arr.ndim(); ++i) {
    shape[i] = arr.shape(i);
    strides[i] = arr.stride(i);
  }
  const nb::dlpack::dtype dt = arr.dtype();
  const size_t itemsize = (static_cast<size_t>(dt.bits) * dt.lanes + 7) / 8;
  const size_t nbytes = extent_bytes("from_dlpack", shape, strides, itemsize);
  const uintptr_t address = reinterpret_cast<uintptr_t>(arr.data());
  return nb::make_tuple(nb::cast(arr), address, nbytes, nb::cast(shape), nb::cast(strides),
                        nb::make_tuple(dt.code, dt.bits, dt.lanes),
                        nb::make_tuple(arr.device_type(), arr.device_id()), readonly);
}

nb::tuple dlpack_import(nb::handle obj) {
  nb::ndarray<> writable;
  if (nb::try_cast(obj, writable)) return describe(writable, false);
  nb::ndarray<nb::ro> readonly;
  if (nb::try_cast(obj, readonly)) return describe(readonly, true);
  PyErr_Clear();
  const std::string type = nb::type_name(obj.type()).c_str();
  PyErr_Format(PyExc_BufferError,
               "from_dlpack: a %s exports no DLPack tensor (nor buffer) that xal can take",
               type.c_str());
  throw nb::python_error();
}

}  // namespace

void bind_dlpack(nb::module_& m) {
  m.def("dlpack_export", &dlpack_export, nb::arg("alloc"), nb::arg("owner"), nb::arg("offset"),
        nb::arg("shape"), nb::arg("strides"), nb::arg("code"), nb::arg("bits"),
        nb::arg("device_type"), nb::arg("device_id"), nb::arg("readonly"));
  m.def("dlpack_import", &dlpack_import, nb::arg("obj"));
}

}  // namespace xalpy
