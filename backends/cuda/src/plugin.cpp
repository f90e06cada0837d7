// plugin.cpp -- the CUDA backend's plugin tables (with NCCL, with the peer
// collectives, with neither), the choice between them (table_choice.h) and
// the one exported symbol, xal_backend_get.
#include <cstdlib>
#include <mutex>

#include "backend.h"
#include "entries.h"
#include "kernels.h"
#include "nccl_loader.h"
#include "table_choice.h"
#include "xalsupport/config.h"
#include "xalsupport/table.h"

#ifndef XAL_CUDA_PLUGIN_VERSION
#define XAL_CUDA_PLUGIN_VERSION "0.0.0"
#endif

namespace xal::cuda {
namespace {

bool nccl_present();

// Every entry is named after its table entry (entries.h); the tables are
// made from the entry list (xalsupport/table.h).
using namespace xal::support::absent_entries;

// The peer collectives (peer_comm.cpp) under their entry names.
namespace peer_entries {
using namespace xal::support::absent_entries;
inline constexpr auto comm_create = peer_comm_create;
inline constexpr auto comm_destroy = peer_comm_destroy;
inline constexpr auto comm_abort = peer_comm_abort;
inline constexpr auto comm_get_async_error = peer_comm_get_async_error;
inline constexpr auto group_start = peer_group_start;
inline constexpr auto group_end = peer_group_end;
inline constexpr auto allreduce = peer_allreduce;
inline constexpr auto broadcast = peer_broadcast;
inline constexpr auto reduce = peer_reduce;
inline constexpr auto allgather = peer_allgather;
inline constexpr auto reduce_scatter = peer_reduce_scatter;
inline constexpr auto alltoall = peer_alltoall;
}  // namespace peer_entries

enum class TableKind { kCore, kNccl, kPeer };

constexpr xal_backend_table_t make_table(TableKind kind) {
  xal_backend_table_t t = support::table_header("cuda", XAL_CUDA_PLUGIN_VERSION);
  XAL_SUPPORT_TABLE_FILL(t, xal::cuda);
  XAL_SUPPORT_TABLE_REQUIRE(xal::cuda);
  if (kind != TableKind::kNccl) support::clear_native_collectives(t);
  if (kind == TableKind::kPeer) XAL_SUPPORT_TABLE_FILL(t, peer_entries);
  return t;
}

// Without NCCL (or XAL_CUDA_COLLECTIVES=core): collectives run on the
// core's own path.
const xal_backend_table_t kTable = make_table(TableKind::kCore);
// With NCCL: native collectives.
const xal_backend_table_t kTableWithNccl = make_table(TableKind::kNccl);
// XAL_CUDA_COLLECTIVES=peer: native collectives over peer copies and the
// embedded reductions (peer_comm.cpp).
const xal_backend_table_t kTableWithPeer = make_table(TableKind::kPeer);

bool peer_possible() {
  const char* host_funcs = std::getenv("XAL_CUDA_HOST_FUNCS");
  return kernels_embedded() &&
         (host_funcs == nullptr || std::string(host_funcs) != "driver");
}

// True when the driver named by XAL_CUDA_DRIVER is xal's simulated one.
// NCCL runs on the real driver through its own CUDA runtime, so it is never
// used with the simulation. (Drivers are never unloaded, so opening it here
// costs nothing later.)
bool simulated_driver_requested() {
  return support::named_library_exports("XAL_CUDA_DRIVER", "xalsim_is_simulated");
}

// True when NCCL can be opened now, has every function the backend calls
// (the same check as init's) and may be used (checked once per process).
// An NCCL that opens but is too old, or that cannot serve this driver (the
// simulated NCCL needs the simulated driver, the real one a real driver),
// must not give the table with native collectives: init would then leave
// them without a library.
bool nccl_present() {
  static std::once_flag once;
  static bool present = false;
  std::call_once(once, [] {
    const std::string path = Nccl::library_path();
    if (path.empty()) return;
    const bool simulated = simulated_driver_requested();
    if (simulated && !Nccl::named()) return;  // see Nccl::named()
    std::string reason;
    const std::unique_ptr<Nccl> nccl = Nccl::open(path, &reason);
    present = nccl != nullptr && nccl_mismatch(*nccl, simulated).empty();
  });
  return present;
}

}  // namespace

// XAL_CUDA_COLLECTIVES: "auto" (default): NCCL when present, else the
// core's own path; "core": the core's path even with NCCL; "peer": peer
// copies and xal's kernels (peer_comm.cpp), even with NCCL. Peer needs the
// embedded kernels and host functions on xal's threads; without them, the
// core's path.
std::string collectives_choice() {
  const char* value = std::getenv("XAL_CUDA_COLLECTIVES");
  return value != nullptr ? std::string(value) : std::string();
}

Collectives chosen_collectives() {
  const std::string choice = collectives_choice();
  if (choice == "peer") return peer_possible() ? Collectives::kPeer : Collectives::kCore;
  if (choice != "core" && nccl_present()) return Collectives::kNccl;
  return Collectives::kCore;
}

}  // namespace xal::cuda

// The one exported symbol: the table, with the NCCL entries when NCCL is
// present, the peer collectives when asked for (chosen_collectives()).
// Thread-safe; the table is static and never freed.
extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  try {
    switch (xal::cuda::chosen_collectives()) {
      case xal::cuda::Collectives::kNccl: return &xal::cuda::kTableWithNccl;
      case xal::cuda::Collectives::kPeer: return &xal::cuda::kTableWithPeer;
      case xal::cuda::Collectives::kCore: break;
    }
    return &xal::cuda::kTable;
  } catch (...) {
    return &xal::cuda::kTable;
  }
}
