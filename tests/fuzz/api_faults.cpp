// Fault mode of the API-sequence target: an input whose first byte is
// kFaultMode runs on fault:mock with a plan decoded from the rest of that
// first step (transient errors and short delays on random operations, with
// random probabilities, nth, every and count). A call may then fail with an
// injected error where the model expects success: `expect` accepts that
// only when the fault backend counted an injection since the previous
// check, and the model then treats the call as not made. The plan is
// loaded again after every re-init; the fault control calls are a step.
#include <string>
#include <vector>

#include "api_sequence.hpp"
#include "xal/xal_fault.h"

namespace xal::fuzz {
namespace {

// Operations whose failure leaves the model right: the call was not made.
// Not synchronisation (a failed wait would leave work running) and not
// collectives (one rank's failure inside a group leaves the others waiting).
const char* const kOps[] = {
    "mem_alloc",   "mem_free",     "mem_get_info", "device_get_properties", "stream_create",
    "stream_destroy", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod",         "memcpy_peer",
    "memset",      "memcpy_*",     "event_create", "event_destroy",         "event_record",
    "stream_wait_event", "event_elapsed_ms", "module_load", "module_unload", "kernel_get",
    "kernel_launch", "comm_create", "mem_*",       "event_*"};
const char* const kErrors[] = {"OUT_OF_MEMORY",    "BACKEND",       "TIMEOUT",
                               "NOT_SUPPORTED",    "INVALID_ARGUMENT", "OUT_OF_HOST_MEMORY",
                               "cuda:CUDA_ERROR_INVALID_VALUE", "hip:hipErrorOutOfMemory"};

struct Watch {
  bool on = false;
  uint64_t mark = 0;  // injections counted so far
};
Watch g_watch;

uint64_t injections() {
  xal_fault_counters_t c{};
  c.struct_size = sizeof c;
  return xal_fault_get_counters(&c) == XAL_SUCCESS ? c.injected : 0;
}

uint32_t rule_count() {
  uint32_t n = 0;
  expect(xal_fault_rule_count(&n), XAL_SUCCESS, "xal_fault_rule_count");
  return n;
}

}  // namespace

bool injected_since_last_check() {
  if (!g_watch.on) return false;
  const uint64_t now = injections();
  const bool moved = now != g_watch.mark;
  g_watch.mark = now;
  return moved;
}

void fault_watch(bool on) {
  g_watch.on = false;
  g_watch.mark = on ? injections() : 0;
  g_watch.on = on;
}

void Sequence::decode_plan(Choices& head) {
  faults_ = true;
  plan_ = "seed=" + std::to_string(head.bits(2));
  const int rules = 1 + head.byte() % 3;
  for (int r = 0; r < rules; ++r) {
    std::string rule = std::string(kOps[head.below(std::size(kOps))]) + "=name(r" +
                       std::to_string(r) + ")";
    switch (head.byte() % 4) {
      case 0: rule += "," + std::to_string(1 + head.below(100)) + "%"; break;
      case 1: rule += ",nth(" + std::to_string(1 + head.below(8)) + ")"; break;
      case 2: rule += ",every(" + std::to_string(1 + head.below(5)) + ")"; break;
      default: break;  // every match
    }
    if (head.byte() % 3 == 0) rule += "," + std::to_string(1 + head.below(4)) + "*";
    if (head.byte() % 8 == 7)
      rule += ",delay(" + std::to_string(1 + head.below(3)) + ")";
    else
      rule += ",transient," + std::string(kErrors[head.below(std::size(kErrors))]);
    plan_ += ";" + rule;
  }
}

void Sequence::load_plan() {
  fault_watch(false);
  const xal_status_t s = xal_fault_load_plan(plan_.c_str(), XAL_FAULT_PLAN_REPLACE);
  expect(s, XAL_SUCCESS, "xal_fault_load_plan('" + plan_ + "')");
  fault_watch(true);
}

// The fault control calls: without a fault backend each says so; with one,
// clear, reload, disable and enable rules, a refused plan that changes
// nothing, and rule information and counters that agree with each other.
void Sequence::fault_control() {
  const uint8_t c = in_->byte() % 6;
  if (!faults_ || !m_.initialised) {
    const xal_status_t want =
        m_.initialised ? XAL_ERROR_BACKEND_UNAVAILABLE : XAL_ERROR_NOT_INITIALIZED;
    const xal_status_t s = c % 2 ? xal_fault_clear() : xal_fault_load_plan("mem_alloc=nth(1)BACKEND", 0);
    expect(s, want, "xal_fault_* without a fault backend");
    expect_detail(s, "xal_fault_*");
    return;
  }
  fault_watch(false);
  switch (c) {
    case 0: expect(xal_fault_clear(), XAL_SUCCESS, "xal_fault_clear"); break;
    case 1: load_plan(); break;
    case 2: {
      const uint32_t n = rule_count();
      const uint32_t r = static_cast<uint32_t>(in_->below(4));
      const std::string name = "r" + std::to_string(r);
      const xal_status_t s = xal_fault_set_rule_enabled(name.c_str(), in_->byte() % 2);
      // Rules r0..r<n-1> are those of the plan (none after a clear).
      expect(s, r < n ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT, "xal_fault_set_rule_enabled");
      expect_detail(s, "xal_fault_set_rule_enabled");
      break;
    }
    case 3: {
      const uint32_t before = rule_count();
      const xal_status_t s = xal_fault_load_plan("mem_alloc=nth(x)TIMEOUT", XAL_FAULT_PLAN_APPEND);
      expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_fault_load_plan of a malformed plan");
      expect_detail(s, "xal_fault_load_plan");
      XAL_FUZZ_CHECK(rule_count() == before, "a refused plan changed the rules");
      break;
    }
    default: {
      const uint32_t n = rule_count();
      uint64_t fired = 0;
      for (uint32_t i = 0; i <= n; ++i) {
        xal_fault_rule_info_t info{};
        info.struct_size = sizeof info;
        const xal_status_t s = xal_fault_rule_get_info(i, &info);
        expect(s, i < n ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT, "xal_fault_rule_get_info");
        if (s != XAL_SUCCESS) continue;
        XAL_FUZZ_CHECK(info.fired <= info.matched, "a rule fired more often than it matched");
        XAL_FUZZ_CHECK(info.name == "r" + std::to_string(i), "rule " + std::to_string(i) +
                                                                 " is named " + info.name);
        fired += info.fired;
      }
      xal_fault_counters_t counters{};
      counters.struct_size = sizeof counters;
      expect(xal_fault_get_counters(&counters), XAL_SUCCESS, "xal_fault_get_counters");
      // Counters outlive a clear or a reload: at least what the rules fired.
      XAL_FUZZ_CHECK(counters.injected >= fired && counters.calls >= counters.injected,
                     "fault counters below what the rules say");
    }
  }
  fault_watch(true);
}

}  // namespace xal::fuzz
