#include "exposition.hpp"

#include <charconv>
#include <cmath>

namespace xal::exporter {

void Exposition::add(const std::string& name, const char* type,
                     const std::string& help, const Labels& labels,
                     double value) {
  add_text(name, type, help, labels, format_value(value));
}

void Exposition::add_count(const std::string& name, const char* type,
                           const std::string& help, const Labels& labels,
                           uint64_t value) {
  add_text(name, type, help, labels, std::to_string(value));
}

void Exposition::add_text(const std::string& name, const char* type,
                          const std::string& help, const Labels& labels,
                          const std::string& value) {
  Family* family = nullptr;
  for (Family& f : families_) {
    if (f.name == name) family = &f;
  }
  if (family == nullptr) {
    families_.push_back({name, type, help, {}});
    family = &families_.back();
  }
  std::string sample = name;
  if (!labels.empty()) {
    sample += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i != 0) sample += ',';
      sample += labels[i].first + "=\"" + escape_label_value(labels[i].second) +
                '"';
    }
    sample += '}';
  }
  sample += ' ';
  sample += value;
  family->samples.push_back(std::move(sample));
}

std::string Exposition::text() const {
  std::string out;
  for (const Family& f : families_) {
    std::string help;
    for (const char c : f.help) {
      if (c == '\\') {
        help += "\\\\";
      } else if (c == '\n') {
        help += "\\n";
      } else {
        help += c;
      }
    }
    out += "# HELP " + f.name + ' ' + help + '\n';
    out += "# TYPE " + f.name + ' ' + f.type + '\n';
    for (const std::string& s : f.samples) out += s + '\n';
  }
  return out;
}

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, r.ptr);
}

}  // namespace xal::exporter
