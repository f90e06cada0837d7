// Prometheus text exposition format (version 0.0.4) of a telemetry
// Snapshot: metric families with HELP and TYPE, samples grouped by family,
// labels escaped. Only fields whose valid bit is set are exported.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "snapshot.hpp"

namespace xal::exporter {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Builds one exposition. Families appear in the order first declared;
// samples of a family stay together. Not thread-safe (one per scrape).
class Exposition {
 public:
  // Declares a family (name, "gauge" or "counter", help) and adds a sample.
  void add(const std::string& name, const char* type, const std::string& help,
           const Labels& labels, double value);
  // The same for an integer value (exact beyond 2^53).
  void add_count(const std::string& name, const char* type,
                 const std::string& help, const Labels& labels,
                 uint64_t value);

  // The text, ending in a newline.
  std::string text() const;

 private:
  struct Family {
    std::string name;
    std::string type;
    std::string help;
    std::vector<std::string> samples;
  };
  void add_text(const std::string& name, const char* type,
                const std::string& help, const Labels& labels,
                const std::string& value);
  std::vector<Family> families_;
};

// Escapes a label value: backslash, double quote and newline. A byte that
// is not part of a well-formed UTF-8 character becomes U+FFFD, so the
// value is always valid UTF-8 (Prometheus rejects a scrape otherwise).
std::string escape_label_value(const std::string& value);

// A sample value as Prometheus reads it (integers exactly, NaN, +Inf).
std::string format_value(double value);

// The full exposition of `snap`, plus exporter self metrics
// (`scrape_seconds`: how long reading the snapshot took).
std::string render_exposition(const telemetry::Snapshot& snap,
                              double scrape_seconds);

// The per-job and per-process families of snap.jobs (job_families.cpp).
void job_families(const telemetry::Snapshot& snap, Exposition& e);

// The Content-Type of the format.
inline constexpr const char* kContentType =
    "text/plain; version=0.0.4; charset=utf-8";

}  // namespace xal::exporter
