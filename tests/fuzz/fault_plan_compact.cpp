// Fault plans in the compact XAL_FAULTS syntax: parse_plan_compact.
#include "fault_plan_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr std::string_view kSource = "XAL_FAULTS";
  try {
    const auto plan =
        xal::fault::parse_plan_compact(xal::fuzz::as_text(data, size), kSource);
    xal::fuzz::check_plan(plan);
  } catch (const xal::fault::PlanError& e) {
    xal::fuzz::check_refusal(e, kSource);
  }
  return 0;
}
