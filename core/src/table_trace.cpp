// The tracing layer of one backend's table (see table_trace.hpp), made
// from XAL_BACKEND_ENTRIES: a new entry is traced with no change here.
#include "table_trace.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <type_traits>

#include "xal/xal.h"
#include "xal_common/strings.hpp"

namespace xal::core {
namespace {

// The traced backend's own table and label (one per process).
xal_backend_table_t g_target{};
std::string g_label;
std::mutex g_out_mu;

template <typename T>
void put(std::string& out, T v) {
  if constexpr (std::is_same_v<T, const char*>) {
    if (v == nullptr) {
      out += "NULL";
    } else {
      out += '"';
      out += std::string_view(v).substr(0, 80);
      out += '"';
    }
  } else if constexpr (std::is_pointer_v<T>) {
    if (v == nullptr) {
      out += "NULL";
    } else if constexpr (std::is_function_v<std::remove_pointer_t<T>>) {
      out += "fn ";
      out += xal::common::hex(reinterpret_cast<std::uintptr_t>(v));
    } else {
      out += xal::common::hex(reinterpret_cast<std::uintptr_t>(v));
    }
  } else if constexpr (std::is_enum_v<T>) {
    out += std::to_string(static_cast<long long>(v));
  } else if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
    out += std::to_string(v);
  } else {
    out += "{...}";
  }
}

template <typename... A>
std::string call_text(const char* entry, A... args) {
  std::string text = "xal-trace: " + g_label + "." + entry + "(";
  bool first = true;
  ((text += first ? "" : ", ", first = false, put(text, args)), ...);
  return text + ")";
}

void emit(const std::string& line) {
  std::lock_guard lock(g_out_mu);
  std::fputs((line + "\n").c_str(), stderr);
  std::fflush(stderr);
}

// The name of an entry, from the list.
template <auto Member>
const char* entry_name() {
  static const char* const name = [] {
    static const xal_backend_table_t probe{};
    const auto at = reinterpret_cast<const char*>(&(probe.*Member)) -
                    reinterpret_cast<const char*>(&probe);
#define XAL_TRACE_ENTRY_NAME(entry, presence, minor) \
  if (at == static_cast<std::ptrdiff_t>(offsetof(xal_backend_table_t, entry))) return #entry;
    XAL_BACKEND_ENTRIES(XAL_TRACE_ENTRY_NAME)
#undef XAL_TRACE_ENTRY_NAME
    return "?";
  }();
  return name;
}

template <auto Member, typename T = std::remove_cvref_t<decltype(g_target.*Member)>>
struct Wrapper;

// A function entry: traced.
template <auto Member, typename R, typename... A>
struct Wrapper<Member, R (*)(A...)> {
  static R call(A... args) {
    const char* name = entry_name<Member>();
    if constexpr (std::is_void_v<R>) {
      (g_target.*Member)(args...);
      emit(call_text(name, args...));
    } else {
      const R result = (g_target.*Member)(args...);
      std::string line = call_text(name, args...) + " -> ";
      if constexpr (std::is_same_v<R, xal_status_t>) {
        line += xal_status_name(result);
      } else {
        put(line, result);
      }
      emit(line);
      return result;
    }
  }
  static void fill(xal_backend_table_t& out) {
    out.*Member = (g_target.*Member) != nullptr ? &call : nullptr;
  }
};

// A value (support_note): copied.
template <auto Member, typename T>
struct Wrapper {
  static void fill(xal_backend_table_t& out) { out.*Member = g_target.*Member; }
};

}  // namespace

bool table_trace_wanted(const std::string& short_name) {
  const char* v = std::getenv("XAL_TRACE_ENTRIES");
  if (v == nullptr || *v == '\0') return false;
  for (const std::string& name : xal::common::split(v, ",")) {
    if (name == "*" || name == short_name) return true;
  }
  return false;
}

xal_backend_table_t table_trace_wrap(const xal_backend_table_t& target,
                                     const std::string& short_name) {
  static std::once_flag once;
  bool first = false;
  std::call_once(once, [&] { first = true; });
  if (!first) {
    emit("xal-trace: " + short_name + " not traced (" + g_label + " is: one backend at a time)");
    return target;
  }
  g_target = target;
  g_label = short_name;
  xal_backend_table_t traced = target;
#define XAL_TRACE_FILL(entry, presence, minor) \
  Wrapper<&xal_backend_table_t::entry>::fill(traced);
  XAL_BACKEND_ENTRIES(XAL_TRACE_FILL)
#undef XAL_TRACE_FILL
  emit("xal-trace: tracing every table entry of " + short_name);
  return traced;
}

}  // namespace xal::core
