#include "xal_common/strings.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace xal::common {

namespace {

void set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
}

// Multiplier for a unit suffix, or 0 if unknown.
uint64_t unit_multiplier(std::string_view unit) {
  const std::string u = to_lower(unit);
  if (u.empty() || u == "b") return 1;
  const bool binary_only = unit.size() == 1 || (u.size() == 3 && u[1] == 'i');
  uint64_t base = binary_only ? 1024 : 1000;
  if (u.size() != 1 && u.size() != 2 && !(u.size() == 3 && u[1] == 'i' && u[2] == 'b'))
    return 0;
  if (u.size() == 2 && u[1] != 'b') return 0;
  switch (u[0]) {
    case 'k': return base;
    case 'm': return base * base;
    case 'g': return base * base * base;
    case 't': return base * base * base * base;
    default: return 0;
  }
}

}  // namespace

std::optional<uint64_t> parse_bytes(std::string_view text, std::string* error) {
  const std::string_view t = trim(text);
  if (t.empty()) {
    set_error(error, "empty size");
    return std::nullopt;
  }
  size_t i = 0;
  bool seen_digit = false, seen_dot = false;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) ||
                          (t[i] == '.' && !seen_dot))) {
    if (t[i] == '.') seen_dot = true; else seen_digit = true;
    ++i;
  }
  if (!seen_digit) {
    set_error(error, "'" + std::string(t) + "' does not start with a number");
    return std::nullopt;
  }
  const std::string number(t.substr(0, i));
  const std::string_view unit = trim(t.substr(i));
  const uint64_t mult = unit_multiplier(unit);
  if (mult == 0) {
    set_error(error, "unknown unit '" + std::string(unit) +
                         "' (expected B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
    return std::nullopt;
  }
  if (!seen_dot) {
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(number.c_str(), &end, 10);
    if (errno != 0 || v > std::numeric_limits<uint64_t>::max() / mult) {
      set_error(error, "size '" + std::string(t) + "' is too large");
      return std::nullopt;
    }
    return static_cast<uint64_t>(v) * mult;
  }
  const double v = std::strtod(number.c_str(), nullptr) * static_cast<double>(mult);
  if (!std::isfinite(v) || v >= 1.8e19) {
    set_error(error, "size '" + std::string(t) + "' is too large");
    return std::nullopt;
  }
  // Not llround: its long long overflows from 2^63 on.
  return static_cast<uint64_t>(std::round(v));
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::vector<std::string> split(std::string_view text, std::string_view separators,
                               bool keep_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || separators.find(text[i]) != std::string_view::npos) {
      if (keep_empty || i > start) out.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string_view trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return text.substr(b, e - b);
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::optional<uint64_t> parse_uint(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty() || t.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

namespace {

// Bytes a UTF-8 sequence starting with lead byte `c` declares (1 for ASCII,
// continuation and invalid bytes).
size_t utf8_declared_length(unsigned char c) {
  if (c >= 0xF0 && c <= 0xF7) return 4;
  if (c >= 0xE0) return c <= 0xEF ? 3 : 1;
  if (c >= 0xC0) return 2;
  return 1;
}

// The largest cut <= n of `src` that does not split the UTF-8 character
// the first n bytes end in.
size_t utf8_cut(std::string_view src, size_t n) {
  size_t lead = n;
  // A character is at most 4 bytes: look back over 3 continuation bytes.
  while (lead > 0 && n - lead < 4) {
    --lead;
    const auto c = static_cast<unsigned char>(src[lead]);
    if ((c & 0xC0) != 0x80) {
      return lead + utf8_declared_length(c) > n ? lead : n;
    }
  }
  return n;
}

}  // namespace

void copy_string(char* dst, size_t capacity, std::string_view src) {
  if (!dst || capacity == 0) return;
  size_t n = src.size();
  if (n > capacity - 1) n = utf8_cut(src, capacity - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

}  // namespace xal::common
