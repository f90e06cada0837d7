// JSON plans: {"target": "mock", "seed": 1, "profile": "cuda",
//              "timeout_ms": 2000, "rules": [{...}, ...]}
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "plan.hpp"
#include "rule_check.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  throw PlanError(context + ": " + what);
}

uint64_t get_uint(const json& v, const char* key, const std::string& ctx) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    fail(ctx, std::string("\"") + key + "\" must not be negative");
  }
  fail(ctx, std::string("\"") + key + "\" must be a non-negative integer");
}

uint64_t get_bytes(const json& v, const char* key, const std::string& ctx) {
  if (v.is_string()) {
    std::string why;
    const auto b = common::parse_bytes(v.get<std::string>(), &why);
    if (!b) {
      fail(ctx, std::string("\"") + key + "\": bad byte size '" +
                    v.get<std::string>() + "': " + why);
    }
    return *b;
  }
  return get_uint(v, key, ctx);
}

std::string get_string(const json& v, const char* key, const std::string& ctx) {
  if (!v.is_string()) fail(ctx, std::string("\"") + key + "\" must be a string");
  return v.get<std::string>();
}

Action parse_action(const std::string& name, const std::string& ctx) {
  static constexpr Action kAll[] = {
      Action::error,       Action::delay,       Action::hang,
      Action::bitflip,     Action::device_lost, Action::async_error,
      Action::abort_process};
  for (Action a : kAll) {
    if (action_name(a) == name) return a;
  }
  fail(ctx, "unknown action '" + name +
                "' (error, delay, hang, bitflip, device_lost, async_error, "
                "abort)");
}

Rule parse_rule(const json& j, size_t index, const Plan& plan,
                std::string_view source) {
  std::string name = "rule" + std::to_string(index);
  if (j.is_object() && j.contains("name") && j["name"].is_string()) {
    name = j["name"].get<std::string>();
  }
  const std::string ctx = rule_context(source, index, name);
  if (!j.is_object()) fail(ctx, "a rule must be a JSON object");
  RuleInput in;
  Rule& r = in.rule;
  r.name = name;
  bool have_op = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "name") {
      r.name = get_string(v, "name", ctx);
    } else if (key == "operation" || key == "op") {
      r.operation = get_string(v, "operation", ctx);
      have_op = true;
    } else if (key == "device") {
      if (v.is_string() && v.get<std::string>() == "*") {
        r.device = -1;
      } else {
        const uint64_t device = get_uint(v, "device", ctx);
        if (device > std::numeric_limits<uint32_t>::max()) {
          fail(ctx, "\"device\" " + std::to_string(device) + " is out of range");
        }
        r.device = static_cast<int64_t>(device);
      }
    } else if (key == "nth") {
      r.nth = get_uint(v, "nth", ctx);
      if (r.nth == 0) fail(ctx, "nth 0 can never fire (calls count from 1)");
    } else if (key == "every") {
      r.every = get_uint(v, "every", ctx);
      if (r.every == 0) fail(ctx, "every 0 can never fire");
    } else if (key == "probability") {
      if (!v.is_number()) fail(ctx, "\"probability\" must be a number");
      r.probability = v.get<double>();
    } else if (key == "after_ms") {
      r.after_ms = get_uint(v, "after_ms", ctx);
    } else if (key == "count") {
      r.count = get_uint(v, "count", ctx);
    } else if (key == "min_bytes") {
      r.min_bytes = get_bytes(v, "min_bytes", ctx);
      r.size_filter = true;
    } else if (key == "max_bytes") {
      r.max_bytes = get_bytes(v, "max_bytes", ctx);
      r.size_filter = true;
    } else if (key == "action") {
      r.action = parse_action(get_string(v, "action", ctx), ctx);
      in.action_set = true;
    } else if (key == "error") {
      in.error_name = get_string(v, "error", ctx);
    } else if (key == "vendor_code") {
      if (!v.is_number_integer()) fail(ctx, "\"vendor_code\" must be an integer");
      if (v.is_number_unsigned() &&
          v.get<uint64_t>() >
              static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(ctx, "\"vendor_code\" " + std::to_string(v.get<uint64_t>()) +
                      " is outside the 64-bit signed range");
      }
      in.vendor_code = v.get<int64_t>();
    } else if (key == "vendor_name") {
      in.vendor_name = get_string(v, "vendor_name", ctx);
    } else if (key == "sticky") {
      if (!v.is_boolean()) fail(ctx, "\"sticky\" must be true or false");
      in.sticky = v.get<bool>();
    } else if (key == "delay_ms") {
      r.delay_ms = get_uint(v, "delay_ms", ctx);
    } else if (key == "timeout_ms") {
      r.timeout_ms = get_uint(v, "timeout_ms", ctx);
    } else if (key == "bits") {
      const uint64_t bits = get_uint(v, "bits", ctx);
      if (bits > 1u << 20) fail(ctx, "\"bits\" is too large (at most 1048576)");
      r.bits = static_cast<uint32_t>(bits);
    } else if (key == "enabled") {
      if (!v.is_boolean()) fail(ctx, "\"enabled\" must be true or false");
      r.enabled = v.get<bool>();
    } else {
      fail(ctx, "unknown key \"" + key + "\"");
    }
  }
  if (!have_op) fail(ctx, "missing \"operation\"");
  return finish_rule(std::move(in), plan.profile, ctx);
}

// A parser callback that refuses an object with the same key twice (JSON
// would keep the last one silently). Keeps one set of keys per open object.
json::parser_callback_t refuse_duplicate_keys(const std::string& src) {
  auto open = std::make_shared<std::vector<std::set<std::string>>>();
  return [open, src](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open->emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      open->pop_back();
    } else if (event == json::parse_event_t::key && !open->empty() &&
               !open->back().insert(parsed.get<std::string>()).second) {
      throw PlanError(src + ": duplicate key \"" + parsed.get<std::string>() +
                      "\"");
    }
    return true;
  };
}

}  // namespace

Plan parse_plan_json(std::string_view text, std::string_view source,
                     size_t first_index) {
  const std::string src(source);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), refuse_duplicate_keys(src));
  } catch (const json::parse_error& e) {
    throw PlanError(src + ": invalid JSON at byte " + std::to_string(e.byte) +
                    ": " + e.what());
  } catch (const json::exception& e) {  // a number out of range, say
    throw PlanError(src + ": invalid JSON: " + e.what());
  }
  if (!doc.is_object()) {
    throw PlanError(src + ": a plan must be a JSON object with \"rules\"");
  }
  Plan plan;
  for (const auto& [key, v] : doc.items()) {
    if (key == "target") {
      plan.target = get_string(v, "target", src);
    } else if (key == "seed") {
      plan.seed = get_uint(v, "seed", src);
    } else if (key == "profile") {
      plan.profile = get_string(v, "profile", src);
    } else if (key == "timeout_ms") {
      plan.timeout_ms = get_uint(v, "timeout_ms", src);
      if (plan.timeout_ms > 365ull * 24 * 3600 * 1000) {
        throw PlanError(src + ": \"timeout_ms\" above one year");
      }
    } else if (key == "rules") {
      if (!v.is_array()) throw PlanError(src + ": \"rules\" must be an array");
    } else if (key == "description" || key == "comment") {
      // free text
    } else {
      throw PlanError(src + ": unknown key \"" + key + "\"");
    }
  }
  check_profile_name(plan.profile, source);
  if (!doc.contains("rules")) throw PlanError(src + ": missing \"rules\"");
  size_t index = first_index;
  for (const auto& rule : doc["rules"]) {
    plan.rules.push_back(parse_rule(rule, index++, plan, source));
  }
  return plan;
}

Plan parse_plan_file(const std::string& path, size_t first_index) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PlanError(path + ": cannot open the plan file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw PlanError(path + ": cannot read the plan file");
  return parse_plan_json(text.str(), path, first_index);
}

Plan parse_plan_any(std::string_view text, size_t first_index) {
  const auto t = common::trim(text);
  if (!t.empty() && t.front() == '{') {
    return parse_plan_json(t, "<JSON plan>", first_index);
  }
  if (!t.empty() && t.find('=') == std::string_view::npos) {
    std::ifstream probe{std::string(t)};
    if (probe || t.ends_with(".json") || t.find('/') != std::string_view::npos) {
      return parse_plan_file(std::string(t), first_index);
    }
  }
  return parse_plan_compact(t, "<compact plan>", first_index);
}

void check_plan_devices(const Plan& plan, uint32_t device_count,
                        std::string_view source) {
  for (size_t i = 0; i < plan.rules.size(); ++i) {
    const Rule& r = plan.rules[i];
    if (r.device >= static_cast<int64_t>(device_count)) {
      throw PlanError(rule_context(source, i, r.name) + ": device " +
                      std::to_string(r.device) + " does not exist (" +
                      std::to_string(device_count) + " devices)");
    }
  }
}

}  // namespace xal::fault
