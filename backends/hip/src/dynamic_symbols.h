// Loading the HIP runtime at run time (dlopen by versioned soname).
#pragma once

#include <string>
#include <vector>

#include "symbols.h"

namespace xal::hip {

// Function pointers of the loaded runtime, one per entry of symbols.h.
// Optional entries the runtime lacks stay nullptr.
struct HipApi {
#define XAL_HIP_FIELD(kind, name, since) decltype(&::name) name = nullptr;
  XAL_HIP_SYMBOLS(XAL_HIP_FIELD)
#undef XAL_HIP_FIELD
};

// A loaded runtime library. Owns the dlopen handle (closed on destruction).
class HipLibrary {
 public:
  HipLibrary() = default;
  HipLibrary(const HipLibrary&) = delete;
  HipLibrary& operator=(const HipLibrary&) = delete;
  ~HipLibrary();

  // Opens `explicit_path` if not empty, else the first of
  // candidate_sonames() that loads, and resolves every symbol. Returns false
  // with `error` set to the reason: each path tried with its dlerror text,
  // or, for the first REQUIRED function missing, "the HIP runtime <path> is
  // too old: missing hipXxx (HIP 4.0 or newer needed)". Not thread-safe;
  // call once.
  bool load(const std::string& explicit_path, std::string* error);

  // Opens the first of `candidates` that loads (each tried in turn) and
  // resolves every symbol; `error` as for load().
  bool load_first(const std::vector<std::string>& candidates,
                  bool named_by_user, std::string* error);

  const HipApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // Symbol a simulated runtime exports so that xal labels what it runs on.
  static constexpr const char* kSimulatedMarker = "xal_simulated_driver";
  // True when the library exports the simulated-driver marker.
  bool simulated() const { return simulated_; }
  std::string simulated_note() const { return simulated_note_; }
  void* handle() const { return handle_; }

  // libamdhip64.so.6, .so.5, .so.4, ... in the order they are tried.
  static std::vector<std::string> candidate_sonames();

 private:
  void* handle_ = nullptr;
  HipApi api_{};
  std::string path_;
  bool simulated_ = false;
  std::string simulated_note_;
};

}  // namespace xal::hip
