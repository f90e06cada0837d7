// The plugin table and the one exported symbol.
#include "entries.h"
#include "xalsupport/table.h"

namespace xal::opencl {

// Every entry is named after its table entry (entries.h); the table is made
// from the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

namespace {

constexpr xal_backend_table_t make_table() {
  xal_backend_table_t t = support::table_header("opencl", "1.1.0");
  XAL_SUPPORT_TABLE_FILL(t, xal::opencl);
  XAL_SUPPORT_TABLE_REQUIRE(xal::opencl);
  return t;
}

constexpr xal_backend_table_t kTable = make_table();

}  // namespace
}  // namespace xal::opencl

// The one exported symbol. Thread-safe; the table is static.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &xal::opencl::kTable;
}
