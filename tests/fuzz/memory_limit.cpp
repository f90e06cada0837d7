// Memory limits (XAL_MEMORY_LIMIT: "8GiB" or "0=8GiB,1=2GiB") and the byte
// sizes under them (xal_common's parse_bytes, used by every size setting).
#include <cctype>
#include <cstdlib>
#include <string>

#include "fuzz_check.hpp"
#include "quota.hpp"
#include "xal_common/strings.hpp"

namespace {

// An accepted size: digits and at most one '.', then a unit that
// parse_bytes knew (it accepted the text).
long double reference_bytes(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  const long double number = std::strtold(std::string(t.substr(0, i)).c_str(), nullptr);
  const std::string unit = xal::common::to_lower(xal::common::trim(t.substr(i)));
  const bool binary = unit.size() == 1 || unit.size() == 3;
  const long double base = binary ? 1024.0L : 1000.0L;
  int power = 0;
  if (!unit.empty() && unit != "b") power = static_cast<int>(std::string_view("kmgt").find(unit[0])) + 1;
  long double mult = 1;
  for (int p = 0; p < power; ++p) mult *= base;
  return number * mult;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = xal::fuzz::as_text(data, size);
  std::string error;
  const auto limits = xal::core::parse_memory_limits(text, &error);
  if (!limits) {
    XAL_FUZZ_CHECK(xal::fuzz::says_something(error), "a refusal that says nothing");
  } else if (text.find('=') != std::string_view::npos) {
    XAL_FUZZ_CHECK(!limits->all, "a per-device list that also set a global limit");
  }

  std::string why;
  const auto bytes = xal::common::parse_bytes(text, &why);
  if (!bytes) {
    XAL_FUZZ_CHECK(xal::fuzz::says_something(why), "a bad size with no reason");
    return 0;
  }
  XAL_FUZZ_CHECK(xal::common::parse_bytes(std::to_string(*bytes)) == bytes,
                 "a size that does not read back in bytes");
  // The value is the number times the unit, to double precision.
  const long double want = reference_bytes(xal::common::trim(text));
  const long double got = static_cast<long double>(*bytes);
  XAL_FUZZ_CHECK(got >= want * (1 - 1e-9L) - 1 && got <= want * (1 + 1e-9L) + 1,
                 "parse_bytes gave " + std::to_string(*bytes) + " for '" +
                     std::string(text) + "'");
  // format_bytes rounds to two decimals: what it prints reads back within
  // 1% (below 1 PiB, the largest unit parse_bytes knows being TiB).
  if (*bytes < (1ull << 50)) {
    const std::string shown = xal::common::format_bytes(*bytes);
    const auto again = xal::common::parse_bytes(shown);
    XAL_FUZZ_CHECK(again.has_value(), "format_bytes printed what parse_bytes refuses: " + shown);
    const long double a = static_cast<long double>(*again);
    XAL_FUZZ_CHECK(a <= got * 1.01L + 1 && a >= got * 0.99L - 1,
                   "format_bytes is more than 1% off: " + shown);
  }
  return 0;
}
