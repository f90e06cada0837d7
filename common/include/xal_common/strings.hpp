// Small string helpers shared by the core, the backends and the tools:
// byte sizes ("8GiB"), splitting, trimming, environment variables.
// Header of xal_common; no dependency on the core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xal::common {

// Parses a byte size: a non-negative integer or decimal number with an
// optional unit (B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB; K/M/G/T alone
// and *iB are powers of 1024, kB/MB/GB/TB are powers of 1000). Case
// insensitive except that "KB" and "kB" both mean 1000. Returns nullopt on
// malformed input or overflow. Sets *error (if given) to a reason.
std::optional<uint64_t> parse_bytes(std::string_view text,
                                    std::string* error = nullptr);

// "1.50 GiB", "512 B" ...
std::string format_bytes(uint64_t bytes);

// `value` as "0x" and lower-case hex digits ("0x7f3a00").
std::string hex(uint64_t value);

// Splits on any character of `separators`; empty pieces are dropped when
// `keep_empty` is false.
std::vector<std::string> split(std::string_view text,
                               std::string_view separators,
                               bool keep_empty = false);

std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);

// Parses an unsigned decimal integer; nullopt on anything else.
std::optional<uint64_t> parse_uint(std::string_view text);

// The environment variable, or nullopt when unset. Empty counts as set.
std::optional<std::string> env(const char* name);

// Copies `src` into the fixed char array `dst` of `capacity` bytes, always
// NUL-terminated, truncating if needed. A truncation never splits a UTF-8
// character: one that does not fit whole is left out (so `dst` may hold
// up to 3 bytes fewer than capacity - 1).
void copy_string(char* dst, size_t capacity, std::string_view src);

template <size_t N>
void copy_string(char (&dst)[N], std::string_view src) {
  copy_string(dst, N, src);
}

}  // namespace xal::common
