// Communicators over local devices and the collectives: xal_comm_*,
// xal_group_start/end and the six collectives. Buffer ranges are checked
// against their allocations here (OutOfBounds) before xal sees them.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "memory.hpp"
#include "stream.hpp"

namespace xalpy {

namespace {

size_t dtype_size(uint32_t dtype) {
  switch (dtype) {
    case XAL_DTYPE_I8:
    case XAL_DTYPE_U8:
      return 1;
    case XAL_DTYPE_F16:
    case XAL_DTYPE_BF16:
      return 2;
    case XAL_DTYPE_I32:
    case XAL_DTYPE_U32:
    case XAL_DTYPE_F32:
      return 4;
    case XAL_DTYPE_I64:
    case XAL_DTYPE_U64:
    case XAL_DTYPE_F64:
      return 8;
    default:
      return 0;
  }
}

class Comm : public Owned {
 public:
  Comm(Device device, xal_comm_t handle) : Owned(device.gen), device_(device), handle_(handle) {}
  ~Comm() {
    if (!closed_) quiet_call(gen_, [&] { return xal_comm_destroy(handle_); });
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  void close() {
    if (closed_) return;
    closed_ = true;
    if (!session::current(gen_)) return;
    call(gen_, "xal_comm_destroy", [&] { return xal_comm_destroy(handle_); });
  }
  xal_comm_t get(const char* operation) const {
    check(operation);
    return handle_;
  }
  const Device& device() const { return device_; }

  nb::dict info() const {
    xal_comm_t h = get("xal_comm_get_info");
    xal_comm_info_t i{};
    i.struct_size = sizeof i;
    call(gen_, "xal_comm_get_info", [&] { return xal_comm_get_info(h, &i); });
    nb::dict d;
    d["rank"] = i.rank;
    d["size"] = i.size;
    d["path"] = i.path;
    d["timeout_ms"] = i.timeout_ms;
    d["description"] = text(i.description);
    return d;
  }
  int async_error() const {
    xal_comm_t h = get("xal_comm_get_async_error");
    xal_status_t e = XAL_SUCCESS;
    call(gen_, "xal_comm_get_async_error", [&] { return xal_comm_get_async_error(h, &e); });
    return e;
  }
  void abort() const {
    xal_comm_t h = get("xal_comm_abort");
    call(gen_, "xal_comm_abort", [&] { return xal_comm_abort(h); });
  }

 private:
  Device device_;
  xal_comm_t handle_;
};

std::vector<Comm*> comm_create(const std::vector<Device>& devices, uint32_t timeout_ms) {
  std::vector<xal_device_t> handles;
  uint64_t gen = session::generation();
  for (const Device& d : devices) {
    same_session("xal_comm_create", gen, d.gen);
    handles.push_back(d.handle);
  }
  xal_comm_options_t o{};
  o.struct_size = sizeof o;
  o.timeout_ms = timeout_ms;
  std::vector<xal_comm_t> out(devices.size());
  call(gen, "xal_comm_create", [&] {
    return xal_comm_create(handles.empty() ? nullptr : handles.data(),
                           static_cast<uint32_t>(handles.size()), &o,
                           out.empty() ? nullptr : out.data());
  });
  std::vector<Comm*> comms;
  for (size_t i = 0; i < out.size(); ++i) comms.push_back(new Comm(devices[i], out[i]));
  return comms;
}

// A buffer argument: (allocation, byte offset) of `elements` elements, or
// None (the address 0) where the collective does not read it on this rank.
xal_devptr_t range(const char* op, const Comm& c, const Allocation* a, size_t offset,
                   size_t elements, uint32_t dtype) {
  if (!a) return 0;
  same_session(op, c.generation(), a->generation());
  const size_t es = dtype_size(dtype);
  if (es == 0) invalid(op, "dtype " + std::to_string(dtype) + " is out of range");
  if (elements > SIZE_MAX / es) invalid(op, "the element count overflows the address space");
  return a->at(op, offset, elements * es);
}

// One collective: `name` picks the call; count, dtype, op and root as the
// C function takes them.
void collective(const std::string& name, const Comm& c, const Allocation* send, size_t send_offset,
                const Allocation* recv, size_t recv_offset, size_t count, uint32_t dtype,
                uint32_t op, uint32_t root, const Stream& s) {
  const std::string opname = "xal_" + name;
  const char* o = opname.c_str();
  xal_comm_t ch = c.get(o);
  xal_stream_t sh = s.get(o);
  same_session(o, c.generation(), s.generation());
  const xal_comm_info_t info = [&] {
    xal_comm_info_t i{};
    i.struct_size = sizeof i;
    call(c.generation(), o, [&] { return xal_comm_get_info(ch, &i); });
    return i;
  }();
  const size_t n = info.size;
  size_t send_elems = count, recv_elems = count;
  if (name == "allgather") {
    recv_elems = count * n;
  } else if (name == "reduce_scatter") {
    send_elems = count * n;
  } else if (name == "alltoall") {
    send_elems = recv_elems = count * n;
  } else if (name != "allreduce" && name != "broadcast" && name != "reduce") {
    invalid(o, "no collective named '" + name + "'");
  }
  const xal_devptr_t sp = range(o, c, send, send_offset, send_elems, dtype);
  const xal_devptr_t rp = range(o, c, recv, recv_offset, recv_elems, dtype);
  const auto dt = static_cast<xal_dtype_t>(dtype);
  const auto rop = static_cast<xal_op_t>(op);
  call(c.generation(), o, [&]() -> xal_status_t {
    if (name == "allreduce") return xal_allreduce(ch, sp, rp, count, dt, rop, sh);
    if (name == "broadcast") return xal_broadcast(ch, sp, rp, count, dt, root, sh);
    if (name == "reduce") return xal_reduce(ch, sp, rp, count, dt, rop, root, sh);
    if (name == "allgather") return xal_allgather(ch, sp, rp, count, dt, sh);
    if (name == "reduce_scatter") return xal_reduce_scatter(ch, sp, rp, count, dt, rop, sh);
    return xal_alltoall(ch, sp, rp, count, dt, sh);
  });
}

}  // namespace

void bind_comm(nb::module_& m) {
  nb::class_<Comm>(m, "CommHandle", "An xal_comm_t (one rank), destroyed on close.")
      .def_prop_ro("device", [](const Comm& c) { return c.device(); })
      .def_prop_ro("closed", &Comm::closed)
      .def_prop_ro("generation", &Comm::generation)
      .def("close", &Comm::close)
      .def("info", &Comm::info)
      .def("async_error", &Comm::async_error)
      .def("abort", &Comm::abort);
  m.def("comm_create", &comm_create, nb::arg("devices"), nb::arg("timeout_ms") = 0,
        nb::rv_policy::take_ownership);
  m.def("collective", &collective, nb::arg("name"), nb::arg("comm"), nb::arg("send").none(),
        nb::arg("send_offset"), nb::arg("recv").none(), nb::arg("recv_offset"), nb::arg("count"),
        nb::arg("dtype"), nb::arg("op"), nb::arg("root"), nb::arg("stream"));
  m.def("group_start", [] { call(0, "xal_group_start", [] { return xal_group_start(); }); });
  m.def("group_end", [] { call(0, "xal_group_end", [] { return xal_group_end(); }); });
  m.def("dtype_size", &dtype_size);
}

}  // namespace xalpy
