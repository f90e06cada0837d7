// The compact plan syntax of XAL_FAULTS (grammar in docs/FAULTS.md):
//   plan    := item { ';' item }
//   item    := setting | rule
//   setting := ("seed" | "profile" | "target" | "timeout") '=' value
//   rule    := glob '=' term { term }
//   term    := NUMBER '%' | NUMBER '*' | word [ '(' arg ')' ]
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "plan.hpp"
#include "rule_check.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  throw PlanError(context + ": " + what);
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         c == '.' || c == '-';
}

uint64_t need_uint(std::string_view arg, const std::string& what,
                   const std::string& ctx) {
  const auto v = common::parse_uint(common::trim(arg));
  if (!v) fail(ctx, what + " expects a non-negative integer, got '" +
                        std::string(arg) + "'");
  return *v;
}

uint64_t need_bytes(std::string_view arg, const std::string& what,
                    const std::string& ctx) {
  std::string why;
  const auto v = common::parse_bytes(common::trim(arg), &why);
  if (!v) fail(ctx, what + " expects a byte size, got '" + std::string(arg) +
                        "': " + why);
  return *v;
}

// A vendor code: [+-] then decimal digits, or 0x and hexadecimal digits
// (a leading 0 is decimal, not octal), within int64_t.
int64_t need_code(std::string_view arg, const std::string& ctx) {
  const std::string a(common::trim(arg));
  const size_t sign = !a.empty() && (a[0] == '-' || a[0] == '+') ? 1 : 0;
  const bool hex = a.size() > sign + 1 && a[sign] == '0' &&
                   (a[sign + 1] == 'x' || a[sign + 1] == 'X');
  // strtoll would skip spaces and take a second sign after ours.
  const size_t first = sign + (hex ? 2 : 0);
  if (a.size() <= first ||
      !std::isxdigit(static_cast<unsigned char>(a[first])) ||
      (!hex && !std::isdigit(static_cast<unsigned char>(a[first])))) {
    fail(ctx, "code() expects a decimal or 0x integer, got '" + a + "'");
  }
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(a.c_str(), &end, hex ? 16 : 10);
  if (end == nullptr || *end != '\0') {
    fail(ctx, "code() expects a decimal or 0x integer, got '" + a + "'");
  }
  if (errno == ERANGE) {  // strtoll clamps to the nearest limit
    fail(ctx, "code(" + a + ") is outside the 64-bit signed range");
  }
  return v;
}

void set_action(RuleInput& in, Action a, const std::string& ctx) {
  if (in.action_set || !in.error_name.empty()) {
    fail(ctx, "more than one action in one rule");
  }
  in.rule.action = a;
  in.action_set = true;
}

// Applies one word term (with its argument, or without).
void apply_word(RuleInput& in, const std::string& word,
                const std::optional<std::string>& arg, const std::string& ctx) {
  Rule& r = in.rule;
  auto need_arg = [&]() -> const std::string& {
    if (!arg) fail(ctx, word + "() needs an argument");
    return *arg;
  };
  if (word == "nth") {
    r.nth = need_uint(need_arg(), "nth()", ctx);
    if (r.nth == 0) fail(ctx, "nth(0) can never fire (calls count from 1)");
  } else if (word == "every") {
    r.every = need_uint(need_arg(), "every()", ctx);
    if (r.every == 0) fail(ctx, "every(0) can never fire");
  } else if (word == "after") {
    r.after_ms = need_uint(need_arg(), "after()", ctx);
  } else if (word == "device") {
    const auto& a = need_arg();
    if (common::trim(a) == "*") {
      r.device = -1;
    } else {
      const uint64_t device = need_uint(a, "device()", ctx);
      if (device > std::numeric_limits<uint32_t>::max()) {
        fail(ctx, "device(" + std::string(common::trim(a)) + ") is out of range");
      }
      r.device = static_cast<int64_t>(device);
    }
  } else if (word == "min") {
    r.min_bytes = need_bytes(need_arg(), "min()", ctx);
    r.size_filter = true;
  } else if (word == "max") {
    r.max_bytes = need_bytes(need_arg(), "max()", ctx);
    r.size_filter = true;
  } else if (word == "name") {
    r.name = std::string(common::trim(need_arg()));
  } else if (word == "timeout") {
    r.timeout_ms = need_uint(need_arg(), "timeout()", ctx);
  } else if (word == "sticky" && !arg) {
    in.sticky = true;
  } else if (word == "transient" && !arg) {
    in.sticky = false;
  } else if (word == "code") {
    in.vendor_code = need_code(need_arg(), ctx);
  } else if (word == "delay") {
    set_action(in, Action::delay, ctx);
    r.delay_ms = need_uint(need_arg(), "delay()", ctx);
  } else if (word == "hang") {
    set_action(in, Action::hang, ctx);
    if (arg) r.timeout_ms = need_uint(*arg, "hang()", ctx);
  } else if (word == "bitflip") {
    set_action(in, Action::bitflip, ctx);
    if (arg) {
      const uint64_t bits = need_uint(*arg, "bitflip()", ctx);
      if (bits > 1u << 20) fail(ctx, "bitflip() of more than 1048576 bits");
      r.bits = static_cast<uint32_t>(bits);
    }
  } else if (word == "device_lost") {
    set_action(in, Action::device_lost, ctx);
    if (arg) in.error_name = std::string(common::trim(*arg));
  } else if (word == "async") {
    set_action(in, Action::async_error, ctx);
    in.error_name = std::string(common::trim(need_arg()));
  } else if (word == "abort" && !arg) {
    set_action(in, Action::abort_process, ctx);
  } else if (word == "error") {
    set_action(in, Action::error, ctx);
    in.error_name = std::string(common::trim(need_arg()));
  } else if (!arg) {
    // An error name: an xal status or a vendor error.
    if (in.action_set || !in.error_name.empty()) {
      fail(ctx, "more than one action in one rule ('" + word + "')");
    }
    in.error_name = word;
  } else {
    fail(ctx, "unknown term '" + word + "(...)'");
  }
}

Rule parse_rule(std::string_view item, size_t index, const Plan& plan,
                std::string_view source) {
  const auto eq = item.find('=');
  RuleInput in;
  in.rule.name = "rule" + std::to_string(index);
  in.rule.operation = std::string(common::trim(item.substr(0, eq)));
  const std::string_view terms = item.substr(eq + 1);
  // A name() term renames the rule; find it first for the messages.
  if (const auto n = terms.find("name("); n != std::string_view::npos) {
    const auto close = terms.find(')', n);
    if (close != std::string_view::npos) {
      in.rule.name = std::string(common::trim(terms.substr(n + 5, close - n - 5)));
    }
  }
  const std::string ctx = rule_context(source, index, in.rule.name) + " '" +
                          std::string(common::trim(item)) + "'";
  size_t i = 0;
  while (i < terms.size()) {
    const char c = terms[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '+') {
      ++i;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t j = i;
      while (j < terms.size() &&
             (std::isdigit(static_cast<unsigned char>(terms[j])) ||
              terms[j] == '.')) {
        ++j;
      }
      const std::string num(terms.substr(i, j - i));
      if (j >= terms.size() || (terms[j] != '%' && terms[j] != '*')) {
        fail(ctx, "number '" + num + "' must be followed by % or *");
      }
      char* end = nullptr;
      if (terms[j] == '%') {
        const double pct = std::strtod(num.c_str(), &end);
        if (end == nullptr || *end != '\0') fail(ctx, "bad percentage '" + num + "'");
        in.rule.probability = pct / 100.0;
      } else {
        const auto n = common::parse_uint(num);
        if (!n) fail(ctx, "count '" + num + "*' must be an integer");
        in.rule.count = *n;
      }
      i = j + 1;
      continue;
    }
    if (!word_char(c)) {
      fail(ctx, std::string("unexpected character '") + c + "' at offset " +
                    std::to_string(i));
    }
    size_t j = i;
    while (j < terms.size() && word_char(terms[j])) ++j;
    const std::string word(terms.substr(i, j - i));
    std::optional<std::string> arg;
    if (j < terms.size() && terms[j] == '(') {
      const auto close = terms.find(')', j);
      if (close == std::string_view::npos) fail(ctx, "missing ')' after " + word + "(");
      arg = std::string(terms.substr(j + 1, close - j - 1));
      j = close + 1;
    }
    apply_word(in, word, arg, ctx);
    i = j;
  }
  return finish_rule(std::move(in), plan.profile, ctx);
}

}  // namespace

Plan parse_plan_compact(std::string_view text, std::string_view source,
                        size_t first_index) {
  Plan plan;
  std::vector<std::string> rule_items;
  for (const auto& raw : common::split(text, ";\n")) {
    const auto item = common::trim(raw);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw PlanError(std::string(source) + ": '" + std::string(item) +
                      "' is not 'operation=terms' or a setting");
    }
    const auto key = common::trim(item.substr(0, eq));
    const auto value = std::string(common::trim(item.substr(eq + 1)));
    const std::string ctx = std::string(source) + ": setting '" +
                            std::string(item) + "'";
    if (key == "seed") {
      plan.seed = need_uint(value, "seed", ctx);
    } else if (key == "profile") {
      plan.profile = value;
    } else if (key == "target") {
      plan.target = value;
    } else if (key == "timeout") {
      plan.timeout_ms = need_uint(value, "timeout", ctx);
      if (plan.timeout_ms > 365ull * 24 * 3600 * 1000) fail(ctx, "timeout above one year");
    } else {
      rule_items.emplace_back(item);
    }
  }
  check_profile_name(plan.profile, source);
  size_t index = first_index;
  for (const auto& item : rule_items) {
    plan.rules.push_back(parse_rule(item, index++, plan, source));
  }
  return plan;
}

}  // namespace xal::fault
