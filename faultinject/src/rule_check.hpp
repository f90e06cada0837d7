// Shared by the JSON and the compact parsers: resolves a rule's operation
// glob and error name, and refuses rules that are malformed or can never
// fire.
#pragma once

#include <optional>
#include <string>

#include "plan.hpp"

namespace xal::fault {

// What a parser read for one rule before it is checked.
struct RuleInput {
  Rule rule;
  bool action_set = false;
  std::string error_name;  // as written: "OUT_OF_MEMORY", "cuda:CUDA_..."
  std::optional<int64_t> vendor_code;
  std::optional<std::string> vendor_name;
  std::optional<bool> sticky;
};

// "<source>: rule <index> ('<name>')"
std::string rule_context(std::string_view source, size_t index,
                         std::string_view name);

// Resolves and checks `input` into a Rule; throws PlanError prefixed with
// `context`. `profile` is the plan's default vendor profile ("" for none).
Rule finish_rule(RuleInput input, const std::string& profile,
                 const std::string& context);

// Checks a plan-level profile name; throws PlanError.
void check_profile_name(const std::string& profile, std::string_view source);

}  // namespace xal::fault
