// Device selector parsing.
#include "selector.hpp"

#include <algorithm>
#include <iterator>

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
    Ranges indices;
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
      add_range(indices, static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi));
    }
    auto found = sel.terms_.find(name);
    if (found == sel.terms_.end())
      sel.terms_.emplace(name, std::move(indices));
    else if (found->second)
      for (const auto& [first, last] : indices) add_range(*found->second, first, last);
  }
  if (sel.terms_.empty()) sel.all_ = true;
  return sel;
}

void Selector::add_range(Ranges& ranges, uint32_t first, uint32_t last) {
  // Merge with every range that overlaps or touches [first, last].
  auto it = ranges.upper_bound(first);
  if (it != ranges.begin()) {
    auto before = std::prev(it);
    if (uint64_t{before->second} + 1 >= first) {
      first = before->first;
      last = std::max(last, before->second);
      it = ranges.erase(before);
    }
  }
  while (it != ranges.end() && uint64_t{last} + 1 >= it->first) {
    last = std::max(last, it->second);
    it = ranges.erase(it);
  }
  ranges.emplace(first, last);
}

bool Selector::contains(const Ranges& ranges, uint32_t index) {
  auto it = ranges.upper_bound(index);
  return it != ranges.begin() && std::prev(it)->second >= index;
}

bool Selector::selects(std::initializer_list<std::string_view> names,
                       uint32_t index) const {
  if (all_) return true;
  for (std::string_view n : names) {
    auto it = terms_.find(n);
    if (it == terms_.end()) continue;
    if (!it->second || contains(*it->second, index)) return true;
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
    // Ranges are sorted: the ones past the last device are at the end, the
    // first of them maybe cut by it.
    for (const auto& [lo, last] : *indices) {
      if (last < backend->device_count) continue;
      const uint32_t first = std::max(lo, backend->device_count);
      const std::string which = first == last ? cat(first) : cat(first, "-", last);
      out.push_back(cat("'", name, ":", which, "': ", name, " has ", backend->device_count,
                        " device(s)"));
    }
  }
  return out;
}

}  // namespace xal::core
