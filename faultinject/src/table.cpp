// The plugin's entry symbol and the fault-control extension.
#include "backend.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

xal_backend_table_t make_table() {
  xal_backend_table_t t{};
  t.struct_size = sizeof t;
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = "fault";
  t.version = "1.1.0";
  fill_device_entries(t);
  fill_stream_entries(t);
  fill_comm_entries(t);
  fill_interop_entries(t);
  return t;
}

const xal_backend_table_t kTable = make_table();

xal_status_t ctl_load_plan(xal_backend_s* backend, const char* plan,
                           uint32_t flags) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "load_plan", [&] { return b->load_plan(plan, flags); });
}

xal_status_t ctl_clear(xal_backend_s* backend) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "clear", [&] {
    std::lock_guard lock(b->plan_mutex);
    b->engine.clear();
    return XAL_SUCCESS;
  });
}

xal_status_t ctl_set_rule_enabled(xal_backend_s* backend, const char* rule,
                                  int32_t enabled) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "set_rule_enabled", [&] {
    if (rule == nullptr) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT, "fault: rule name is NULL");
    }
    if (!b->engine.set_enabled(rule, enabled != 0)) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT,
                       std::string("fault: no rule named '") + rule + "'");
    }
    return XAL_SUCCESS;
  });
}

xal_status_t ctl_rule_count(xal_backend_s* backend, uint32_t* out_count) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "rule_count", [&] {
    if (out_count == nullptr) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT, "fault: out_count is NULL");
    }
    *out_count = static_cast<uint32_t>(b->engine.rule_count());
    return XAL_SUCCESS;
  });
}

xal_status_t ctl_rule_get_info(xal_backend_s* backend, uint32_t index,
                               xal_fault_rule_info_t* out) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "rule_get_info", [&] {
    if (out == nullptr || out->struct_size < sizeof(xal_fault_rule_info_t)) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT,
                       "fault: out_info is NULL or its struct_size too small");
    }
    const auto info = b->engine.rule_info(index);
    if (!info) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT,
                       "fault: rule index " + std::to_string(index) +
                           " out of range (" +
                           std::to_string(b->engine.rule_count()) + " rules)");
    }
    common::copy_string(out->name, info->name);
    common::copy_string(out->operation, info->operation);
    common::copy_string(out->action, info->action);
    out->enabled = info->enabled ? 1 : 0;
    out->matched = info->matched;
    out->fired = info->fired;
    return XAL_SUCCESS;
  });
}

xal_status_t ctl_get_counters(xal_backend_s* backend,
                              xal_fault_counters_t* out) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "get_counters", [&] {
    if (out == nullptr || out->struct_size < sizeof(xal_fault_counters_t)) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT,
                       "fault: out_counters is NULL or its struct_size too small");
    }
    out->calls = b->engine.calls();
    out->injected = b->engine.injected();
    return XAL_SUCCESS;
  });
}

const xal_fault_control_v1_t kControl = {
    sizeof(xal_fault_control_v1_t), ctl_load_plan,     ctl_clear,
    ctl_set_rule_enabled,           ctl_rule_count,    ctl_rule_get_info,
    ctl_get_counters};

}  // namespace

const xal_fault_control_v1_t* fault_control_table() { return &kControl; }

}  // namespace xal::fault

extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &xal::fault::kTable;
}
