#include "prom_parser.hpp"

#include <cmath>
#include <cstdint>
#include <regex>
#include <set>
#include <sstream>

namespace xal::exporter::test {
namespace {

const std::regex kMetricName("[a-zA-Z_:][a-zA-Z0-9_:]*");
const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");

bool parse_value(const std::string& text, double* out) {
  if (text == "NaN") {
    *out = std::nan("");
    return true;
  }
  if (text == "+Inf" || text == "-Inf") {
    *out = text[0] == '+' ? INFINITY : -INFINITY;
    return true;
  }
  try {
    size_t used = 0;
    *out = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

// True when `text` is well-formed UTF-8: decodes each character and
// rejects truncated sequences, overlong forms, surrogates and code points
// past U+10FFFF.
bool valid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 1;
    uint32_t cp = c;
    if (c >= 0xF0) {
      len = 4, cp = c & 0x07u;
    } else if (c >= 0xE0) {
      len = 3, cp = c & 0x0Fu;
    } else if (c >= 0xC0) {
      len = 2, cp = c & 0x1Fu;
    } else if (c >= 0x80) {
      return false;  // a continuation byte without a lead
    }
    if (c >= 0xF8 || i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

// Parses `{a="x",b="y"}` from text[pos] (at '{'); advances pos past '}'.
bool parse_labels(const std::string& text, size_t& pos,
                  std::map<std::string, std::string>& labels,
                  std::string& why) {
  ++pos;  // '{'
  while (pos < text.size() && text[pos] != '}') {
    const size_t eq = text.find('=', pos);
    if (eq == std::string::npos) return why = "label without '='", false;
    const std::string name = text.substr(pos, eq - pos);
    if (!std::regex_match(name, kLabelName)) {
      return why = "bad label name '" + name + "'", false;
    }
    if (eq + 1 >= text.size() || text[eq + 1] != '"') {
      return why = "label value not quoted", false;
    }
    std::string value;
    size_t i = eq + 2;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\') {
        if (i + 1 >= text.size()) return why = "dangling escape", false;
        const char c = text[++i];
        if (c == 'n') {
          value += '\n';
        } else if (c == '\\' || c == '"') {
          value += c;
        } else {
          return why = std::string("bad escape \\") + c, false;
        }
      } else {
        value += text[i];
      }
    }
    if (i >= text.size()) return why = "unterminated label value", false;
    if (!valid_utf8(value)) return why = "invalid UTF-8 label value", false;
    if (!labels.emplace(name, value).second) {
      return why = "label '" + name + "' twice", false;
    }
    pos = i + 1;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  if (pos >= text.size()) return why = "missing '}'", false;
  ++pos;
  return true;
}

}  // namespace

const Family* Parsed::family(const std::string& name) const {
  for (const Family& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<Sample> Parsed::find(
    const std::string& name,
    const std::map<std::string, std::string>& match) const {
  std::vector<Sample> out;
  const Family* f = family(name);
  if (f == nullptr) return out;
  for (const Sample& s : f->samples) {
    bool ok = true;
    for (const auto& [k, v] : match) {
      const auto it = s.labels.find(k);
      ok = ok && it != s.labels.end() && it->second == v;
    }
    if (ok) out.push_back(s);
  }
  return out;
}

Parsed parse_exposition(const std::string& text) {
  Parsed p;
  std::set<std::string> seen_families;
  std::set<std::string> series;
  std::map<std::string, std::string> pending_help;  // HELP before TYPE
  Family* current = nullptr;
  std::istringstream in(text);
  std::string line;
  size_t n = 0;
  auto fail = [&](const std::string& why) {
    p.errors.push_back("line " + std::to_string(n) + ": " + why + ": " + line);
  };
  if (!text.empty() && text.back() != '\n') {
    p.errors.push_back("the text does not end in a newline");
  }
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, kind, name;
      words >> hash >> kind >> name;
      if (kind != "HELP" && kind != "TYPE") continue;  // plain comment
      if (!std::regex_match(name, kMetricName)) {
        fail("bad metric name");
        continue;
      }
      std::string rest;
      std::getline(words, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (kind == "HELP") {
        if (seen_families.count(name) != 0 || pending_help.count(name) != 0) {
          fail("second HELP for " + name);
        }
        pending_help[name] = rest;
        continue;
      }
      static const std::set<std::string> kTypes{"counter", "gauge", "histogram",
                                                "summary", "untyped"};
      if (kTypes.count(rest) == 0) fail("unknown type '" + rest + "'");
      if (pending_help.count(name) == 0) fail("TYPE without HELP before it");
      if (!seen_families.insert(name).second) fail("second TYPE for " + name);
      if (rest == "counter" && !name.ends_with("_total")) {
        fail("counter " + name + " does not end in _total");
      }
      p.families.push_back({name, rest, pending_help[name], {}});
      pending_help.erase(name);
      current = &p.families.back();
      continue;
    }
    size_t pos = 0;
    while (pos < line.size() && line[pos] != '{' && line[pos] != ' ') ++pos;
    Sample s;
    s.name = line.substr(0, pos);
    if (!std::regex_match(s.name, kMetricName)) {
      fail("bad metric name");
      continue;
    }
    std::string why;
    if (pos < line.size() && line[pos] == '{' &&
        !parse_labels(line, pos, s.labels, why)) {
      fail(why);
      continue;
    }
    if (pos >= line.size() || line[pos] != ' ') {
      fail("no space before the value");
      continue;
    }
    const std::string value = line.substr(pos + 1);
    if (value.find(' ') != std::string::npos) {
      fail("a timestamp or extra field is not expected");
      continue;
    }
    if (!parse_value(value, &s.value)) {
      fail("bad value '" + value + "'");
      continue;
    }
    if (current == nullptr || current->name != s.name) {
      fail("sample outside its family (no HELP/TYPE just before, or the "
           "family's samples are not together)");
      continue;
    }
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) fail("duplicate series");
    current->samples.push_back(std::move(s));
  }
  for (const auto& [name, help] : pending_help) {
    p.errors.push_back("HELP for " + name + " without TYPE");
  }
  return p;
}

}  // namespace xal::exporter::test
