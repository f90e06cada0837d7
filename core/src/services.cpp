// The services table the core hands every plugin.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "error.hpp"
#include "loader.hpp"
#include "runtime.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

// The runtime being built by xal_init (plugins call services during init,
// before it is published).
Runtime* g_building = nullptr;

namespace {

Runtime* current() noexcept {
  Runtime* rt = runtime();
  return rt ? rt : g_building;
}

int log_level() {
  static const int level = [] {
    const char* v = std::getenv("XAL_LOG_LEVEL");
    if (!v || !*v) return XAL_LOG_WARNING;
    const std::string s = xal::common::to_lower(v);
    if (s == "error") return XAL_LOG_ERROR;
    if (s == "warning" || s == "warn") return XAL_LOG_WARNING;
    if (s == "info") return XAL_LOG_INFO;
    if (s == "debug") return XAL_LOG_DEBUG;
    if (auto n = xal::common::parse_uint(s)) return static_cast<int>(*n);
    std::fprintf(stderr,
                 "[xal:core] warning: XAL_LOG_LEVEL='%s' is not error, warning, info, debug "
                 "or a number; logging warnings and errors\n",
                 v);
    return XAL_LOG_WARNING;
  }();
  return level;
}

void svc_log(int level, const char* backend, const char* message) {
  if (level > log_level()) return;
  static const char* names[] = {"error", "warning", "info", "debug"};
  const char* lv = level >= 0 && level <= 3 ? names[level] : "debug";
  std::fprintf(stderr, "[xal:%s] %s: %s\n", backend ? backend : "core", lv,
               message ? message : "");
}

xal_status_t svc_load_backend(const char* name_or_path,
                              const xal_backend_table_t** out_table,
                              char* out_path, size_t path_capacity) {
  try {
    if (!name_or_path || !*name_or_path || !out_table)
      return backend_set_error(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                               "load_backend: name and out_table are required");
    Runtime* rt = current();
    if (!rt)
      return backend_set_error(XAL_ERROR_NOT_INITIALIZED, 0, nullptr,
                               "load_backend called outside xal_init");
    auto b = std::make_unique<Backend>();
    if (!open_plugin(name_or_path, rt->search_dirs, *b)) {
      const std::string reason = b->reason;
      const xal_status_t st = b->status;
      close_backend(*b);
      const std::string message = cat("cannot load backend '", name_or_path, "': ", reason);
      if (out_path && path_capacity) xal::common::copy_string(out_path, path_capacity, message);
      return backend_set_error(st, 0, nullptr, message.c_str());
    }
    *out_table = b->table.get();
    if (out_path && path_capacity)
      xal::common::copy_string(out_path, path_capacity, b->path);
    std::lock_guard lock(rt->extra_mu);
    rt->extra.push_back(std::move(b));
    return XAL_SUCCESS;
  } catch (const std::bad_alloc&) {
    return backend_set_error(XAL_ERROR_OUT_OF_HOST_MEMORY, 0, nullptr,
                             "out of host memory");
  } catch (...) {
    return backend_set_error(XAL_ERROR_INTERNAL, 0, nullptr,
                             "load_backend failed");
  }
}

const char* svc_get_config(const char* key) {
  try {
    if (!key) return nullptr;
    const char* v = std::getenv(key);
    if (!v) return nullptr;
    Runtime* rt = current();
    if (!rt) return v;
    std::lock_guard lock(rt->config_mu);
    auto [it, inserted] = rt->config.try_emplace(key, v);
    return it->second.c_str();
  } catch (...) {
    return nullptr;
  }
}

const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, &backend_set_error,
    &svc_log, &svc_load_backend, &svc_get_config};

}  // namespace

const xal_backend_services_t* services() { return &kServices; }

void log_message(int level, const char* message) {
  svc_log(level, "core", message);
}

}  // namespace xal::core
