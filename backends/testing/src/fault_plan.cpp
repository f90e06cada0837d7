#include "xalsim/fault_plan.h"

#include <cstdlib>

namespace xalsim {

void FaultPlan::parse(const std::string& text) {
  rules_.clear();
  calls_.clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t equals = item.find('=');
    if (equals != std::string::npos && equals > 0) {
      Rule rule;
      const std::string value = item.substr(equals + 1);
      rule.code = static_cast<int>(std::strtol(value.c_str(), nullptr, 0));
      const size_t at = value.find('@');
      if (at != std::string::npos) {
        rule.nth = std::strtoul(value.c_str() + at + 1, nullptr, 10);
        rule.onward = value.back() == '+';
      }
      rules_[item.substr(0, equals)] = rule;
    }
    start = end + 1;
  }
}

int FaultPlan::next(const char* env_name, const std::string& function) {
  const char* env = std::getenv(env_name);
  const std::string text = env != nullptr ? env : "";
  if (text != text_) {
    text_ = text;
    parse(text);
  }
  auto found = rules_.find(function);
  if (found == rules_.end()) return 0;
  const unsigned long call = ++calls_[function];
  const Rule& rule = found->second;
  if (rule.nth == 0) return rule.code;
  if (call == rule.nth || (rule.onward && call > rule.nth)) return rule.code;
  return 0;
}

}  // namespace xalsim
