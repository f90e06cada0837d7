// Injection logs (XAL_FAULT_LOG, JSON lines) as xal-fault reads them back
// to say what fired: summarize_log. A log is written by fault backends of
// other processes and may be cut short, mixed or damaged.
#include "fuzz_check.hpp"
#include "log_summary.hpp"
#include "memfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const xal::fuzz::MemFile file(data, size);
  const auto s = xal::faulttool::summarize_log(file.path());
  XAL_FUZZ_CHECK(s.found, "an existing log reads as missing");
  uint64_t lines = 1;
  for (size_t i = 0; i < size; ++i) lines += data[i] == '\n';
  XAL_FUZZ_CHECK(s.injections + s.bad_lines + s.start_failures.size() <= lines,
                 "more entries counted than lines");
  uint64_t fired = 0;
  for (const auto& [name, rule] : s.rules) {
    uint64_t by_op = 0, by_action = 0;
    for (const auto& [op, n] : rule.operations) by_op += n;
    for (const auto& [what, n] : rule.actions) by_action += n;
    XAL_FUZZ_CHECK(by_op == rule.fired && by_action == rule.fired,
                   "a rule's counts do not add up: " + name);
    fired += rule.fired;
  }
  XAL_FUZZ_CHECK(fired == s.injections, "rule counts do not add up to the injections");
  return 0;
}
