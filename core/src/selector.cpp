// Device selector parsing.
#include "selector.hpp"

#include "error.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

using xal::common::parse_uint;
using xal::common::split;
using xal::common::trim;

std::optional<Selector> Selector::parse(std::string_view text,
                                        std::string* error) {
  Selector sel;
  if (trim(text).empty()) return sel;
  sel.all_ = false;
  for (const auto& raw : split(text, ";")) {
    const std::string_view term = trim(raw);
    if (term.empty()) continue;
    const auto colon = term.find(':');
    const std::string name(trim(term.substr(0, colon)));
    if (name.empty()) {
      *error = cat("device selector term '", term, "' has no backend name");
      return std::nullopt;
    }
    if (colon == std::string_view::npos) {
      sel.terms_[name] = std::nullopt;
      continue;
    }
    const std::string_view list = trim(term.substr(colon + 1));
    if (list.empty()) {
      *error = cat("device selector term '", term,
                   "' has no device indices after ':' (use '*' for all)");
      return std::nullopt;
    }
    if (list == "*") {
      sel.terms_[name] = std::nullopt;
      continue;
    }
    std::set<uint32_t> indices;
    for (const auto& item : split(list, ",", true)) {
      const std::string_view it = trim(item);
      const auto dash = it.find('-');
      auto lo = parse_uint(it.substr(0, dash));
      auto hi = dash == std::string_view::npos ? lo
                                               : parse_uint(it.substr(dash + 1));
      if (!lo || !hi || *lo > *hi || *hi > 0xffffff) {
        *error = cat("device selector term '", term, "': '", it,
                     "' is not a device index, range (0-3) or '*'");
        return std::nullopt;
      }
      for (uint64_t i = *lo; i <= *hi; ++i) indices.insert(static_cast<uint32_t>(i));
    }
    auto found = sel.terms_.find(name);
    if (found == sel.terms_.end())
      sel.terms_.emplace(name, std::move(indices));
    else if (found->second)
      found->second->insert(indices.begin(), indices.end());
  }
  if (sel.terms_.empty()) sel.all_ = true;
  return sel;
}

bool Selector::selects(std::initializer_list<std::string_view> names,
                       uint32_t index) const {
  if (all_) return true;
  for (std::string_view n : names) {
    auto it = terms_.find(n);
    if (it == terms_.end()) continue;
    if (!it->second || it->second->count(index)) return true;
  }
  return false;
}

std::vector<std::string> Selector::unmatched(const std::vector<Started>& started) const {
  std::vector<std::string> out;
  for (const auto& [name, indices] : terms_) {
    const Started* backend = nullptr;
    for (const Started& b : started)
      for (const std::string& n : b.names)
        if (n == name) backend = &b;
    if (backend == nullptr) {
      out.push_back(cat("'", name, "' names no started backend"));
      continue;
    }
    if (!indices) continue;
    for (uint32_t i : *indices)
      if (i >= backend->device_count)
        out.push_back(cat("'", name, ":", i, "': ", name, " has ", backend->device_count,
                          " device(s)"));
  }
  return out;
}

}  // namespace xal::core
