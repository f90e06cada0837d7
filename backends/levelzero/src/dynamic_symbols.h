// Loading the Level Zero loader at run time (dlopen libze_loader.so.1).
#pragma once

#include <string>

#include "ze_api.h"

namespace xal::levelzero {

// Function pointers of the loaded loader, one per entry of symbols.h.
// Optional entries the loader lacks stay nullptr.
struct ZeApi {
#define XAL_ZE_SYMBOL(req, name, ret, params) ret(*name) params = nullptr;
#include "symbols.h"
#undef XAL_ZE_SYMBOL
};

// A loaded loader library. Owns the dlopen handle (closed on destruction).
class ZeLibrary {
 public:
  ZeLibrary() = default;
  ZeLibrary(const ZeLibrary&) = delete;
  ZeLibrary& operator=(const ZeLibrary&) = delete;
  ~ZeLibrary();

  // Opens `path`, or libze_loader.so.1 when empty, and resolves every
  // symbol. False with `error` set to the dlerror text or the first
  // REQUIRED function missing. Not thread-safe; call once.
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
