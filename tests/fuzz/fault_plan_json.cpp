// Fault plans in JSON (XAL_FAULT_PLAN, xal-fault --plan): parse_plan_json.
#include "fault_plan_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr std::string_view kSource = "plan.json";
  try {
    const auto plan =
        xal::fault::parse_plan_json(xal::fuzz::as_text(data, size), kSource);
    xal::fuzz::check_plan(plan);
  } catch (const xal::fault::PlanError& e) {
    xal::fuzz::check_refusal(e, kSource);
  }
  return 0;
}
