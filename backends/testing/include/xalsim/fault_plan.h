// Error injection for the simulated drivers (HIP, Level Zero), from an
// environment variable such as XALSIM_HIP_FAIL or XALSIM_ZE_FAIL:
//   "hipMalloc=2;hipStreamSynchronize=700"   every call of the function fails
//   "zeMemAllocDevice=0x70000003@3"           only the 3rd call fails
//   "hipMalloc=2@3+"                          the 3rd call and every later one
// Codes are read with strtol base 0 (decimal, 0x hex). The variable is
// re-read whenever its text changes (call counts restart).
#pragma once

#include <map>
#include <string>

namespace xalsim {

class FaultPlan {
 public:
  // The code to return for this call of `function`, or 0, from the rules in
  // the environment variable `env_name`. Not thread-safe: the caller holds
  // the simulator's lock.
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
