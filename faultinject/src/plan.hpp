// Fault plans: rules that say which operation, device and call to hit and
// what to inject. Parsed from JSON or from the compact XAL_FAULTS syntax
// (docs/FAULTS.md); every malformed plan is refused with a PlanError that
// names the source, the rule and what is wrong.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ops.hpp"
#include "xal/xal.h"

namespace xal::fault {

enum class Action : uint8_t {
  error,
  delay,
  hang,
  bitflip,
  device_lost,
  async_error,
  abort_process
};

std::string_view action_name(Action action);

struct ErrorSpec {
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name;  // "" when the error is a plain xal status
  bool sticky = false;
};

inline constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

struct Rule {
  std::string name;
  std::string operation = "*";  // glob over op names
  std::bitset<kOpCount> ops;    // the operations the glob matches
  int64_t device = -1;          // -1: any device
  uint64_t nth = 0;             // 0: not set
  uint64_t every = 0;           // 0: not set
  double probability = 1.0;
  uint64_t after_ms = 0;
  uint64_t count = kUnlimited;  // at most this many injections
  uint64_t min_bytes = 0;
  uint64_t max_bytes = kUnlimited;
  bool size_filter = false;
  Action action = Action::error;
  ErrorSpec error;
  uint64_t delay_ms = 0;
  uint64_t timeout_ms = 0;  // hang: 0 = the plan's, the communicator's, ...
  uint32_t bits = 1;        // bitflip
  bool enabled = true;
};

struct Plan {
  std::string target;   // "" when the plan does not name one
  uint64_t seed = 0;
  std::string profile;  // default vendor profile for plain statuses
  uint64_t timeout_ms = 0;
  std::vector<Rule> rules;
};

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `source` names the input in messages: a file path, "XAL_FAULTS", ...
// `first_index` numbers the rules (for default names "rule<N>").
Plan parse_plan_json(std::string_view text, std::string_view source,
                     size_t first_index = 0);
Plan parse_plan_compact(std::string_view text, std::string_view source,
                        size_t first_index = 0);
// Reads and parses a JSON plan file.
Plan parse_plan_file(const std::string& path, size_t first_index = 0);
// JSON text (starts with '{'), a path to an existing file, or compact text.
Plan parse_plan_any(std::string_view text, size_t first_index = 0);

// Checks that every rule can fire on a backend with `device_count` devices.
// Throws PlanError.
void check_plan_devices(const Plan& plan, uint32_t device_count,
                        std::string_view source);

}  // namespace xal::fault
