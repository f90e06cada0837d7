// The Level Zero backend's plugin table and its one exported symbol.
// Native collectives stay NULL: oneCCL has no C API, so the core's own
// collectives serve Level Zero devices.
#include "entries.h"
#include "xalsupport/table.h"

namespace xal::levelzero {

// Every entry is named after its table entry (entries.h); the table is made
// from the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

namespace {

constexpr xal_backend_table_t make_table() {
  xal_backend_table_t t = support::table_header("levelzero", "1.1.0");
  XAL_SUPPORT_TABLE_FILL(t, xal::levelzero);
  XAL_SUPPORT_TABLE_REQUIRE(xal::levelzero);
  return t;
}

constexpr xal_backend_table_t kTable = make_table();

}  // namespace
}  // namespace xal::levelzero

// Returns the table for a core of ABI `core_abi_version`, or NULL when the
// major differs. Static storage; thread-safe.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &xal::levelzero::kTable;
}
