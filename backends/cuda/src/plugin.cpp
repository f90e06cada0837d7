// plugin.cpp -- the CUDA backend's plugin table: init, shutdown, describe,
// and the one exported symbol, xal_backend_get.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "backend.h"
#include "entries.h"
#include "kernels.h"
#include "nccl_loader.h"
#include "nvml_loader.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"
#include "xalsupport/table.h"

#ifndef XAL_CUDA_PLUGIN_VERSION
#define XAL_CUDA_PLUGIN_VERSION "0.0.0"
#endif

namespace xal::cuda {
namespace {

using support::config;

// Releases the devices, then the instance (owned from here on).
void destroy(xal_backend_s* backend) {
  std::unique_ptr<xal_backend_s> owned(backend);
  for (auto& device : owned->devices) release_device(device.get());
}

bool nccl_present();

// Which collectives the table carries (XAL_CUDA_COLLECTIVES, below).
enum class Collectives { kCore, kNccl, kPeer };
Collectives chosen_collectives();
std::string collectives_choice();

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

xal_status_t init(const xal_backend_init_args_t* args,
                  xal_backend_t** out_backend) {
  const xal_backend_services_t* services =
      args != nullptr ? args->services : nullptr;
  auto backend = std::make_unique<xal_backend_s>();
  backend->services = services;
  return guarded(backend.get(), [&]() -> xal_status_t {
    std::string path = config(services, "XAL_CUDA_DRIVER");
    if (path.empty()) path = "libcuda.so.1";
    std::string reason;
    if (!backend->driver.load(path, &reason)) {
      return backend->error(XAL_ERROR_BACKEND_UNAVAILABLE, "cuda: " + reason);
    }
    std::string note;
    if (backend->driver.simulated()) {
      note = "simulated driver (" + path + ")";
    }
    // NVML: never read the real card's sensors for simulated devices.
    std::string nvml_path = config(services, "XAL_CUDA_NVML");
    if (nvml_path.empty() && !backend->driver.simulated()) {
      nvml_path = "libnvidia-ml.so.1";
    }
    if (!nvml_path.empty() && nvml_path != "off" && nvml_path != "0") {
      backend->nvml = Nvml::open(nvml_path, &reason);
      if (backend->nvml == nullptr) {
        backend->log(XAL_LOG_INFO, "cuda: NVML not used: " + reason);
        note += std::string(note.empty() ? "" : "; ") + "no NVML";
      }
    }
    // NCCL drives the real driver through its own runtime: not with the
    // simulation. Used only when the table has the native entries, which
    // chosen_collectives() decided when the core asked for it.
    const std::string choice = collectives_choice();
    if (!choice.empty() && choice != "auto" && choice != "core" && choice != "peer") {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: XAL_CUDA_COLLECTIVES '" + choice +
                                "' is none of 'auto', 'core', 'peer'");
    }
    const Collectives collectives = chosen_collectives();
    const std::string nccl_path = Nccl::library_path();
    std::string nccl_note;
    const bool simulated = backend->driver.simulated();
    if (choice != "core" && choice != "peer") {
      std::string why;
      if (!nccl_path.empty() && collectives == Collectives::kNccl) {
        backend->nccl = Nccl::open(nccl_path, &why);
        if (backend->nccl != nullptr) {
          why = nccl_mismatch(*backend->nccl, simulated);
          if (!why.empty()) backend->nccl.reset();
        }
      }
      if (nccl_path.empty()) {
        nccl_note = "NCCL off (XAL_CUDA_NCCL)";
      } else if (backend->nccl == nullptr) {
        if (why.empty() && simulated && !Nccl::named()) {
          why = "the simulated driver takes only a simulated NCCL named by "
                "XAL_CUDA_NCCL";
        } else if (why.empty()) {  // not tried (see chosen_collectives): why not
          const std::unique_ptr<Nccl> probe = Nccl::open(nccl_path, &why);
          if (probe != nullptr) why = nccl_mismatch(*probe, simulated);
        }
        // A library the user named that is not used is worth a warning; the
        // default one missing is the common case.
        const bool named = Nccl::named();
        backend->log(named ? XAL_LOG_WARNING : XAL_LOG_INFO, "cuda: NCCL not used: " + why);
        if (named) {
          nccl_note = "the NCCL XAL_CUDA_NCCL names is not used (the log says why)";
        } else {
          nccl_note = simulated ? "" : "no NCCL (" + nccl_path + ")";
        }
      } else {
        const int v = backend->nccl->version();
        nccl_note = std::string(backend->nccl->simulated() ? "simulated " : "") +
                    "NCCL " + std::to_string(v / 10000) + "." +
                    std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
      }
    }
    std::string how;
    if (collectives == Collectives::kPeer) {
      how = "collectives over peer copies and xal's kernels";
    } else if (collectives == Collectives::kCore || backend->nccl == nullptr) {
      how = "collectives on the core's path";
      if (choice == "peer") {
        how += " (XAL_CUDA_COLLECTIVES=peer needs the embedded kernels and host "
               "functions on xal's threads)";
        backend->log(XAL_LOG_WARNING, "cuda: " + how);
      }
    }
    if (!nccl_note.empty() || !how.empty()) {
      note += std::string(note.empty() ? "" : "; ") + nccl_note +
              (nccl_note.empty() || how.empty() ? "" : ": ") + how;
    }
    // XAL_CUDA_HOST_FUNCS=driver: host functions straight to the driver
    // (see host_funcs.h); "thread", the default, on a thread of the stream.
    const std::string host_funcs = config(services, "XAL_CUDA_HOST_FUNCS");
    if (host_funcs == "driver") {
      backend->host_func_threads = false;
      note += std::string(note.empty() ? "" : "; ") +
              "host functions on the driver's thread (XAL_CUDA_HOST_FUNCS=driver)";
      // Seen on an H200 (driver 580): that driver runs them one at a time.
      backend->log(XAL_LOG_WARNING,
                   "cuda: XAL_CUDA_HOST_FUNCS=driver: the driver may run a context's host "
                   "functions one at a time (an H200 with driver 580 does), and the core's "
                   "collectives across backends then end in XAL_ERROR_TIMEOUT");
    } else if (!host_funcs.empty() && host_funcs != "thread") {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: XAL_CUDA_HOST_FUNCS '" + host_funcs +
                                "' is neither 'thread' nor 'driver'");
    }
    backend->note = note;
    if (xal_status_t s = init_devices(backend.get()); s != XAL_SUCCESS) {
      destroy(backend.release());
      return s;
    }
    *out_backend = backend.release();
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  return guarded(nullptr, [&]() -> xal_status_t {  // backend is gone afterwards
    destroy(backend);
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  return guarded(backend, [&]() -> xal_status_t {
    common::copy_string(out->name, "cuda");
    common::copy_string(out->driver_version,
                        version_text(backend->driver_version));
    out->flags = backend->driver.simulated() ? XAL_BACKEND_FLAG_SIMULATED : 0u;
    // What this backend has been run on, first so that it is never cut.
    std::string note = support_note;
    if (!backend->note.empty()) note += "; " + backend->note;
    if (!kernels_embedded()) {
      note += "; no embedded kernels";
    }
    common::copy_string(out->note, note);
    return XAL_SUCCESS;
  });
}

const void* get_extension(xal_backend_t* backend, const char* name) {
  try {
    return kernels_extension(backend, name);
  } catch (...) {
    return nullptr;
  }
}

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

// XAL_CUDA_COLLECTIVES: "auto" (default): NCCL when present, else the
// core's own path; "core": the core's path even with NCCL; "peer": peer
// copies and xal's kernels (peer_comm.cpp), even with NCCL. Peer needs the
// embedded kernels and host functions on xal's threads; without them, the
// core's path.
std::string collectives_choice() {
  const char* value = std::getenv("XAL_CUDA_COLLECTIVES");
  return value != nullptr ? std::string(value) : std::string();
}

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

Collectives chosen_collectives() {
  const std::string choice = collectives_choice();
  if (choice == "peer") return peer_possible() ? Collectives::kPeer : Collectives::kCore;
  if (choice != "core" && nccl_present()) return Collectives::kNccl;
  return Collectives::kCore;
}

}  // namespace
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
