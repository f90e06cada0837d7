// Device memory: xal_mem_alloc/free, xal_mem_import, IPC handles and host
// registration.
#include "memory.hpp"

#include <nanobind/stl/pair.h>

#include <cstring>
#include <utility>

#include "host_view.hpp"

namespace xalpy {

Allocation::Allocation(Device device, xal_devptr_t ptr, size_t bytes, Kind kind,
                       nb::object keepalive)
    : Owned(device.gen),
      device_(device),
      ptr_(ptr),
      bytes_(bytes),
      kind_(kind),
      keepalive_(std::move(keepalive)) {}

Allocation::~Allocation() {
  if (!closed_) {
    closed_ = true;
    quiet_call(gen_, [&] { return release_call(); });
  }
  // keepalive_ (the producer's object) goes after xal has forgotten the range.
}

xal_status_t Allocation::release_call() const {
  if (kind_ == Kind::kIpc) return xal_mem_close_ipc_handle(device_.handle, ptr_);
  return xal_mem_free(device_.handle, ptr_);
}

xal_devptr_t Allocation::at(const char* operation, size_t offset, size_t bytes) const {
  check(operation);
  if (offset > bytes_ || bytes > bytes_ - offset) {
    out_of_bounds(operation, "range [+" + std::to_string(offset) + ", +" +
                                 std::to_string(offset + bytes) + ") is outside the " +
                                 std::to_string(bytes_) + "-byte allocation at " + hex(ptr_));
  }
  return ptr_ + offset;
}

namespace {

Allocation* alloc(const Device& dev, size_t bytes) {
  xal_devptr_t ptr = 0;
  call(dev.gen, "xal_mem_alloc", [&] { return xal_mem_alloc(dev.handle, bytes, &ptr); });
  return new Allocation(dev, ptr, bytes, Allocation::Kind::kOwned, nb::none());
}

Allocation* import_mem(const Device& dev, uint64_t native, size_t bytes, uint32_t flags,
                       nb::object keepalive) {
  xal_devptr_t ptr = 0;
  call(dev.gen, "xal_mem_import",
       [&] { return xal_mem_import(dev.handle, native, bytes, flags, &ptr); });
  return new Allocation(dev, ptr, bytes, Allocation::Kind::kImported, std::move(keepalive));
}

nb::bytes ipc_handle(const Allocation& a) {
  a.check("xal_mem_get_ipc_handle");
  xal_ipc_handle_t h{};
  call(a.generation(), "xal_mem_get_ipc_handle",
       [&] { return xal_mem_get_ipc_handle(a.device().handle, a.ptr(), &h); });
  return nb::bytes(reinterpret_cast<const char*>(h.bytes), sizeof h.bytes);
}

Allocation* open_ipc(const Device& dev, nb::bytes handle) {
  if (handle.size() != XAL_IPC_HANDLE_SIZE) {
    invalid("xal_mem_open_ipc_handle", "an IPC handle is " + std::to_string(XAL_IPC_HANDLE_SIZE) +
                                           " bytes, not " + std::to_string(handle.size()));
  }
  xal_ipc_handle_t h{};
  std::memcpy(h.bytes, handle.c_str(), sizeof h.bytes);
  xal_devptr_t ptr = 0;
  size_t bytes = 0;
  call(dev.gen, "xal_mem_open_ipc_handle",
       [&] { return xal_mem_open_ipc_handle(dev.handle, &h, 0, &ptr, &bytes); });
  return new Allocation(dev, ptr, bytes, Allocation::Kind::kIpc, nb::none());
}

// Host memory registered with xal_host_register: unregistered on close or
// when dropped; holds the object's buffer exported meanwhile.
class HostRegistration : public Owned {
 public:
  HostRegistration(nb::handle obj, uint32_t flags)
      : Owned(session::generation()), view_(obj, true) {
    if (view_.nbytes() == 0) invalid("xal_host_register", "an empty buffer cannot be registered");
    call(gen_, "xal_host_register",
         [&] { return xal_host_register(view_.data(), view_.nbytes(), flags); });
  }
  ~HostRegistration() {
    if (!closed_) quiet_call(gen_, [&] { return xal_host_unregister(view_.data()); });
  }
  void close() {
    if (closed_) return;
    closed_ = true;
    if (!session::current(gen_)) return;  // released by xal_shutdown
    call(gen_, "xal_host_unregister", [&] { return xal_host_unregister(view_.data()); });
  }
  const HostView& view() const { return view_; }

 private:
  HostView view_;
};

}  // namespace

void bind_memory(nb::module_& m) {
  nb::class_<Allocation>(m, "Allocation", "A range of device memory xal knows.")
      .def_prop_ro("device", [](const Allocation& a) { return a.device(); })
      .def_prop_ro("ptr", &Allocation::ptr)
      .def_prop_ro("nbytes", &Allocation::nbytes)
      .def_prop_ro("kind", [](const Allocation& a) { return static_cast<int>(a.kind()); })
      .def_prop_ro("closed", &Allocation::closed)
      .def_prop_ro("generation", &Allocation::generation)
      .def_prop_ro("keepalive", [](const Allocation& a) { return a.keepalive(); })
      .def("check", [](const Allocation& a, const char* op) { a.check(op); })
      .def("ipc_handle", &ipc_handle);
  m.def("mem_alloc", &alloc, nb::rv_policy::take_ownership);
  m.def("mem_import", &import_mem, nb::arg("device"), nb::arg("native"), nb::arg("nbytes"),
        nb::arg("flags"), nb::arg("keepalive").none(), nb::rv_policy::take_ownership);
  m.def("mem_open_ipc_handle", &open_ipc, nb::rv_policy::take_ownership);

  nb::class_<HostRegistration>(m, "HostRegistration",
                               "Host memory registered with xal_host_register.")
      .def(nb::init<nb::handle, uint32_t>(), nb::arg("obj"), nb::arg("flags") = 0)
      .def("close", &HostRegistration::close)
      .def_prop_ro("closed", &HostRegistration::closed)
      .def_prop_ro(
          "address",
          [](const HostRegistration& r) { return reinterpret_cast<uintptr_t>(r.view().data()); })
      .def_prop_ro("nbytes", [](const HostRegistration& r) { return r.view().nbytes(); });
  m.attr("MEM_IMPORT_HOST") = XAL_MEM_IMPORT_HOST;
  m.attr("IPC_HANDLE_SIZE") = XAL_IPC_HANDLE_SIZE;
}

}  // namespace xalpy
