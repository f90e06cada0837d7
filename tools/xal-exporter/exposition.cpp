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

namespace {

// Length of the well-formed UTF-8 character at value[pos] (RFC 3629: no
// overlong forms, surrogates or code points past U+10FFFF), 0 if there is
// none.
size_t utf8_length(const std::string& value, size_t pos) {
  const auto byte = [&](size_t i) {
    return i < value.size() ? static_cast<unsigned char>(value[i]) : 0u;
  };
  const unsigned c = byte(pos);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (byte(pos + 1) < lo || byte(pos + 1) > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    const size_t len = utf8_length(value, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(value, i, len);
      i += len;
      continue;
    }
    const char c = value[i++];
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
