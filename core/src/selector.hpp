// XAL_DEVICE_SELECTOR: "mock:0,1;cuda:*".
#pragma once

#include <map>
#include <optional>
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
  // or index range ("'mokc' names no started backend", "'mock:4-9': mock
  // has 2 device(s)"): to warn about. At most one line per range, however
  // wide (mock:0-16777215).
  std::vector<std::string> unmatched(const std::vector<Started>& started) const;

 private:
  // Device indices as disjoint, non-adjacent ranges: first -> last
  // (inclusive). A range costs one entry whatever its width.
  using Ranges = std::map<uint32_t, uint32_t>;
  static void add_range(Ranges& ranges, uint32_t first, uint32_t last);
  static bool contains(const Ranges& ranges, uint32_t index);

  bool all_ = true;
  // backend name -> indices (nullopt: '*')
  std::map<std::string, std::optional<Ranges>, std::less<>> terms_;
};

}  // namespace xal::core
