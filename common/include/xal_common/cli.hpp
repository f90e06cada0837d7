// What the command-line programs share for their options (CLI11): the same
// exit status for bad options in every tool, and number checks whose
// messages read well. Header-only; include it only where CLI11 is linked.
#ifndef XAL_COMMON_CLI_HPP_
#define XAL_COMMON_CLI_HPP_

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace xal::common {

// The exit status of a program given options it does not accept.
inline constexpr int kExitBadOptions = 2;

// Parses `argv` into `app`. Returns nothing when the program should go on;
// otherwise the status to exit with: 0 after --help or --version (printed
// by CLI11), kExitBadOptions after a bad option, with "<tool>: <why>" and a
// pointer to --help on stderr.
inline std::optional<int> parse_options(CLI::App& app, const char* tool, int argc,
                                        char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::cerr << tool << ": " << e.what() << "\nRun with --help for the options.\n";
    return kExitBadOptions;
  }
}

// A check that an option's value is a finite number (NaN and infinities are
// not) of at least `min`, or above it where `strict`: "must be at least 1,
// not 0".
inline CLI::Validator NumberFrom(double min, bool strict) {
  std::ostringstream bound;
  bound << min;
  const std::string words = (strict ? "more than " : "at least ") + bound.str();
  return CLI::Validator(
      [min, strict, words](std::string& value) -> std::string {
        double number = 0;
        if (!CLI::detail::lexical_cast(value, number) || !std::isfinite(number)) {
          return "must be a number, not '" + value + "'";
        }
        if (number < min || (strict && number == min)) return "must be " + words + ", not " + value;
        return {};
      },
      std::string("NUMBER ") + (strict ? "> " : ">= ") + bound.str());
}

// At least `min` (a count: AtLeast(1)).
inline CLI::Validator AtLeast(double min) { return NumberFrom(min, false); }

// More than 0 (a duration, a period).
inline CLI::Validator Positive() { return NumberFrom(0, true); }

// A whole number from 0 to 2^64-1 written in decimal digits only: CLI11's
// own conversion into an unsigned option takes "-3" as 2^64-3 and clamps
// values past the top.
inline CLI::Validator WholeNumber() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        uint64_t number = 0;
        const char* end = value.data() + value.size();
        const auto [at, error] = std::from_chars(value.data(), end, number);
        if (value.empty() || error == std::errc::invalid_argument || at != end) {
          return "must be a whole number (0 or more), not '" + value + "'";
        }
        if (error == std::errc::result_out_of_range) {
          return "must be at most " + std::to_string(UINT64_MAX) + ", not " + value;
        }
        return {};
      },
      "UINT");
}

// A check that the file an option names can be written, so that a long run
// does not find out at its end: an existing file is opened for appending
// and left as it is, a new one is created and removed again. "-" (standard
// output) passes.
inline CLI::Validator WritableFile() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path == "-") return {};
        const bool existed = ::access(path.c_str(), F_OK) == 0;
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return "cannot write " + path + ": " + std::strerror(errno);
        ::close(fd);
        if (!existed) ::unlink(path.c_str());
        return {};
      },
      "FILE");
}

}  // namespace xal::common

#endif  // XAL_COMMON_CLI_HPP_
