// A strict parser of the Prometheus text exposition format (0.0.4) for the
// tests: it rejects anything a careful scraper could misread.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace xal::exporter::test {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0.0;
};

struct Family {
  std::string name;
  std::string type;
  std::string help;
  std::vector<Sample> samples;
};

struct Parsed {
  std::vector<Family> families;
  std::vector<std::string> errors;  // "line N: why"; empty when valid

  const Family* family(const std::string& name) const;
  // Samples of `name` whose labels include every pair of `match`.
  std::vector<Sample> find(const std::string& name,
                           const std::map<std::string, std::string>& match =
                               {}) const;
};

// Checks: every line is a comment (# HELP / # TYPE) or a sample
// `name{labels} value`; names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
// [a-zA-Z_][a-zA-Z0-9_]*; label values are valid UTF-8; each family has HELP then TYPE before its
// samples, once; samples of a family are contiguous; counters end in
// _total; no series appears twice; values parse; the text ends in '\n'.
Parsed parse_exposition(const std::string& text);

}  // namespace xal::exporter::test
