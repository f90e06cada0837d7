// Loading the Level Zero loader at run time (dlopen libze_loader.so.1).
#pragma once

#include <string>

#include "symbols.h"

namespace xal::levelzero {

// Function pointers of the loaded loader, one per entry of symbols.h.
// Optional entries the loader lacks stay nullptr.
struct ZeApi {
#define XAL_ZE_FIELD(kind, name, since) decltype(&::name) name = nullptr;
  XAL_ZE_SYMBOLS(XAL_ZE_FIELD)
#undef XAL_ZE_FIELD
};

// A loaded loader library. Owns the dlopen handle (closed on destruction).
class ZeLibrary {
 public:
  ZeLibrary() = default;
  ZeLibrary(const ZeLibrary&) = delete;
  ZeLibrary& operator=(const ZeLibrary&) = delete;
  ~ZeLibrary();

  // Opens `path`, or libze_loader.so.1 when empty, and resolves every
  // symbol. False with `error` set to the dlerror text or, for the first
  // REQUIRED function missing, "the Level Zero loader <path> is too old:
  // missing zeXxx (Level Zero 1.3 or newer needed)" (no version for one
  // of Level Zero 1.0). Not thread-safe; call once.
  bool load(const std::string& path, std::string* error);

  const ZeApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  bool simulated() const { return simulated_; }
  const std::string& simulated_note() const { return simulated_note_; }

 private:
  void* handle_ = nullptr;
  ZeApi api_{};
  std::string path_;
  bool simulated_ = false;
  std::string simulated_note_;
};

}  // namespace xal::levelzero
