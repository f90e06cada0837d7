// Known failures (see known_failures.hpp).
#include "known_failures.hpp"

#include <fnmatch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace conform_driver {

std::optional<std::vector<KnownFailure>> load_known_failures(const std::string& path,
                                                             std::string& error) {
  // A folder opens as a stream without error; reading it then throws.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a known-failures file";
    return std::nullopt;
  }
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return std::nullopt;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    error = path + ": " + e.what();
    return std::nullopt;
  } catch (const std::exception& e) {  // a read error (std::ios_base::failure)
    error = path + ": cannot be read: " + e.what();
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("known_failures") || !doc["known_failures"].is_array()) {
    error = path + ": expected an object with an array \"known_failures\"";
    return std::nullopt;
  }
  std::vector<KnownFailure> out;
  const auto& list = doc["known_failures"];
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& entry = list[i];
    const std::string where = path + ": /known_failures/" + std::to_string(i);
    if (!entry.is_object()) {
      error = where + ": expected an object";
      return std::nullopt;
    }
    KnownFailure k;
    for (const char* key : {"backend", "test", "reason"}) {
      if (!entry.contains(key) || !entry[key].is_string() ||
          entry[key].get<std::string>().empty()) {
        error = where + ": expected a non-empty string \"" + key + "\"";
        return std::nullopt;
      }
    }
    k.backend = entry["backend"].get<std::string>();
    k.test = entry["test"].get<std::string>();
    k.reason = entry["reason"].get<std::string>();
    out.push_back(std::move(k));
  }
  return out;
}

void apply_known_failures(const std::vector<KnownFailure>& known,
                          const Platform& platform, RunResult& run) {
  for (TestResult& t : run.tests) {
    if (t.outcome != kPassed && t.outcome != kFailed) continue;
    for (const KnownFailure& k : known) {
      if (fnmatch(k.test.c_str(), t.name.c_str(), 0) != 0) continue;
      bool backend_matches = k.backend == "*";
      for (int d : t.devices) {
        for (const DeviceEntry& dev : platform.devices) {
          if (static_cast<int>(dev.index) == d && dev.backend == k.backend) {
            backend_matches = true;
          }
        }
      }
      if (!backend_matches) continue;
      t.known_failure_reason = k.reason;
      t.outcome = t.outcome == kFailed ? kKnownFailure : kUnexpectedPass;
      break;
    }
  }
}

}  // namespace conform_driver
