// Backends and devices: xal_backend_*, xal_device_* and xal_mem_get_info,
// as dicts that xal/_device.py turns into objects.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>
#include <vector>

#include "handles.hpp"

namespace xalpy {

namespace {

uint32_t backend_count() {
  uint32_t n = 0;
  call(0, "xal_backend_count", [&] { return xal_backend_count(&n); });
  return n;
}

nb::dict backend_info(uint32_t index) {
  xal_backend_info_t b{};
  b.struct_size = sizeof b;
  call(0, "xal_backend_get_info", [&] { return xal_backend_get_info(index, &b); });
  nb::dict d;
  d["name"] = text(b.name);
  d["version"] = text(b.version);
  d["path"] = text(b.path);
  d["state"] = b.state;
  d["status"] = b.status;
  d["reason"] = text(b.reason);
  d["abi_version"] = b.abi_version;
  d["device_count"] = b.device_count;
  d["flags"] = b.flags;
  d["driver_version"] = text(b.driver_version);
  d["note"] = text(b.note);
  return d;
}

uint32_t device_count() {
  uint32_t n = 0;
  call(0, "xal_device_count", [&] { return xal_device_count(&n); });
  return n;
}

Device device_get(uint32_t index) {
  Device d;
  d.gen = session::generation();
  call(d.gen, "xal_device_get", [&] { return xal_device_get(index, &d.handle); });
  return d;
}

nb::dict properties(const Device& dev) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  call(dev.gen, "xal_device_get_properties",
       [&] { return xal_device_get_properties(dev.handle, &p); });
  nb::dict d;
  d["name"] = text(p.name);
  d["vendor"] = text(p.vendor);
  d["backend"] = text(p.backend);
  d["kind"] = p.kind;
  d["index"] = p.index;
  d["backend_index"] = p.backend_index;
  d["parent_index"] = p.parent_index;
  d["uuid"] = nb::bytes(reinterpret_cast<const char*>(p.uuid), sizeof p.uuid);
  d["pci_bus_id"] = text(p.pci_bus_id);
  d["memory_bytes"] = p.memory_bytes;
  d["compute_units"] = p.compute_units;
  d["core_clock_mhz"] = p.core_clock_mhz;
  d["memory_clock_mhz"] = p.memory_clock_mhz;
  d["memory_bus_width_bits"] = p.memory_bus_width_bits;
  d["peak_memory_bandwidth_gbps"] = p.peak_memory_bandwidth_gbps;
  d["capabilities"] = p.capabilities;
  d["max_allocation_bytes"] = p.max_allocation_bytes;
  return d;
}

nb::dict metrics(const Device& dev) {
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  call(dev.gen, "xal_device_get_metrics", [&] { return xal_device_get_metrics(dev.handle, &m); });
  nb::dict d;
  d["valid"] = m.valid;
  d["utilization_percent"] = m.utilization_percent;
  d["memory_used_bytes"] = m.memory_used_bytes;
  d["memory_total_bytes"] = m.memory_total_bytes;
  d["memory_limit_bytes"] = m.memory_limit_bytes;
  d["temperature_c"] = m.temperature_c;
  d["power_w"] = m.power_w;
  d["energy_j"] = m.energy_j;
  d["sm_clock_mhz"] = m.sm_clock_mhz;
  d["memory_clock_mhz"] = m.memory_clock_mhz;
  d["ecc_corrected"] = m.ecc_corrected;
  d["ecc_uncorrected"] = m.ecc_uncorrected;
  d["pcie_replays"] = m.pcie_replays;
  d["health"] = m.health;
  d["last_xid"] = m.last_xid;
  d["xal_bytes_htod"] = m.xal_bytes_htod;
  d["xal_bytes_dtoh"] = m.xal_bytes_dtoh;
  d["xal_bytes_dtod"] = m.xal_bytes_dtod;
  d["xal_bytes_peer"] = m.xal_bytes_peer;
  d["xal_collective_calls"] = m.xal_collective_calls;
  d["xal_collective_bytes"] = m.xal_collective_bytes;
  d["xal_alloc_bytes_current"] = m.xal_alloc_bytes_current;
  d["xal_alloc_bytes_peak"] = m.xal_alloc_bytes_peak;
  d["xal_alloc_count_current"] = m.xal_alloc_count_current;
  d["xal_faults_injected"] = m.xal_faults_injected;
  nb::dict errors;
  for (int i = 1; i < XAL_METRICS_ERROR_SLOTS; ++i) {
    if (m.xal_errors[i]) errors[xal_status_name(-i)] = m.xal_errors[i];
  }
  d["xal_errors"] = errors;
  d["job_memory_used_bytes"] = m.job_memory_used_bytes;
  d["job_processes"] = m.job_processes;
  return d;
}

nb::dict health(const Device& dev) {
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  call(dev.gen, "xal_device_get_health", [&] { return xal_device_get_health(dev.handle, &h); });
  nb::dict d;
  d["state"] = h.state;
  d["sticky_status"] = h.sticky_status;
  d["vendor_code"] = h.vendor_code;
  d["message"] = text(h.message);
  return d;
}

std::pair<uint64_t, uint64_t> mem_info(const Device& dev) {
  uint64_t free_bytes = 0, total = 0;
  call(dev.gen, "xal_mem_get_info",
       [&] { return xal_mem_get_info(dev.handle, &free_bytes, &total); });
  return {free_bytes, total};
}

std::vector<Device> partition(const Device& dev,
                              const std::vector<std::tuple<uint64_t, uint32_t>>& specs) {
  std::vector<xal_partition_desc_t> descs(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    descs[i].struct_size = sizeof(xal_partition_desc_t);
    descs[i].memory_bytes = std::get<0>(specs[i]);
    descs[i].compute_percent = std::get<1>(specs[i]);
  }
  std::vector<xal_device_t> out(specs.size());
  call(dev.gen, "xal_device_partition", [&] {
    return xal_device_partition(dev.handle, static_cast<uint32_t>(specs.size()),
                                descs.empty() ? nullptr : descs.data(),
                                out.empty() ? nullptr : out.data());
  });
  std::vector<Device> result;
  for (xal_device_t h : out) result.push_back(Device{h, dev.gen});
  return result;
}

nb::list job_processes(const Device& dev) {
  uint32_t count = 0;
  call(dev.gen, "xal_device_get_job_processes",
       [&] { return xal_device_get_job_processes(dev.handle, 0, nullptr, &count); });
  std::vector<xal_job_process_t> procs(count);
  for (auto& p : procs) p.struct_size = sizeof p;
  if (count) {
    call(dev.gen, "xal_device_get_job_processes",
         [&] { return xal_device_get_job_processes(dev.handle, count, procs.data(), &count); });
  }
  nb::list out;
  for (uint32_t i = 0; i < count && i < procs.size(); ++i) {
    nb::dict d;
    d["pid"] = procs[i].pid;
    d["is_self"] = procs[i].is_self != 0;
    d["memory_bytes"] = procs[i].memory_bytes;
    d["limit_bytes"] = procs[i].limit_bytes;
    out.append(d);
  }
  return out;
}

std::string partition_config_errors() {
  size_t length = 0;
  call(0, "xal_partition_config_errors",
       [&] { return xal_partition_config_errors(nullptr, 0, &length); });
  std::string s(length + 1, '\0');
  call(0, "xal_partition_config_errors",
       [&] { return xal_partition_config_errors(s.data(), s.size(), nullptr); });
  s.resize(length);
  return s;
}

}  // namespace

void bind_device(nb::module_& m) {
  nb::class_<Device>(m, "DeviceHandle", "An xal_device_t of one session (not owned).")
      .def_prop_ro("generation", [](const Device& d) { return d.gen; })
      .def_prop_ro("key", [](const Device& d) { return reinterpret_cast<uintptr_t>(d.handle); })
      .def("properties", &properties)
      .def("metrics", &metrics)
      .def("health", &health)
      .def("mem_info", &mem_info)
      .def("synchronize",
           [](const Device& d) {
             call(d.gen, "xal_device_synchronize",
                  [&] { return xal_device_synchronize(d.handle); });
           })
      .def("reset",
           [](const Device& d) {
             call(d.gen, "xal_device_reset", [&] { return xal_device_reset(d.handle); });
           })
      .def("set_memory_limit",
           [](const Device& d, uint64_t bytes) {
             call(d.gen, "xal_device_set_memory_limit",
                  [&] { return xal_device_set_memory_limit(d.handle, bytes); });
           })
      .def("compute_share",
           [](const Device& d) {
             uint32_t pct = 0;
             call(d.gen, "xal_device_get_compute_share",
                  [&] { return xal_device_get_compute_share(d.handle, &pct); });
             return pct;
           })
      .def("partition", &partition)
      .def("unpartition",
           [](const Device& d) {
             call(d.gen, "xal_device_unpartition",
                  [&] { return xal_device_unpartition(d.handle); });
           })
      .def("job_processes", &job_processes);
  m.def("backend_count", &backend_count);
  m.def("backend_info", &backend_info);
  m.def("device_count", &device_count);
  m.def("device_get", &device_get);
  m.def("partition_config_errors", &partition_config_errors);
}

}  // namespace xalpy
