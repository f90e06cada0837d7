// Resolving a vendor symbol list: the step every loader repeats. Each
// vendor library has one list, an X-macro of entries X(KIND, name, since)
// (see docs/WRITING_A_BACKEND.md):
//   KIND   REQUIRED (without it the backend, or the feature an auxiliary
//          library serves, is UNAVAILABLE) or OPTIONAL (left null: the
//          feature it serves is left out);
//   since  the first version of the library that provides it, in the
//          vendor's own version encoding (documented at the top of the list).
// A loader expands its list into calls of SymbolResolver::resolve, one per
// entry, then asks complete() and, when a REQUIRED one is missing, reason().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace xal::support {

enum class SymbolKind { REQUIRED, OPTIONAL };

// How a library spells one of its versions: "HIP 5.6" for 50600000.
using VersionText = std::string (*)(int64_t since);

// Finds the address of one symbol (`since`: the entry's version, for
// lookups that take one, such as cuGetProcAddress); null when absent.
using SymbolLookup = std::function<void*(const char* name, int64_t since)>;

// The lookup of dlsym(handle, name). `handle` is borrowed: it must stay
// open while the lookup is used.
SymbolLookup dlsym_lookup(void* handle);

// Resolves the entries of one list in turn and remembers the first REQUIRED
// one that is missing. One object per load; not thread-safe.
class SymbolResolver {
 public:
  explicit SymbolResolver(SymbolLookup lookup);

  // The address of `name`, or null (OPTIONAL or not, a missing entry gives
  // null; a missing REQUIRED one also makes complete() false).
  void* find(SymbolKind kind, const char* name, int64_t since);

  // Stores the address of `name` into `slot`, a function pointer of the
  // entry's declared type (null when the library lacks it).
  template <typename Function>
  void resolve(SymbolKind kind, const char* name, int64_t since,
               Function*& slot) {
    slot = reinterpret_cast<Function*>(find(kind, name, since));
  }

  // True while every REQUIRED entry resolved so far was found.
  bool complete() const { return missing_ == nullptr; }
  // The first REQUIRED entry missing (null when complete) and its `since`.
  const char* missing() const { return missing_; }
  int64_t missing_since() const { return missing_since_; }

  // "" when complete; otherwise "<library> is too old: missing <name>
  // (<version_text(since)> or newer needed)". The version is left out for a
  // symbol of the library's first release (since <= first_release): every
  // version has it, so none would be new enough.
  std::string reason(std::string_view library, VersionText version_text,
                     int64_t first_release = 0) const;

 private:
  SymbolLookup lookup_;
  const char* missing_ = nullptr;
  int64_t missing_since_ = 0;
};

}  // namespace xal::support
