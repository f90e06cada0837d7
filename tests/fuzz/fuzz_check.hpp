// Shared by every fuzz target: the libFuzzer entry point's signature, a
// check that stops the run on a broken contract, and ways to hand an input
// to parsers that read text or files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// Stops the process with a message when `cond` is false: libFuzzer keeps
// the input as a crash, the regression runner reports the failing file.
#define XAL_FUZZ_CHECK(cond, what)                                          \
  do {                                                                      \
    if (!(cond)) ::xal::fuzz::check_failed(#cond, (what), __FILE__, __LINE__); \
  } while (0)

namespace xal::fuzz {

[[noreturn]] inline void check_failed(const char* cond, std::string_view what,
                                      const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s: %.*s\n", file, line,
               cond, static_cast<int>(what.size()), what.data());
  std::abort();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// An error message must say something: not empty, and not only blanks.
inline bool says_something(std::string_view message) {
  return message.find_first_not_of(" \t\r\n") != std::string_view::npos;
}

}  // namespace xal::fuzz
