// JSON report and JUnit XML (see report.hpp).
#include "report.hpp"

#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace conform_driver {
namespace {

using nlohmann::json;

std::string version_text(uint32_t v) {
  return std::to_string(v >> 16) + "." + std::to_string(v & 0xffffu);
}

// The length (2 to 4) of the UTF-8 character of more than one byte at
// text[i], 0 when the bytes there are not one (a stray or cut byte, an
// overlong form, a surrogate, past U+10FFFF) or it is U+FFFE or U+FFFF,
// which XML does not allow either.
size_t xml_utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t code = 0, least = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, code = c & 0x1Fu, least = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, code = c & 0x0Fu, least = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, code = c & 0x07u, least = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  const bool allowed = code >= least && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF) &&
                       code != 0xFFFE && code != 0xFFFF;
  return allowed ? n : 0;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Text that is not UTF-8 (a suite's output) would make the file
      // unreadable to XML parsers: a byte that is not part of a character
      // becomes U+FFFD.
      const size_t n = xml_utf8_length(text, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(text, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

namespace {

json counts_json(const Counts& c) {
  return {{"total", c.total},         {"passed", c.passed},
          {"failed", c.failed},       {"unsupported", c.unsupported},
          {"known_failure", c.known_failure}, {"unexpected_pass", c.unexpected_pass}};
}

}  // namespace

void Counts::add(const std::string& outcome) {
  ++total;
  if (outcome == kPassed) ++passed;
  else if (outcome == kUnsupported) ++unsupported;
  else if (outcome == kKnownFailure) ++known_failure;
  else if (outcome == kUnexpectedPass) ++unexpected_pass;
  else ++failed;
}

Counts count(const RunResult& run) {
  Counts c;
  for (const TestResult& t : run.tests) c.add(t.outcome);
  return c;
}

bool run_failed(const RunResult& run, const ReportContext& context) {
  const Counts c = count(run);
  return c.failed > 0 || (context.fail_on_unexpected_pass && c.unexpected_pass > 0);
}

std::string json_report(const Platform& platform, const RunResult& run,
                        const ReportContext& context) {
  json doc;
  doc["tool"] = "xal-conform";
  doc["report_version"] = 1;
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  doc["finished_at"] = stamp;
  doc["mode"] = context.mode;
  doc["command"] = context.command;
  doc["duration_s"] = run.duration_s;
  doc["xal_abi_version"] = version_text(platform.abi_version);
  doc["xal_abi_version_number"] = platform.abi_version;
  doc["device_selector"] = platform.selector;
  doc["known_failures_file"] = context.known_failures_file;
  doc["groups"] = context.groups;
  doc["complete"] = context.groups_not_run.empty();
  doc["groups_not_run"] = context.groups_not_run;
  json backends = json::array();
  for (const BackendEntry& b : platform.backends) {
    backends.push_back({{"name", b.name},
                        {"version", b.version},
                        {"path", b.path},
                        {"state", b.state},
                        {"status", b.status},
                        {"reason", b.reason},
                        {"abi_version", version_text(b.abi_version)},
                        {"device_count", b.device_count},
                        {"flags", b.flags},
                        {"simulated", b.simulated},
                        {"driver_version", b.driver_version}});
  }
  doc["backends"] = backends;
  json devices = json::array();
  for (const DeviceEntry& d : platform.devices) {
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"vendor", d.vendor},
                       {"backend", d.backend},
                       {"uuid", d.uuid},
                       {"memory_bytes", d.memory_bytes},
                       {"peak_memory_bandwidth_gbps", d.peak_memory_bandwidth_gbps},
                       {"capabilities", d.capabilities},
                       {"simulated", d.simulated},
                       {"selected", d.selected}});
  }
  doc["devices"] = devices;
  json tests = json::array();
  std::map<std::string, Counts> by_group;
  std::map<std::string, Counts> by_device;
  for (const TestResult& t : run.tests) {
    json entry = {{"name", t.name},          {"group", t.group},
                  {"outcome", t.outcome},    {"message", t.message},
                  {"duration_ms", t.duration_ms}, {"devices", t.devices}};
    entry["device"] = t.devices.empty() ? json(nullptr) : json(t.devices.front());
    std::vector<std::string> backend_names;
    for (int d : t.devices) {
      for (const DeviceEntry& dev : platform.devices) {
        if (static_cast<int>(dev.index) == d) backend_names.push_back(dev.backend);
      }
    }
    entry["backends"] = backend_names;
    if (!t.known_failure_reason.empty()) entry["known_failure_reason"] = t.known_failure_reason;
    tests.push_back(std::move(entry));
    by_group[t.group].add(t.outcome);
    by_device[t.devices.empty() ? "none" : std::to_string(t.devices.front())].add(t.outcome);
  }
  doc["tests"] = tests;
  json figures = json::array();
  for (const Figure& f : run.figures) {
    // A figure the suite gave no finite number for: value null.
    json entry = {{"test", f.test}, {"name", f.name},
                  {"value", f.value ? json(*f.value) : json(nullptr)},
                  {"unit", f.unit}, {"group", group_of(f.test)}};
    entry["device"] = f.device >= 0 ? json(f.device) : json(nullptr);
    figures.push_back(std::move(entry));
  }
  doc["figures"] = figures;
  json summary = counts_json(count(run));
  for (const auto& [g, c] : by_group) summary["by_group"][g] = counts_json(c);
  for (const auto& [d, c] : by_device) summary["by_device"][d] = counts_json(c);
  doc["summary"] = summary;
  doc["result"] = run_failed(run, context) ? "failed" : "passed";
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string junit_report(const RunResult& run) {
  std::map<std::string, std::vector<const TestResult*>> groups;
  std::vector<std::string> order;
  for (const TestResult& t : run.tests) {
    if (groups.find(t.group) == groups.end()) order.push_back(t.group);
    groups[t.group].push_back(&t);
  }
  const Counts all = count(run);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"xal-conform\" tests=\"" + std::to_string(all.total) +
         "\" failures=\"" + std::to_string(all.failed) + "\" skipped=\"" +
         std::to_string(all.unsupported + all.known_failure) + "\" time=\"" +
         std::to_string(run.duration_s) + "\">\n";
  for (const std::string& g : order) {
    Counts c;
    double seconds = 0;
    for (const TestResult* t : groups[g]) {
      c.add(t->outcome);
      seconds += t->duration_ms / 1000.0;
    }
    out += "  <testsuite name=\"" + xml_escape(g) + "\" tests=\"" + std::to_string(c.total) +
           "\" failures=\"" + std::to_string(c.failed) + "\" skipped=\"" +
           std::to_string(c.unsupported + c.known_failure) + "\" time=\"" +
           std::to_string(seconds) + "\">\n";
    for (const TestResult* t : groups[g]) {
      out += "    <testcase classname=\"" + xml_escape(g) + "\" name=\"" + xml_escape(t->name) +
             "\" time=\"" + std::to_string(t->duration_ms / 1000.0) + "\"";
      if (t->outcome == kPassed) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (t->outcome == kFailed) {
        out += "      <failure message=\"" + xml_escape(t->message.substr(0, t->message.find('\n'))) +
               "\">" + xml_escape(t->message) + "</failure>\n";
      } else if (t->outcome == kUnsupported) {
        out += "      <skipped message=\"" + xml_escape(t->message) + "\"/>\n";
      } else if (t->outcome == kKnownFailure) {
        out += "      <skipped message=\"known failure: " + xml_escape(t->known_failure_reason) +
               "\"/>\n      <system-out>" + xml_escape(t->message) + "</system-out>\n";
      } else {
        out += "      <system-out>unexpected pass of a known failure: " +
               xml_escape(t->known_failure_reason) + "</system-out>\n";
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string final_path(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int links = 0; links < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++links) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.string();
}

std::string check_writable(const std::string& path) {
  const std::string target = final_path(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + ": is a directory";
  // The file, and the temporary file beside it that write_file renames
  // over it.
  const std::string temp = target + ".tmp";
  for (const std::string& file : {target, temp}) {
    const bool existed = ::lstat(file.c_str(), &st) == 0;
    std::ofstream out(file, std::ios::app);
    if (!out) {
      return path + ": cannot be written (" + (file == temp ? temp + ": " : "") +
             std::strerror(errno) + ")";
    }
    out.close();
    if (!existed) ::unlink(file.c_str());
  }
  return {};
}

std::string write_file(const std::string& path, const std::string& text) {
  // Written beside it and renamed over it: a reader (or a run killed while
  // writing) never sees half a report. Beside the file a symbolic link
  // names, so that the link stays.
  const std::string target = final_path(path);
  const std::string temp = target + ".tmp";
  std::ofstream out(temp, std::ios::trunc | std::ios::binary);
  if (!out) return path + ": cannot be written (" + std::strerror(errno) + ")";
  out << text;
  out.close();
  if (!out) return path + ": write failed";
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    return path + ": cannot be written (" + why + ")";
  }
  return {};
}

}  // namespace conform_driver
