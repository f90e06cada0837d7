// The version-specific glue: the Python module xal_torch._C over torch's
// pybind11 types (c10d Store, Backend). Everything that depends on how a
// torch release exposes c10d to Python lives here.
#include <torch/csrc/utils/pybind.h>
#include <torch/python.h>

#include <chrono>

#include "backend.hpp"
#include "shared_tensors.hpp"
#include "xal/xal.h"

namespace py = pybind11;
using xal::torch_backend::XalBackend;

namespace {

// The backend of xal behind a c10d Backend handle, or a clear error.
XalBackend& xal_backend(const c10::intrusive_ptr<c10d::Backend>& backend) {
  auto* x = dynamic_cast<XalBackend*>(backend.get());
  TORCH_CHECK(x, "xal: not a backend of xal");
  return *x;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "The torch.distributed backend \"xal\" (c10d Backend over xal's collectives)";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeout_s,
         std::vector<int> host_of_rank, py::object leaders,
         py::object everyone) -> c10::intrusive_ptr<c10d::Backend> {
        c10::intrusive_ptr<c10d::Backend> between, all;
        if (!leaders.is_none()) between = leaders.cast<c10::intrusive_ptr<c10d::Backend>>();
        if (!everyone.is_none()) all = everyone.cast<c10::intrusive_ptr<c10d::Backend>>();
        py::gil_scoped_release no_gil;
        const auto ms = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0));
        return c10::make_intrusive<XalBackend>(store, rank, size, ms, std::move(host_of_rank),
                                               std::move(between), std::move(all));
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_s"),
      py::arg("host_of_rank") = std::vector<int>{}, py::arg("leaders") = py::none(),
      py::arg("everyone") = py::none(),
      "Makes the group's backend (collective over the group; the creator that "
      "torch.distributed.Backend.register_backend calls). host_of_rank: every rank's host "
      "(empty: one host); leaders: on each host's lowest rank of a group over several hosts, "
      "a backend over the hosts' leaders (torch's Gloo); everyone: on every rank of such a "
      "group, a backend over all its ranks (torch's Gloo) for send/recv between hosts.");
  m.def(
      "hosts",
      [](const c10::intrusive_ptr<c10d::Backend>& backend) {
        return xal_backend(backend).hosts();
      },
      "How many hosts a backend of xal spans.");
  m.def(
      "device_of",
      [](const c10::intrusive_ptr<c10d::Backend>& backend) {
        return xal_backend(backend).deviceDescription();
      },
      "The xal device a backend of xal runs on, as text (\"mock:1 ...\").");
  m.def(
      "calls_run",
      [](const c10::intrusive_ptr<c10d::Backend>& backend) {
        return xal_backend(backend).callsRun();
      },
      "How many calls a backend of xal has run.");
  m.def(
      "_allreduce_device_memory",
      [](const c10::intrusive_ptr<c10d::Backend>& backend, uint64_t ptr, int64_t count,
         const at::Tensor& like, uint64_t native_stream) {
        return xal_backend(backend).allreduceDeviceMemory(ptr, count, like.scalar_type(),
                                                          native_stream);
      },
      py::arg("backend"), py::arg("ptr"), py::arg("count"), py::arg("like"),
      py::arg("native_stream"),
      "Test hook: allreduce (SUM) of `count` elements of like's dtype at `ptr`, device memory "
      "of the group's card, on its native stream: the path of a CUDA tensor on the rank's "
      "card, without one.");
  m.def(
      "last_staged_bytes",
      [](const c10::intrusive_ptr<c10d::Backend>& backend) {
        return xal_backend(backend).lastStagedBytes();
      },
      "Bytes the group's last allreduce staged in device memory (0: imported in place).");
  m.def(
      "use_shared_tensors",
      [](size_t min_bytes) { xal::torch_backend::use_shared_tensors(min_bytes); },
      py::arg("min_bytes"),
      "Installs the shared-tensor allocator (CPU allocations of at least min_bytes in memory "
      "the host's other ranks can map), or with 0 puts torch's back.");
  m.def(
      "zero_copy_allreduces",
      [](const c10::intrusive_ptr<c10d::Backend>& backend) {
        return xal_backend(backend).zeroCopyAllreduces();
      },
      "How many allreduces of a backend of xal ran in place from shared tensors.");
  m.def("shared_tensors_min_bytes", &xal::torch_backend::shared_tensors_min_bytes,
        "The shared-tensor allocator's threshold, 0 when it is not installed.");
  m.def(
      "is_shared_tensor",
      [](const at::Tensor& t) {
        return t.device().is_cpu() && t.numel() > 0 &&
               xal::torch_backend::is_shared_memory(
                   t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
      },
      "True when the CPU tensor's memory is a shared block of the shared-tensor allocator.");
  m.def("abi_version", [] {
    const uint32_t v = xal_abi_version();
    return py::make_tuple(XAL_ABI_MAJOR(v), XAL_ABI_MINOR(v));
  });
}
