// Fault control (xal_fault.h): plans, rules and counters of the loaded
// fault backend, for tests that script faults.
#include <nanobind/stl/string.h>

#include <string>

#include "session.hpp"
#include "xal/xal_fault.h"

namespace xalpy {

namespace {

nb::list rules() {
  uint32_t n = 0;
  call(0, "xal_fault_rule_count", [&] { return xal_fault_rule_count(&n); });
  nb::list out;
  for (uint32_t i = 0; i < n; ++i) {
    xal_fault_rule_info_t r{};
    r.struct_size = sizeof r;
    call(0, "xal_fault_rule_get_info", [&] { return xal_fault_rule_get_info(i, &r); });
    nb::dict d;
    d["name"] = text(r.name);
    d["operation"] = text(r.operation);
    d["action"] = text(r.action);
    d["enabled"] = r.enabled != 0;
    d["matched"] = r.matched;
    d["fired"] = r.fired;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_fault(nb::module_& m) {
  m.def("fault_load_plan", [](const std::string& plan, bool append) {
    call(0, "xal_fault_load_plan", [&] {
      return xal_fault_load_plan(plan.c_str(),
                                 append ? XAL_FAULT_PLAN_APPEND : XAL_FAULT_PLAN_REPLACE);
    });
  });
  m.def("fault_clear", [] { call(0, "xal_fault_clear", [] { return xal_fault_clear(); }); });
  m.def("fault_set_rule_enabled", [](const std::string& rule, bool enabled) {
    call(0, "xal_fault_set_rule_enabled",
         [&] { return xal_fault_set_rule_enabled(rule.c_str(), enabled ? 1 : 0); });
  });
  m.def("fault_rules", &rules);
  m.def("fault_counters", [] {
    xal_fault_counters_t c{};
    c.struct_size = sizeof c;
    call(0, "xal_fault_get_counters", [&] { return xal_fault_get_counters(&c); });
    return nb::make_tuple(c.calls, c.injected);
  });
}

}  // namespace xalpy
