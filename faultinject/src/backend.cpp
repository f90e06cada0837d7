// The fault backend: start-up (plan, target, devices, log), shutdown and
// the plans loaded at run time.
#include "backend.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "profiles.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

std::string config(const xal_backend_services_t* s, const char* key) {
  if (s == nullptr || s->get_config == nullptr) return {};
  const char* v = s->get_config(key);
  return v != nullptr ? std::string(v) : std::string();
}

// The detail load_backend recorded for this thread (dlerror text, ...),
// read through libxal's xal_last_error when the process has it.
std::string load_failure_reason(xal_status_t status) {
  using LastError = xal_status_t (*)(xal_error_info_t*);
  auto* fn = reinterpret_cast<LastError>(::dlsym(RTLD_DEFAULT, "xal_last_error"));
  if (fn != nullptr) {
    xal_error_info_t info{};
    info.struct_size = sizeof info;
    if (fn(&info) == XAL_SUCCESS && info.status == status &&
        info.message[0] != '\0') {
      info.message[sizeof info.message - 1] = '\0';
      return info.message;
    }
  }
  return status_to_name(status);
}

}  // namespace

FaultBackend::FaultBackend(const xal_backend_services_t* s) : services(s) {}

FaultBackend::~FaultBackend() { stop(); }

xal_status_t FaultBackend::report(xal_status_t status,
                                  const std::string& message,
                                  int64_t vendor_code,
                                  const std::string& vendor) {
  if (services != nullptr && services->set_error != nullptr) {
    services->set_error(status, vendor_code,
                        vendor.empty() ? nullptr : vendor.c_str(),
                        message.c_str());
  }
  return status;
}

xal_status_t FaultEntry::fail(const xal::support::Caught& caught) const {
  using Kind = xal::support::Caught::Kind;
  const std::string entry = caught.operation != nullptr ? caught.operation : "an entry";
  switch (caught.kind) {
    case Kind::kOutOfHostMemory:
      return backend->report(caught.status, "fault: out of host memory in " + entry);
    case Kind::kUnknown:
      return backend->report(caught.status, "fault: unknown exception in " + entry);
    case Kind::kStatusError:
    case Kind::kException:
      break;
  }
  return backend->report(caught.status, "fault: " + entry + ": " + caught.what);
}

xal_status_t FaultBackend::start(const char* argument) {
  xal_status_t status = XAL_SUCCESS;
  try {
    status = set_up(argument);
  } catch (const std::bad_alloc&) {
    status = refuse_start(XAL_ERROR_OUT_OF_HOST_MEMORY,
                          "fault: out of host memory at start");
  } catch (const std::exception& e) {
    status = refuse_start(XAL_ERROR_INTERNAL,
                          std::string("fault: start failed: ") + e.what());
  }
  if (status != XAL_SUCCESS) log_start_failure(status);
  return status;
}

xal_status_t FaultBackend::refuse_start(xal_status_t status,
                                        const std::string& message) {
  start_error_ = message;
  return report(status, message);
}

xal_status_t FaultBackend::refuse_to_wrap_itself(const std::string& name) {
  return refuse_start(XAL_ERROR_BACKEND_UNAVAILABLE,
                      "fault: target backend '" + name +
                          "' could not be loaded: the fault backend cannot "
                          "wrap itself");
}

void FaultBackend::log_start_failure(xal_status_t status) const {
  const std::string path = config(services, "XAL_FAULT_LOG");
  if (path.empty()) return;
  FaultLog failure_log;
  std::string ignored;  // an unwritable log leaves nothing to tell it to
  if (!failure_log.open(path, &ignored)) return;
  failure_log.write_start_failure(
      status_to_name(status),
      start_error_.empty() ? status_to_name(status) : start_error_);
}

xal_status_t FaultBackend::set_up(const char* argument) {
  // The plan of the environment: XAL_FAULT_PLAN (a JSON file), then the
  // rules of XAL_FAULTS appended.
  Plan plan;
  const std::string plan_path = config(services, "XAL_FAULT_PLAN");
  const std::string compact = config(services, "XAL_FAULTS");
  try {
    if (!plan_path.empty()) plan = parse_plan_file(plan_path);
    if (!compact.empty()) {
      Plan more = parse_plan_compact(compact, "XAL_FAULTS", plan.rules.size());
      for (auto& r : more.rules) plan.rules.push_back(std::move(r));
      if (plan.target.empty()) plan.target = more.target;
      if (plan_path.empty()) {
        plan.seed = more.seed;
        plan.timeout_ms = more.timeout_ms;
      }
    }
  } catch (const PlanError& e) {
    return refuse_start(XAL_ERROR_INVALID_ARGUMENT,
                        std::string("fault: plan refused: ") + e.what());
  }
  const std::string seed = config(services, "XAL_FAULT_SEED");
  if (!seed.empty()) {
    const auto v = common::parse_uint(seed);
    if (!v) {
      return refuse_start(XAL_ERROR_INVALID_ARGUMENT,
                          "fault: XAL_FAULT_SEED '" + seed + "' is not an integer");
    }
    seed_override = *v;
  }
  const std::string timeout = config(services, "XAL_COMM_TIMEOUT_MS");
  if (!timeout.empty()) {
    const auto v = common::parse_uint(timeout);
    if (!v || *v == 0 || *v > 365ull * 24 * 3600 * 1000) {
      return refuse_start(XAL_ERROR_INVALID_ARGUMENT,
                          "fault: XAL_COMM_TIMEOUT_MS '" + timeout +
                              "' is not a positive integer of at most a year");
    }
    default_timeout_ms = *v;
  }

  target_name = argument != nullptr && *argument != '\0' ? argument
                : !plan.target.empty()                   ? plan.target
                                                         : "mock";
  if (target_name == "fault" || common::starts_with(target_name, "fault:")) {
    return refuse_to_wrap_itself(target_name);
  }
  if (services == nullptr || services->load_backend == nullptr) {
    return refuse_start(XAL_ERROR_BACKEND_UNAVAILABLE,
                        "fault: target backend '" + target_name +
                            "' could not be loaded: the core offers no "
                            "load_backend service");
  }
  const xal_backend_table_t* table = nullptr;
  char path[1024] = {0};
  const xal_status_t ls =
      services->load_backend(target_name.c_str(), &table, path, sizeof path);
  if (ls != XAL_SUCCESS || table == nullptr) {
    // The core writes its reason into `path`; an older core only sets the
    // detail, read back through xal_last_error where it can be.
    path[sizeof path - 1] = '\0';
    const std::string reason =
        path[0] != '\0' ? std::string(path)
                        : load_failure_reason(ls != XAL_SUCCESS ? ls : XAL_ERROR_INTERNAL);
    return refuse_start(XAL_ERROR_BACKEND_UNAVAILABLE,
                        "fault: target backend '" + target_name + "' could not be loaded: " + reason);
  }
  // The same refusal for a path to this plugin (or to a copy of it): its
  // table names it.
  if (table->name != nullptr && std::strcmp(table->name, "fault") == 0) {
    return refuse_to_wrap_itself(target_name);
  }
  if (table->struct_size < XAL_BACKEND_TABLE_MIN_SIZE) {
    return refuse_start(XAL_ERROR_ABI_MISMATCH,
                        "fault: target backend '" + target_name +
                            "' has a table too small for this ABI");
  }
  std::memcpy(&t, table, std::min(table->struct_size, sizeof t));
  t.struct_size = sizeof t;

  xal_backend_init_args_t args{};
  args.struct_size = sizeof args;
  args.services = services;
  args.argument = nullptr;
  const xal_status_t is = t.init(&args, &target);
  if (is != XAL_SUCCESS) {
    target = nullptr;
    start_error_ = load_failure_reason(is);
    return is;  // the target's own error detail stays
  }
  display_name = "fault(" + target_name + ")";
  if (t.describe != nullptr) {
    xal_backend_describe_t d{};
    d.struct_size = sizeof d;
    if (t.describe(target, &d) == XAL_SUCCESS) {
      d.name[sizeof d.name - 1] = '\0';
      if (d.name[0] != '\0') display_name = std::string("fault(") + d.name + ")";
      target_flags = d.flags;
    }
  }
  uint32_t count = 0;
  xal_status_t s = t.device_count(target, &count);
  for (uint32_t i = 0; s == XAL_SUCCESS && i < count; ++i) {
    auto dev = std::make_unique<FaultDevice>();
    dev->backend = this;
    dev->index = i;
    s = t.device_get(target, i, &dev->target);
    devices.push_back(std::move(dev));
  }
  if (s != XAL_SUCCESS) return s;
  try {
    check_plan_devices(plan, count,
                       plan_path.empty() ? "XAL_FAULTS" : plan_path);
  } catch (const PlanError& e) {
    return refuse_start(XAL_ERROR_INVALID_ARGUMENT,
                        std::string("fault: plan refused: ") + e.what());
  }
  const std::string log_path = config(services, "XAL_FAULT_LOG");
  if (!log_path.empty()) {
    std::string why;
    if (!log.open(log_path, &why)) {
      return refuse_start(XAL_ERROR_INVALID_ARGUMENT, "fault: " + why);
    }
  }
  engine.load(plan, false, seed_override.value_or(plan.seed));
  return XAL_SUCCESS;
}

void FaultBackend::stop() {
  end_hangs();
  if (target != nullptr) free_staging(true);
  if (target != nullptr && t.shutdown != nullptr) t.shutdown(target);
  target = nullptr;
  comms.clear();
  modules.clear();
  events.clear();
  streams.clear();
  std::lock_guard lock(host_mutex);
  for (auto& [ptr, bytes] : own_host) std::free(ptr);
  own_host.clear();
}

void FaultBackend::abort_comm(CommGroup& group) {
  {
    std::lock_guard lock(hang_mutex_);
    group.aborts.fetch_add(1, std::memory_order_release);
  }
  hang_cv_.notify_all();
}

void FaultBackend::end_hangs() {
  std::unique_lock lock(hang_mutex_);
  stopping_ = true;
  hang_cv_.notify_all();
  hang_cv_.wait(lock, [&] { return active_hangs_ == 0; });
}

xal_status_t FaultBackend::load_plan(const char* text, uint32_t flags) {
  if (text == nullptr) {
    return report(XAL_ERROR_INVALID_ARGUMENT, "fault: the plan is NULL");
  }
  if ((flags & ~XAL_FAULT_PLAN_APPEND) != 0) {
    return report(XAL_ERROR_INVALID_ARGUMENT,
                  "fault: unknown plan flags " + std::to_string(flags));
  }
  const bool append = (flags & XAL_FAULT_PLAN_APPEND) != 0;
  // One plan at a time: the default names of appended rules ("rule<N>")
  // count the rules already loaded.
  std::lock_guard lock(plan_mutex);
  try {
    const size_t first = append ? engine.rule_count() : 0;
    Plan plan = parse_plan_any(text, first);
    check_plan_devices(plan, static_cast<uint32_t>(devices.size()),
                       "the plan");
    engine.load(plan, append, seed_override.value_or(plan.seed));
  } catch (const PlanError& e) {
    return report(XAL_ERROR_INVALID_ARGUMENT,
                  std::string("fault: plan refused: ") + e.what());
  }
  return XAL_SUCCESS;
}

}  // namespace xal::fault
