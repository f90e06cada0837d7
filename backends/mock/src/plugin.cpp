// The mock plugin: its table and xal_backend_get.
#include "entries.h"

#include "xalsupport/table.h"

namespace xal::mock {

// Every entry (entries.h) is named after its table entry; the table is made
// from the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

namespace {

constexpr xal_backend_table_t make_table() {
  xal_backend_table_t t = support::table_header("mock", kVersion);
  XAL_SUPPORT_TABLE_FILL(t, xal::mock);
  XAL_SUPPORT_TABLE_REQUIRE(xal::mock);
  return t;
}

constexpr xal_backend_table_t kTable = make_table();

}  // namespace

}  // namespace xal::mock

// The one exported symbol: the table, or NULL for a core of another major
// (the loader then names both versions). Static storage; thread-safe.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &xal::mock::kTable;
}
