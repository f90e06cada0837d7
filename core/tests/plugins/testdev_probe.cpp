// The probe variant of testdev: a stand-in fault control extension, so that
// the core's xal_fault_* forwarding can be tested without the fault backend.
#include <cstring>

#include "testdev.hpp"
#include "xal/xal_fault.h"

namespace testdev {

namespace {

Backend* B(xal_backend_s* b) { return reinterpret_cast<Backend*>(b); }

xal_status_t load_plan(xal_backend_s* b, const char* plan, uint32_t flags) {
  if (std::strstr(plan, "bad"))
    return error(B(b), XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                 "probe: plan rule 1: 'bad' is not an operation");
  if (flags == XAL_FAULT_PLAN_REPLACE) B(b)->plans.clear();
  B(b)->plans.emplace_back(plan);
  return XAL_SUCCESS;
}

xal_status_t clear(xal_backend_s* b) {
  B(b)->plans.clear();
  return XAL_SUCCESS;
}

xal_status_t set_enabled(xal_backend_s* b, const char* rule, int32_t) {
  for (const auto& p : B(b)->plans)
    if (p == rule) return XAL_SUCCESS;
  return error(B(b), XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
               std::string("probe: no rule named ") + rule);
}

xal_status_t rule_count(xal_backend_s* b, uint32_t* out) {
  *out = static_cast<uint32_t>(B(b)->plans.size());
  return XAL_SUCCESS;
}

xal_status_t rule_info(xal_backend_s* b, uint32_t i, xal_fault_rule_info_t* out) {
  if (i >= B(b)->plans.size())
    return error(B(b), XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "probe: no such rule");
  std::snprintf(out->name, sizeof out->name, "%s", B(b)->plans[i].c_str());
  out->enabled = 1;
  return XAL_SUCCESS;
}

xal_status_t counters(xal_backend_s* b, xal_fault_counters_t* out) {
  out->calls = B(b)->plans.size();
  out->injected = 0;
  return XAL_SUCCESS;
}

const xal_fault_control_v1_t kControl = {sizeof(xal_fault_control_v1_t),
                                         load_plan, clear, set_enabled,
                                         rule_count, rule_info, counters};

}  // namespace

const void* probe_extension(xal_backend_t*, const char* name) {
  return std::strcmp(name, XAL_FAULT_CONTROL_EXTENSION) == 0 ? &kControl : nullptr;
}

}  // namespace testdev
