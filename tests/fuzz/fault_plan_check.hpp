// What every parsed fault plan must satisfy, whichever syntax it came
// from (faultinject/src/plan.hpp, rule_check.cpp): the parser refuses a rule
// that can never fire or that names nothing, so an accepted one is sound.
#pragma once

#include <string>

#include "fuzz_check.hpp"
#include "plan.hpp"

namespace xal::fuzz {

inline void check_plan(const xal::fault::Plan& plan) {
  using xal::fault::Action;
  constexpr uint64_t kYearMs = 365ull * 24 * 3600 * 1000;
  XAL_FUZZ_CHECK(plan.timeout_ms <= kYearMs, "plan timeout above one year");
  for (const auto& r : plan.rules) {
    XAL_FUZZ_CHECK(!r.operation.empty(), "a rule without an operation");
    XAL_FUZZ_CHECK(r.ops.any(), "a rule that matches no operation: " + r.operation);
    XAL_FUZZ_CHECK(r.probability > 0.0 && r.probability <= 1.0,
                   "probability outside (0, 1]: " + std::to_string(r.probability));
    XAL_FUZZ_CHECK(r.count > 0, "count 0");
    XAL_FUZZ_CHECK(r.nth == 0 || r.every == 0, "nth with every");
    XAL_FUZZ_CHECK(!r.size_filter || r.min_bytes <= r.max_bytes, "min_bytes > max_bytes");
    XAL_FUZZ_CHECK(r.device >= -1, "device below -1");
    XAL_FUZZ_CHECK(r.after_ms <= kYearMs && r.delay_ms <= kYearMs &&
                       r.timeout_ms <= kYearMs,
                   "a time above one year");
    XAL_FUZZ_CHECK(r.bits <= (1u << 20), "bitflip of too many bits");
    if (r.action == Action::error || r.action == Action::async_error ||
        r.action == Action::device_lost) {
      XAL_FUZZ_CHECK(r.error.status < 0, "an error action without an error status");
    }
    if (r.action == Action::device_lost) {
      XAL_FUZZ_CHECK(r.error.status == XAL_ERROR_DEVICE_LOST && r.error.sticky,
                     "device_lost that is not a sticky DEVICE_LOST");
    }
    if (r.action == Action::delay) XAL_FUZZ_CHECK(r.delay_ms > 0, "delay of 0 ms");
    if (r.action == Action::bitflip) XAL_FUZZ_CHECK(r.bits > 0, "bitflip of 0 bits");
  }
  // A device check on a backend of two devices accepts or refuses clearly.
  try {
    xal::fault::check_plan_devices(plan, 2, "fuzz");
  } catch (const xal::fault::PlanError& e) {
    XAL_FUZZ_CHECK(says_something(e.what()), "an empty device error");
  }
}

// A refusal names its source first ("<source>: ...") and says why.
inline void check_refusal(const xal::fault::PlanError& e, std::string_view source) {
  const std::string_view what = e.what();
  XAL_FUZZ_CHECK(what.substr(0, source.size()) == source,
                 "a refusal that does not name its source: " + std::string(what));
  XAL_FUZZ_CHECK(says_something(what.substr(source.size())),
                 "a refusal that says nothing: " + std::string(what));
}

}  // namespace xal::fuzz
