// xal_fault.h: forwarded to the loaded fault backend's control extension.
#include "error.hpp"
#include "runtime.hpp"
#include "xal/xal_fault.h"

using namespace xal::core;

namespace {

// The fault control extension of `rt` and its backend, or an error.
xal_status_t find_control(Runtime* rt, const xal_fault_control_v1_t** out_ctl,
                          xal_backend_t** out_backend) {
  if (!rt) return not_initialized();
  for (auto& b : rt->backends) {
    if (!b->loaded() || !b->table->get_extension) continue;
    const void* ext = b->table->get_extension(b->instance, XAL_FAULT_CONTROL_EXTENSION);
    if (!ext) continue;
    const auto* ctl = static_cast<const xal_fault_control_v1_t*>(ext);
    if (ctl->struct_size < sizeof(xal_fault_control_v1_t)) continue;
    *out_ctl = ctl;
    *out_backend = b->instance;
    return XAL_SUCCESS;
  }
  return fail(XAL_ERROR_BACKEND_UNAVAILABLE,
              "no fault backend loaded (set XAL_BACKENDS=fault:mock or "
              "XAL_FAULT_PLAN)");
}

template <class F>
xal_status_t with_control(const char* op, F&& call) {
  return entry(op, [&] {
    // Held for the whole call: these take no handle, so xal_shutdown may run
    // on another thread (RuntimeHold).
    const RuntimeHold hold;
    const xal_fault_control_v1_t* ctl = nullptr;
    xal_backend_t* b = nullptr;
    if (xal_status_t s = find_control(hold.get(), &ctl, &b); s) return s;
    const xal_status_t s = call(*ctl, b);
    if (s >= 0) return s;
    for (auto& be : hold.get()->backends)
      if (be->instance == b) return fail_backend(be.get(), nullptr, s);
    return fail_backend(nullptr, nullptr, s);
  });
}

}  // namespace

extern "C" {

// Loads a plan (JSON, file, or compact syntax). Thread-safe.
XAL_API xal_status_t xal_fault_load_plan(const char* plan, uint32_t flags) {
  if (!plan) return entry("xal_fault_load_plan", [] { return null_argument("plan"); });
  return with_control("xal_fault_load_plan", [&](const xal_fault_control_v1_t& c,
                                                  xal_backend_t* b) {
    return c.load_plan(b, plan, flags);
  });
}

XAL_API xal_status_t xal_fault_clear(void) {
  return with_control("xal_fault_clear", [&](const xal_fault_control_v1_t& c,
                                              xal_backend_t* b) {
    return c.clear(b);
  });
}

XAL_API xal_status_t xal_fault_set_rule_enabled(const char* rule,
                                               int32_t enabled) {
  if (!rule) return entry("xal_fault_set_rule_enabled", [] { return null_argument("rule"); });
  return with_control("xal_fault_set_rule_enabled",
                      [&](const xal_fault_control_v1_t& c, xal_backend_t* b) {
                        return c.set_rule_enabled(b, rule, enabled);
                      });
}

XAL_API xal_status_t xal_fault_rule_count(uint32_t* out_count) {
  if (!out_count) return entry("xal_fault_rule_count", [] { return null_argument("out_count"); });
  return with_control("xal_fault_rule_count", [&](const xal_fault_control_v1_t& c,
                                                   xal_backend_t* b) {
    return c.rule_count(b, out_count);
  });
}

XAL_API xal_status_t xal_fault_rule_get_info(uint32_t index,
                                            xal_fault_rule_info_t* out_info) {
  if (!struct_ok(out_info))
    return entry("xal_fault_rule_get_info", [&] {
      return bad_struct(out_info, out_info ? out_info->struct_size : 0,
                        sizeof(*out_info), "out_info");
    });
  return with_control("xal_fault_rule_get_info",
                      [&](const xal_fault_control_v1_t& c, xal_backend_t* b) {
                        return c.rule_get_info(b, index, out_info);
                      });
}

XAL_API xal_status_t xal_fault_get_counters(xal_fault_counters_t* out_counters) {
  if (!struct_ok(out_counters))
    return entry("xal_fault_get_counters", [&] {
      return bad_struct(out_counters, out_counters ? out_counters->struct_size : 0,
                        sizeof(*out_counters), "out_counters");
    });
  return with_control("xal_fault_get_counters",
                      [&](const xal_fault_control_v1_t& c, xal_backend_t* b) {
                        return c.get_counters(b, out_counters);
                      });
}

}  // extern "C"
