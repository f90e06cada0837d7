#include "render.hpp"

#include <iomanip>
#include <sstream>
#include <string>

#include "tool_support.hpp"
#include "xal_common/strings.hpp"

namespace xal::info {
namespace {

using tools::backend_state_name;
using tools::format_abi_version;
using tools::format_uuid;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += ", ";
    }
    out += item;
  }
  return out.empty() ? "none" : out;
}

std::string or_dash(const char* text) {
  return text[0] == '\0' ? std::string("-") : std::string(text);
}

void row(std::ostream& out, const char* key, const std::string& value) {
  out << "    " << std::left << std::setw(22) << key << value << '\n';
}

std::string fixed(double value, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << value;
  return s.str();
}

}  // namespace

void render_text(const Inventory& inv, std::ostream& out) {
  out << "xal ABI " << format_abi_version(inv.abi_version) << "\n\n";
  out << "Backends: " << inv.backends.size() << '\n';
  for (size_t i = 0; i < inv.backends.size(); ++i) {
    const xal_backend_info_t& b = inv.backends[i].info;
    out << "  [" << i << "] " << b.name << "  " << backend_state_name(b.state)
        << '\n';
    row(out, "version", or_dash(b.version));
    row(out, "path", or_dash(b.path));
    row(out, "abi", b.abi_version == 0 ? std::string("-")
                                        : format_abi_version(b.abi_version));
    row(out, "devices", std::to_string(b.device_count));
    row(out, "simulated",
        (b.flags & XAL_BACKEND_FLAG_SIMULATED) != 0 ? "yes" : "no");
    if ((b.flags & XAL_BACKEND_FLAG_WRAPPER) != 0) {
      row(out, "wrapper", "yes");
    }
    row(out, "driver version", or_dash(b.driver_version));
    if (b.note[0] != '\0') row(out, "note", b.note);
    if (b.state != XAL_BACKEND_STATE_LOADED || b.reason[0] != '\0') {
      row(out, "status", xal_status_name(b.status));
      row(out, "reason", or_dash(b.reason));
    }
  }

  out << "\nDevices: " << inv.devices.size() << '\n';
  for (const DeviceRecord& d : inv.devices) {
    if (!d.error.empty()) {
      out << "  [" << d.index << "] cannot be read\n";
      row(out, "error", d.error);
      continue;
    }
    const xal_device_properties_t& p = d.props;
    out << "  [" << p.index << "] " << p.name << '\n';
    row(out, "vendor", or_dash(p.vendor));
    row(out, "backend", std::string(p.backend) + " #" +
                            std::to_string(p.backend_index));
    row(out, "kind", device_kind_name(p.kind));
    row(out, "uuid", format_uuid(p.uuid));
    row(out, "pci bus id", or_dash(p.pci_bus_id));
    row(out, "memory", common::format_bytes(p.memory_bytes));
    if (d.mem_total) {
      row(out, "memory free/total", common::format_bytes(*d.mem_free) + " / " +
                                        common::format_bytes(*d.mem_total));
    } else {
      row(out, "memory free/total", "unknown (" + d.mem_error + ")");
    }
    row(out, "max allocation", common::format_bytes(p.max_allocation_bytes));
    row(out, "compute units", std::to_string(p.compute_units));
    row(out, "core clock", std::to_string(p.core_clock_mhz) + " MHz");
    row(out, "memory clock", std::to_string(p.memory_clock_mhz) + " MHz");
    row(out, "memory bus width", std::to_string(p.memory_bus_width_bits) +
                                     " bits");
    row(out, "peak bandwidth",
        fixed(p.peak_memory_bandwidth_gbps, 1) + " GB/s");
    row(out, "capabilities", join(capability_names(p.capabilities)));
    row(out, "parent", p.parent_index < 0 ? std::string("-")
                                          : std::to_string(p.parent_index));
    if (p.parent_index >= 0 || d.compute_percent != 100) {
      row(out, "compute share", std::to_string(d.compute_percent) + "%");
    }
  }
  if (inv.devices.empty()) {
    out << "  (none: see the backends' reasons above)\n";
  }
  if (!inv.partition_errors.empty()) {
    out << "\nPartition problems (XAL_PARTITIONS): "
        << inv.partition_errors.size() << '\n';
    for (const std::string& e : inv.partition_errors) {
      out << "  " << e << '\n';
    }
  }
}

nlohmann::json render_json(const Inventory& inv) {
  nlohmann::json root;
  root["abi_version"] = format_abi_version(inv.abi_version);
  root["backends"] = nlohmann::json::array();
  for (const BackendRecord& record : inv.backends) {
    const xal_backend_info_t& b = record.info;
    root["backends"].push_back({
        {"name", b.name},
        {"version", b.version},
        {"path", b.path},
        {"state", backend_state_name(b.state)},
        {"status", xal_status_name(b.status)},
        {"reason", b.reason},
        {"abi_version", format_abi_version(b.abi_version)},
        {"device_count", b.device_count},
        {"simulated", (b.flags & XAL_BACKEND_FLAG_SIMULATED) != 0},
        {"wrapper", (b.flags & XAL_BACKEND_FLAG_WRAPPER) != 0},
        {"driver_version", b.driver_version},
        {"note", b.note},
    });
  }
  root["devices"] = nlohmann::json::array();
  for (const DeviceRecord& d : inv.devices) {
    if (!d.error.empty()) {
      root["devices"].push_back({{"index", d.index}, {"error", d.error}});
      continue;
    }
    const xal_device_properties_t& p = d.props;
    nlohmann::json dev = {
        {"index", p.index},
        {"name", p.name},
        {"vendor", p.vendor},
        {"backend", p.backend},
        {"backend_index", p.backend_index},
        {"kind", device_kind_name(p.kind)},
        {"uuid", format_uuid(p.uuid)},
        {"pci_bus_id", p.pci_bus_id},
        {"memory_bytes", p.memory_bytes},
        {"max_allocation_bytes", p.max_allocation_bytes},
        {"compute_units", p.compute_units},
        {"core_clock_mhz", p.core_clock_mhz},
        {"memory_clock_mhz", p.memory_clock_mhz},
        {"memory_bus_width_bits", p.memory_bus_width_bits},
        {"peak_memory_bandwidth_gbps", p.peak_memory_bandwidth_gbps},
        {"capabilities", capability_names(p.capabilities)},
        {"capability_bits", p.capabilities},
        {"parent_index", nullptr},
        {"compute_percent", d.compute_percent},
        {"memory_free_bytes", nullptr},
        {"memory_total_bytes", nullptr},
    };
    if (p.parent_index >= 0) {
      dev["parent_index"] = p.parent_index;
    }
    if (d.mem_total) {
      dev["memory_free_bytes"] = *d.mem_free;
      dev["memory_total_bytes"] = *d.mem_total;
    } else {
      dev["memory_error"] = d.mem_error;
    }
    root["devices"].push_back(std::move(dev));
  }
  root["partition_errors"] = inv.partition_errors;
  return root;
}

}  // namespace xal::info
