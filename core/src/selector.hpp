// XAL_DEVICE_SELECTOR: "mock:0,1;cuda:*".
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace xal::core {

class Selector {
 public:
  // Parses `text`; empty text selects everything. Returns nullopt and sets
  // `error` when malformed.
  static std::optional<Selector> parse(std::string_view text,
                                       std::string* error);

  // Whether device `index` of the backend known by any of `names` is kept.
  bool selects(std::initializer_list<std::string_view> names,
               uint32_t index) const;

  // A started backend as the selector sees it: the names it answers to
  // and its device count.
  struct Started {
    std::vector<std::string> names;
    uint32_t device_count;
  };
  // What in the selector keeps no device of `started`, one line per term
  // or index ("'mokc' names no started backend"): to warn about.
  std::vector<std::string> unmatched(const std::vector<Started>& started) const;

 private:
  bool all_ = true;
  // backend name -> indices (nullopt: '*')
  std::map<std::string, std::optional<std::set<uint32_t>>, std::less<>> terms_;
};

}  // namespace xal::core
