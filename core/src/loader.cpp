// Plugin loader: opening a plugin, checking its table, starting it.
#include "loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "error.hpp"
#include "runtime.hpp"
#include "table_trace.hpp"
#include "xal/xal_backend.h"
#include "xal_common/strings.hpp"

namespace xal::core {

namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string version_string(uint32_t v) {
  return cat(XAL_ABI_MAJOR(v), ".", XAL_ABI_MINOR(v));
}

// The entry list (XAL_BACKEND_ENTRIES) as data, checked against the struct.
struct EntryInfo {
  const char* name;
  size_t offset;
  int presence;
  uint32_t minor;
};
#define XAL_CORE_ENTRY_INFO(name, presence, minor) \
  EntryInfo{#name, offsetof(xal_backend_table_t, name), presence, minor},
constexpr EntryInfo kEntries[] = {XAL_BACKEND_ENTRIES(XAL_CORE_ENTRY_INFO)};
#undef XAL_CORE_ENTRY_INFO

// Every member after `version` is listed once, in order, with minors that
// never go down and none past this header's minor.
constexpr bool entries_match_struct() {
  size_t at = offsetof(xal_backend_table_t, version) + sizeof(const char*);
  uint32_t minor = 0;
  for (const EntryInfo& e : kEntries) {
    if (e.offset != at || e.minor < minor || e.minor > XAL_ABI_VERSION_MINOR)
      return false;
    if (e.minor == 0 && at + sizeof(void*) > XAL_BACKEND_TABLE_SIZE_1_0) return false;
    minor = e.minor;
    at += sizeof(void*);
  }
  return at == sizeof(xal_backend_table_t);
}
static_assert(entries_match_struct(),
              "XAL_BACKEND_ENTRIES and xal_backend_table_t disagree: list every "
              "member after `version` once, in order, with its minor");

// Entries that come in pairs: a table with the first needs the second.
constexpr std::pair<const char*, const char*> kPairs[] = {
    {"mem_import", "mem_import_release"},
    {"mem_ipc_open", "mem_ipc_close"},
};

bool entry_set(const xal_backend_table_t& t, const char* name) {
  for (const EntryInfo& e : kEntries) {
    if (std::strcmp(e.name, name) != 0) continue;
    const void* slot = reinterpret_cast<const char*>(&t) + e.offset;
    const void* value = nullptr;
    std::memcpy(&value, slot, sizeof value);
    return value != nullptr;
  }
  return false;
}

// Why a table cannot be used: a required entry left NULL, or one of a pair
// without the other; NULL when it can.
const char* missing_entry(const xal_backend_table_t& t) {
  static thread_local std::string reason;
  for (const EntryInfo& e : kEntries) {
    if (e.presence == XAL_ENTRY_REQUIRED && !entry_set(t, e.name)) {
      reason = cat("required table entry ", e.name, " is NULL");
      return reason.c_str();
    }
  }
  for (const auto& [first, second] : kPairs) {
    if (entry_set(t, first) && !entry_set(t, second)) {
      reason = cat("table entry ", first, " is set but ", second, " is NULL");
      return reason.c_str();
    }
  }
  return nullptr;
}

}  // namespace

bool open_plugin(const std::string& plugin,
                 const std::vector<std::string>& dirs, Backend& b) {
  b.state = XAL_BACKEND_STATE_FAILED;
  b.name = plugin_name_of_file(plugin);
  b.short_name = b.name;
  std::string path;
  if (plugin.find('/') != std::string::npos) {
    if (plugin[0] != '/') {
      b.path = plugin;
      b.status = XAL_ERROR_INVALID_ARGUMENT;
      b.reason = cat("plugin path '", plugin,
                     "' is relative; give an absolute path");
      return false;
    }
    path = plugin;
  } else {
    const std::string file = "libxal_backend_" + plugin + ".so";
    for (const auto& d : dirs)
      if (is_file(d + "/" + file)) {
        path = d + "/" + file;
        break;
      }
    if (path.empty()) {
      std::string where;
      for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
      b.status = XAL_ERROR_BACKEND_UNAVAILABLE;
      b.reason = cat(file, " not found in ",
                     where.empty() ? "(no plugin folder)" : where,
                     " (set XAL_BACKEND_PATH)");
      b.state = XAL_BACKEND_STATE_UNAVAILABLE;
      return false;
    }
  }
  b.path = path;
  dlerror();
  // RTLD_NODELETE: a plugin stays mapped after xal_shutdown. Runtimes that a
  // plugin pulls in (oneTBB, vendor drivers) keep worker threads alive past
  // their last use; unmapping their code under those threads would crash.
  void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    const char* e = dlerror();
    b.status = XAL_ERROR_BACKEND_UNAVAILABLE;
    b.reason = cat("dlopen failed: ", e ? e : "unknown error");
    return false;
  }
  b.dl = dl;
  dlerror();
  void* sym = dlsym(dl, XAL_BACKEND_ENTRY_SYMBOL);
  if (!sym) {
    b.status = XAL_ERROR_BACKEND_UNAVAILABLE;
    b.reason = cat("missing symbol ", XAL_BACKEND_ENTRY_SYMBOL, " in ", path);
    return false;
  }
  auto get = reinterpret_cast<xal_backend_get_fn>(sym);
  clear_pending();
  const xal_backend_table_t* t = nullptr;
  try {
    t = get(XAL_ABI_VERSION);
  } catch (...) {
    b.status = XAL_ERROR_INTERNAL;
    b.reason = cat(XAL_BACKEND_ENTRY_SYMBOL, " threw an exception");
    return false;
  }
  if (!t) {
    b.status = XAL_ERROR_ABI_MISMATCH;
    b.reason = cat(XAL_BACKEND_ENTRY_SYMBOL, " returned no table for ABI ",
                   version_string(XAL_ABI_VERSION));
    return false;
  }
  if (t->struct_size >= offsetof(xal_backend_table_t, version) + sizeof(char*)) {
    if (t->name && *t->name) b.short_name = b.name = t->name;
    if (t->version) b.version = t->version;
  }
  b.abi_version = (t->abi_major << 16) | (t->abi_minor & 0xffffu);
  if (t->abi_major != XAL_ABI_VERSION_MAJOR) {
    b.status = XAL_ERROR_ABI_MISMATCH;
    b.reason = cat("plugin built for ABI ", t->abi_major, ".", t->abi_minor,
                   ", libxal is ", version_string(XAL_ABI_VERSION));
    return false;
  }
  if (t->struct_size < XAL_BACKEND_TABLE_MIN_SIZE) {
    b.status = XAL_ERROR_ABI_MISMATCH;
    b.reason = cat("plugin table too small: ", t->struct_size,
                   " bytes, at least ", XAL_BACKEND_TABLE_MIN_SIZE, " needed");
    return false;
  }
  b.table = std::make_unique<xal_backend_table_t>();
  std::memset(b.table.get(), 0, sizeof(xal_backend_table_t));
  std::memcpy(b.table.get(), t, std::min(t->struct_size, sizeof(xal_backend_table_t)));
  b.table->struct_size = sizeof(xal_backend_table_t);
  const xal_backend_table_t& tb = *b.table;
  if (const char* missing = missing_entry(tb)) {
    b.status = XAL_ERROR_ABI_MISMATCH;
    b.reason = missing;
    b.table.reset();
    return false;
  }
  if (table_trace_wanted(b.short_name)) *b.table = table_trace_wrap(tb, b.short_name);
  return true;
}

bool start_backend(Backend& b) {
  xal_backend_init_args_t args{};
  args.struct_size = sizeof args;
  args.services = services();
  args.argument = b.argument.empty() ? nullptr : b.argument.c_str();
  clear_pending();
  xal_backend_t* inst = nullptr;
  xal_status_t s;
  try {
    s = b.table->init(&args, &inst);
  } catch (...) {
    b.status = XAL_ERROR_INTERNAL;
    b.state = XAL_BACKEND_STATE_FAILED;
    b.reason = "init threw an exception (plugins must not throw)";
    return false;
  }
  if (s != XAL_SUCCESS || !inst) {
    const xal_status_t st = s != XAL_SUCCESS ? s : XAL_ERROR_INTERNAL;
    int64_t code = 0;
    std::string vname, msg;
    if (!take_pending(st, &code, &vname, &msg))
      msg = s != XAL_SUCCESS ? "init failed" : "init returned no instance";
    b.status = st;
    b.state = st == XAL_ERROR_BACKEND_UNAVAILABLE
                  ? XAL_BACKEND_STATE_UNAVAILABLE
                  : XAL_BACKEND_STATE_FAILED;
    b.reason = cat("init returned ", xal_status_name(st), ": ", msg);
    if (code != 0 || !vname.empty())
      b.reason += cat(" (vendor code ", code, vname.empty() ? "" : " ", vname, ")");
    // What the plugin has been verified on, copied: it may be unloaded.
    if (b.table->support_note) b.note = b.table->support_note;
    return false;
  }
  b.instance = inst;
  if (b.table->describe) {
    xal_backend_describe_t d{};
    d.struct_size = sizeof d;
    if (b.table->describe(inst, &d) == XAL_SUCCESS) {
      d.name[sizeof d.name - 1] = 0;
      d.driver_version[sizeof d.driver_version - 1] = 0;
      d.note[sizeof d.note - 1] = 0;
      if (d.name[0]) b.name = d.name;
      b.driver_version = d.driver_version;
      b.note = d.note;
      b.flags = d.flags;
    }
  }
  if (!b.argument.empty() && b.name == b.short_name)
    b.name = cat(b.short_name, "(", plugin_name_of_file(b.argument), ")");
  uint32_t count = 0;
  const xal_status_t cs = b.table->device_count(inst, &count);
  if (cs != XAL_SUCCESS) {
    int64_t code = 0;
    std::string vname, msg;
    take_pending(cs, &code, &vname, &msg);
    b.status = cs;
    b.state = XAL_BACKEND_STATE_FAILED;
    b.reason = cat("device_count returned ", xal_status_name(cs), ": ", msg);
    b.table->shutdown(inst);
    b.instance = nullptr;
    return false;
  }
  b.device_count = count;
  b.state = XAL_BACKEND_STATE_LOADED;
  b.status = XAL_SUCCESS;
  b.reason.clear();
  return true;
}

void close_backend(Backend& b) noexcept {
  if (b.instance && b.table) b.table->shutdown(b.instance);
  b.instance = nullptr;
  if (b.dl) dlclose(b.dl);
  b.dl = nullptr;
}

}  // namespace xal::core
