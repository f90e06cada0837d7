// XAL_DEVICE_SELECTOR: "mock:0,1;cuda:*".
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

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

 private:
  bool all_ = true;
  // backend name -> indices (nullopt: '*')
  std::map<std::string, std::optional<std::set<uint32_t>>, std::less<>> terms_;
};

}  // namespace xal::core
