// The HIP backend's plugin table and its one exported symbol.
#include <cstdlib>
#include <string>

#include "dynamic_symbols.h"
#include "entries.h"
#include "rccl_loader.h"
#include "xalsupport/config.h"
#include "xalsupport/table.h"

namespace xal::hip {

// Every entry is named after its table entry (entries.h); the table is made
// from the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

namespace {

constexpr xal_backend_table_t make_table(bool with_collectives) {
  xal_backend_table_t t = support::table_header("hip", "1.1.0");
  XAL_SUPPORT_TABLE_FILL(t, xal::hip);
  XAL_SUPPORT_TABLE_REQUIRE(xal::hip);
  // Without RCCL the core runs its own collectives on HIP devices.
  if (!with_collectives) support::clear_native_collectives(t);
  return t;
}

constexpr xal_backend_table_t kTableWithRccl = make_table(true);
constexpr xal_backend_table_t kTableWithoutRccl = make_table(false);

// True when XAL_HIP_LIBRARY names the tests' simulated runtime (the default
// sonames are the real one, which is not loaded here: init does that). The
// library is left open, as init opens it again.
bool simulated_runtime_requested() {
  return support::named_library_exports("XAL_HIP_LIBRARY", HipLibrary::kSimulatedMarker);
}

// Whether RCCL can serve the runtime init will load, by the same checks as
// init's (Rccl::load): without it the collective entries stay NULL so that
// the core runs its own collectives on HIP devices. An RCCL that opens but
// is incomplete, or that cannot serve this runtime, must not give the table
// with native collectives.
bool rccl_present() {
  const char* path = std::getenv("XAL_RCCL_LIBRARY");
  Rccl rccl;
  std::string reason;
  return rccl.load(path != nullptr ? path : "", simulated_runtime_requested(), &reason);
}

}  // namespace
}  // namespace xal::hip

// Returns the table for a core of ABI `core_abi_version`, or NULL when the
// major differs. Static storage; thread-safe.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  static const bool with_rccl = xal::hip::rccl_present();
  return with_rccl ? &xal::hip::kTableWithRccl : &xal::hip::kTableWithoutRccl;
}
