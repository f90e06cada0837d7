#include "xalsupport/symbol_table.h"

#include <dlfcn.h>

#include <utility>

namespace xal::support {

SymbolLookup dlsym_lookup(void* handle) {
  return [handle](const char* name, int64_t) { return dlsym(handle, name); };
}

SymbolResolver::SymbolResolver(SymbolLookup lookup) : lookup_(std::move(lookup)) {}

void* SymbolResolver::find(SymbolKind kind, const char* name, int64_t since) {
  void* address = lookup_(name, since);
  if (address == nullptr && kind == SymbolKind::REQUIRED && missing_ == nullptr) {
    missing_ = name;
    missing_since_ = since;
  }
  return address;
}

std::string SymbolResolver::reason(std::string_view library,
                                   VersionText version_text,
                                   int64_t first_release) const {
  if (missing_ == nullptr) return {};
  std::string text = std::string(library) + " is too old: missing " + missing_;
  if (missing_since_ > first_release) {
    text += " (" + version_text(missing_since_) + " or newer needed)";
  }
  return text;
}

}  // namespace xal::support
