// A backend's plugin table, made from the entry list (XAL_BACKEND_ENTRIES
// in xal_backend.h) instead of written out by hand.
//
// A backend names each entry's implementation after the entry
// (`xal::mock::mem_alloc`, `xal::hip::support_note`), and its table file
// does:
//
//   namespace xal::hip { using namespace xal::support::absent_entries; }
//   ...
//   xal_backend_table_t t = xal::support::table_header("hip", "1.1.0");
//   XAL_SUPPORT_TABLE_FILL(t, xal::hip);      // what the namespace declares
//   XAL_SUPPORT_TABLE_REQUIRE(xal::hip);      // compile-time: no required
//                                             // entry is missing
//
// The using-directive (in the table file only, after every entry is
// declared) makes an entry the namespace does not declare resolve to an
// `Absent` marker, which the fill skips: the entry stays as it was (NULL in
// a fresh table). So a new entry in the list is picked up by every backend
// that implements a function of that name, and needs no edit of any table.
// A variant table (CUDA with NCCL, HIP without RCCL) fills from a second
// namespace holding only the variant's entries, or clears entries after.
#pragma once

#include <type_traits>

#include "xal/xal_backend.h"
#include "xalsupport/entry_decls.h"

namespace xal::support {

// Stands for an entry a backend namespace does not declare.
struct Absent {};

namespace absent_entries {
#define XAL_SUPPORT_ABSENT_ENTRY(name, presence, minor) \
  inline constexpr ::xal::support::Absent name{};
XAL_BACKEND_ENTRIES(XAL_SUPPORT_ABSENT_ENTRY)
#undef XAL_SUPPORT_ABSENT_ENTRY
}  // namespace absent_entries

// Sets `slot` to the backend's implementation (an overload set resolves to
// the one of the entry's type), or leaves it for an absent entry.
template <class T>
constexpr void set_entry(T& slot, std::type_identity_t<T> value) {
  slot = value;
}
template <class T>
constexpr void set_entry(T&, Absent) {}

template <class T>
inline constexpr bool is_absent_v =
    std::is_same_v<std::remove_cvref_t<T>, Absent>;

// A table with its header filled and every entry NULL.
constexpr xal_backend_table_t table_header(const char* name,
                                           const char* version) {
  xal_backend_table_t t{};
  t.struct_size = sizeof(xal_backend_table_t);
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = name;
  t.version = version;
  return t;
}

// Leaves the native collectives NULL, so that the core runs its own path
// (a vendor collective library that is absent or not chosen). A collective
// entry added to the list is added here too.
constexpr void clear_native_collectives(xal_backend_table_t& t) {
  t.comm_create = nullptr;
  t.comm_destroy = nullptr;
  t.comm_abort = nullptr;
  t.comm_get_async_error = nullptr;
  t.group_start = nullptr;
  t.group_end = nullptr;
  t.allreduce = nullptr;
  t.broadcast = nullptr;
  t.reduce = nullptr;
  t.allgather = nullptr;
  t.reduce_scatter = nullptr;
  t.alltoall = nullptr;
  t.comm_send = nullptr;
  t.comm_recv = nullptr;
}

}  // namespace xal::support

// Sets every entry of `table` that namespace `ns` declares.
#define XAL_SUPPORT_FILL_ONE(name, presence, minor) \
  ::xal::support::set_entry(xal_support_table_.name, xal_support_ns_::name);
#define XAL_SUPPORT_TABLE_FILL(table, ns)                       \
  do {                                                          \
    namespace xal_support_ns_ = ns;                             \
    xal_backend_table_t& xal_support_table_ = (table);          \
    XAL_BACKEND_ENTRIES(XAL_SUPPORT_FILL_ONE)                   \
  } while (0)

// Fails to compile when namespace `ns` lacks a required entry.
#define XAL_SUPPORT_REQUIRE_ONE(name, presence, minor)                      \
  static_assert(presence != XAL_ENTRY_REQUIRED ||                           \
                    !::xal::support::is_absent_v<decltype(ns_required_::name)>, \
                "the backend lacks the required table entry " #name);
#define XAL_SUPPORT_TABLE_REQUIRE(ns)            \
  namespace ns_required_ = ns;                   \
  XAL_BACKEND_ENTRIES(XAL_SUPPORT_REQUIRE_ONE)

// The whole plugin file of a backend whose table is every entry namespace
// `ns` declares (checked for the required ones at compile time), under
// `name` at `version`, and its one exported symbol:
//   XAL_SUPPORT_DEFINE_PLUGIN(xal::levelzero, "levelzero", "1.1.0")
// xal_backend_get returns that static table to a core of the same ABI
// major, NULL to any other. A backend with a variant table (HIP without
// RCCL) writes its own, with the macros above.
#define XAL_SUPPORT_DEFINE_PLUGIN(ns, name, version)                              \
  namespace ns {                                                                  \
  using namespace ::xal::support::absent_entries;                                 \
  namespace {                                                                     \
  constexpr xal_backend_table_t make_table() {                                    \
    xal_backend_table_t t = ::xal::support::table_header(name, version);          \
    XAL_SUPPORT_TABLE_FILL(t, ns);                                                \
    XAL_SUPPORT_TABLE_REQUIRE(ns);                                                \
    return t;                                                                     \
  }                                                                               \
  constexpr xal_backend_table_t kTable = make_table();                            \
  }                                                                               \
  }                                                                               \
  extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(       \
      uint32_t core_abi_version) {                                                \
    if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;            \
    return &ns::kTable;                                                           \
  }
