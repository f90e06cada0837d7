// Known failures: per backend, a test name pattern and the reason. A known
// failure that fails is reported as "known-failure", one that passes as
// "unexpected-pass".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model.hpp"

namespace conform_driver {

struct KnownFailure {
  std::string backend;  // backend name, or "*" for any (and for platform tests)
  std::string test;     // glob over the full test name
  std::string reason;
};

// Parses a known-failures file:
//   {"known_failures": [{"backend": "mock", "test": "copies/*", "reason": "..."}]}
// On error returns nullopt and sets `error` (file, place, what was expected).
std::optional<std::vector<KnownFailure>> load_known_failures(const std::string& path,
                                                             std::string& error);

// Rewrites outcomes of `run` that match an entry. `platform` gives each
// device's backend.
void apply_known_failures(const std::vector<KnownFailure>& known,
                          const Platform& platform, RunResult& run);

}  // namespace conform_driver
