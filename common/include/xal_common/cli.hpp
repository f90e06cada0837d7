// What the command-line programs share for their options (CLI11): the same
// exit status for bad options in every tool, and number checks whose
// messages read well. Header-only; include it only where CLI11 is linked.
#ifndef XAL_COMMON_CLI_HPP_
#define XAL_COMMON_CLI_HPP_

#include <CLI/CLI.hpp>
#include <cmath>
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

// A check that an option's value is a number (NaN is not) of at least
// `min`, or above it where `strict`: "must be at least 1, not 0".
inline CLI::Validator NumberFrom(double min, bool strict) {
  std::ostringstream bound;
  bound << min;
  const std::string words = (strict ? "more than " : "at least ") + bound.str();
  return CLI::Validator(
      [min, strict, words](std::string& value) -> std::string {
        double number = 0;
        if (!CLI::detail::lexical_cast(value, number) || std::isnan(number)) {
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

}  // namespace xal::common

#endif  // XAL_COMMON_CLI_HPP_
