#include "rule_check.hpp"

#include <cmath>

#include "profiles.hpp"

namespace xal::fault {
namespace {

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  throw PlanError(context + ": " + what);
}

std::string known_profiles() {
  std::string out;
  for (const auto& p : vendor_profiles()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

// Resolves an error name into `spec` (status, vendor code, vendor name and
// the profile's stickiness). Returns false when the name is unknown.
bool resolve_error(std::string_view name, const std::string& profile,
                   ErrorSpec* spec, std::string* why) {
  const auto colon = name.find(':');
  if (colon != std::string_view::npos) {
    const auto vendor = name.substr(0, colon);
    const auto* p = find_profile(vendor);
    if (p == nullptr) {
      *why = "unknown vendor profile '" + std::string(vendor) +
             "' (known: " + known_profiles() + ")";
      return false;
    }
    const auto* e = find_vendor_error(*p, name.substr(colon + 1));
    if (e == nullptr) {
      *why = "unknown " + std::string(vendor) + " error '" +
             std::string(name.substr(colon + 1)) + "'";
      return false;
    }
    *spec = ErrorSpec{e->status, e->code, std::string(e->name), e->sticky};
    return true;
  }
  const xal_status_t status = status_from_name(name);
  if (status != XAL_SUCCESS) {
    spec->status = status;
    spec->sticky =
        status == XAL_ERROR_DEVICE_LOST || status == XAL_ERROR_HARDWARE;
    spec->vendor_code = 0;
    spec->vendor_name.clear();
    if (!profile.empty()) {
      if (const auto* p = find_profile(profile)) {
        if (const auto* e = find_vendor_error_for_status(*p, status)) {
          spec->vendor_code = e->code;
          spec->vendor_name = std::string(e->name);
        }
      }
    }
    return true;
  }
  // A bare vendor name: the plan's profile first, then every profile.
  if (const auto* p = find_profile(profile)) {
    if (const auto* e = find_vendor_error(*p, name)) {
      *spec = ErrorSpec{e->status, e->code, std::string(e->name), e->sticky};
      return true;
    }
  }
  for (const auto& p : vendor_profiles()) {
    if (const auto* e = find_vendor_error(p, name)) {
      *spec = ErrorSpec{e->status, e->code, std::string(e->name), e->sticky};
      return true;
    }
  }
  *why = "unknown error name '" + std::string(name) +
         "' (an xal status such as OUT_OF_MEMORY, or a vendor error such as "
         "cuda:CUDA_ERROR_ILLEGAL_ADDRESS)";
  return false;
}

}  // namespace

std::string rule_context(std::string_view source, size_t index,
                         std::string_view name) {
  return std::string(source) + ": rule " + std::to_string(index) + " ('" +
         std::string(name) + "')";
}

void check_profile_name(const std::string& profile, std::string_view source) {
  if (!profile.empty() && find_profile(profile) == nullptr) {
    throw PlanError(std::string(source) + ": unknown vendor profile '" +
                    profile + "' (known: " + known_profiles() + ")");
  }
}

Rule finish_rule(RuleInput input, const std::string& profile,
                 const std::string& context) {
  Rule& r = input.rule;
  if (r.operation.empty()) fail(context, "the operation is empty");
  r.ops.reset();
  for (size_t i = 0; i < kOpCount; ++i) {
    if (op_matches(r.operation, static_cast<Op>(i))) r.ops.set(i);
  }
  if (r.ops.none()) {
    fail(context, "unknown operation '" + r.operation +
                      "': not a plugin table entry (mem_alloc, memcpy_htod, "
                      "allreduce, ...) and not a glob matching one");
  }
  if (!input.action_set) {
    if (input.error_name.empty()) fail(context, "no action given");
    r.action = Action::error;
  }
  if (!(r.probability >= 0.0 && r.probability <= 1.0)) {
    fail(context, "probability " + std::to_string(r.probability) +
                      " is outside [0, 1]");
  }
  if (r.probability == 0.0) fail(context, "probability 0 can never fire");
  if (r.count == 0) fail(context, "count 0 can never fire");
  if (r.nth != 0 && r.every != 0) {
    fail(context, "nth and every cannot be combined");
  }
  if (r.size_filter && r.min_bytes > r.max_bytes) {
    fail(context, "min_bytes " + std::to_string(r.min_bytes) +
                      " > max_bytes " + std::to_string(r.max_bytes) +
                      " can never fire");
  }
  if (r.size_filter) {
    bool sized = false;
    for (size_t i = 0; i < kOpCount; ++i) {
      if (r.ops.test(i) && op_has_size(static_cast<Op>(i))) sized = true;
    }
    if (!sized) {
      fail(context, "a size filter on '" + r.operation +
                        "', which carries no byte size, can never fire");
    }
  }
  if (r.device < -1) fail(context, "device must be an index >= 0 or \"*\"");

  const bool needs_error =
      r.action == Action::error || r.action == Action::async_error;
  if (needs_error && input.error_name.empty()) {
    fail(context, std::string(action_name(r.action)) + " needs an error name");
  }
  if (!input.error_name.empty()) {
    std::string why;
    if (!resolve_error(input.error_name, profile, &r.error, &why)) {
      fail(context, why);
    }
  } else if (r.action == Action::device_lost) {
    resolve_error("DEVICE_LOST", profile, &r.error, nullptr);
  } else if (r.action == Action::hang) {
    resolve_error("TIMEOUT", profile, &r.error, nullptr);
  }
  if (r.action == Action::device_lost) {
    if (r.error.status != XAL_ERROR_DEVICE_LOST) {
      fail(context, "device_lost needs a DEVICE_LOST error, not '" +
                        input.error_name + "'");
    }
    r.error.sticky = true;
  }
  if (needs_error && r.error.status == XAL_SUCCESS) {
    fail(context, "the error must be an error status");
  }
  if (input.vendor_code) r.error.vendor_code = *input.vendor_code;
  if (input.vendor_name) r.error.vendor_name = *input.vendor_name;
  if (input.sticky) {
    // A lost device stays lost until xal_device_reset: "sticky": false
    // (transient) would make it a plain error, which the plan did not ask for.
    if (r.action == Action::device_lost && !*input.sticky) {
      fail(context, "device_lost is always sticky (the device stays lost until "
                    "xal_device_reset); drop \"sticky\": false / 'transient', or use an "
                    "error action");
    }
    r.error.sticky = *input.sticky;
  }
  if (r.action == Action::bitflip) {
    if (r.bits == 0) fail(context, "bitflip of 0 bits can never fire");
    bool output = false;
    for (size_t i = 0; i < kOpCount; ++i) {
      if (r.ops.test(i) && op_has_output(static_cast<Op>(i))) output = true;
    }
    if (!output) {
      fail(context, "bitflip on '" + r.operation +
                        "' can never fire: it writes no buffer (use a copy, "
                        "memset or collective)");
    }
  }
  // Times beyond a year would overflow the clocks' arithmetic.
  constexpr uint64_t kMaxMs = 365ull * 24 * 3600 * 1000;
  if (r.after_ms > kMaxMs || r.delay_ms > kMaxMs || r.timeout_ms > kMaxMs) {
    fail(context, "a time above one year (" + std::to_string(kMaxMs) +
                      " ms) is not accepted");
  }
  if (r.action == Action::delay && r.delay_ms == 0) {
    fail(context, "delay needs a positive number of milliseconds");
  }
  return r;
}

std::string_view action_name(Action action) {
  switch (action) {
    case Action::error: return "error";
    case Action::delay: return "delay";
    case Action::hang: return "hang";
    case Action::bitflip: return "bitflip";
    case Action::device_lost: return "device_lost";
    case Action::async_error: return "async_error";
    case Action::abort_process: return "abort";
  }
  return "unknown";
}

}  // namespace xal::fault
