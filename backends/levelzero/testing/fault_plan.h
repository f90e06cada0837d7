// Error injection for the simulated Level Zero driver, from XALSIM_ZE_FAIL:
//   "zeMemAllocDevice=0x70000003;zeEventHostSynchronize=0x70000001"  every call
//   "zeMemAllocDevice=0x70000003@3"  only the 3rd call fails
//   "zeMemAllocDevice=0x70000003@3+" the 3rd call and every later one
// The variable is re-read whenever its text changes (call counts restart).
#pragma once

#include <map>
#include <string>

namespace xalsim {

class FaultPlan {
 public:
  // The code to return for this call of `function`, or 0. Not thread-safe:
  // the caller holds the simulator's lock.
  int next(const char* env_name, const std::string& function);

 private:
  struct Rule {
    int code = 0;
    unsigned long nth = 0;  // 0: every call
    bool onward = false;
  };
  void parse(const std::string& text);

  std::string text_;
  std::map<std::string, Rule> rules_;
  std::map<std::string, unsigned long> calls_;
};

}  // namespace xalsim
