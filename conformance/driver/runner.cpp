// Running the suite in child processes (see runner.hpp).
#include "runner.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "child.hpp"

namespace conform_driver {
namespace {

using nlohmann::json;

// Groups in the order they run; others follow in listing order, and the
// timing-sensitive parity group always runs last.
const std::vector<std::string> kPreferredOrder = {
    "platform", "device", "memory", "copies", "streams_events",
    "errors",   "faults", "collectives"};

// Reads the lines a child appends to its events file.
class EventReader {
 public:
  explicit EventReader(std::string path) : path_(std::move(path)) {}
  std::vector<json> read_new() {
    std::vector<json> out;
    std::ifstream in(path_, std::ios::binary);
    if (!in) return out;
    in.seekg(offset_);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string chunk = buffer.str();
    offset_ += static_cast<std::streamoff>(chunk.size());
    partial_ += chunk;
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string line = partial_.substr(start, nl - start);
      json parsed = json::parse(line, nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object()) out.push_back(std::move(parsed));
    }
    partial_.erase(0, start);
    return out;
  }

 private:
  std::string path_;
  std::streamoff offset_ = 0;
  std::string partial_;
};

class Progress {
 public:
  Progress(size_t total, bool tty, const std::map<int, std::string>& names)
      : total_(total), tty_(tty), names_(names) {}
  ~Progress() {
    if (tty_ && shown_) std::fputs("\n", stderr);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void running(const std::string& group, const std::string& test,
               const std::vector<int>& devices) {
    if (!tty_) return;
    std::string line = "[" + std::to_string(done_ + 1) + "/" + std::to_string(total_) +
                       "] " + group + "  " + device_text(devices) + "  " + test;
    if (line.size() > 150) line = line.substr(0, 147) + "...";
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void finished(const TestResult& r) {
    ++done_;
    if (tty_) return;
    const int width = static_cast<int>(std::to_string(total_).size());
    std::fprintf(stderr, "[%*zu/%zu] %-15s %-16s %-15s %s\n", width, done_, total_,
                 r.group.c_str(), device_text(r.devices).c_str(), r.outcome.c_str(),
                 r.name.c_str());
  }

 private:
  std::string device_text(const std::vector<int>& devices) const {
    if (devices.empty()) return "(no device)";
    std::string text;
    for (int d : devices) {
      if (!text.empty()) text += " -> ";
      auto it = names_.find(d);
      text += it != names_.end() ? it->second : "d" + std::to_string(d);
    }
    return text;
  }

  size_t total_;
  size_t done_ = 0;
  bool tty_;
  bool shown_ = false;
  const std::map<int, std::string>& names_;
};

// Fields of an event read defensively: a line the suite wrote (or a
// non-finite number, which nlohmann writes as null) never throws.
std::string text_field(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<double> number_field(const json& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}
int device_field(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number_integer() ? it->get<int>() : -1;
}
std::vector<int> devices_field(const json& e, const char* key) {
  std::vector<int> out;
  const auto it = e.find(key);
  if (it == e.end() || !it->is_array()) return out;
  for (const json& d : *it)
    if (d.is_number_integer()) out.push_back(d.get<int>());
  return out;
}

std::string outcome_of(const std::string& gtest_outcome) {
  if (gtest_outcome == "passed") return kPassed;
  if (gtest_outcome == "skipped") return kUnsupported;
  return kFailed;
}

// `test_limit`: the running test passed its own time limit; else the
// group's limit ended the child.
std::string how_it_ended(const ChildResult& child, bool test_limit, double timeout_s) {
  const std::string secs = std::to_string(static_cast<int>(timeout_s));
  if (!child.wait_error.empty())
    return "cannot tell how the suite process ended (" + child.wait_error + ")";
  if (child.timed_out && test_limit)
    return "timed out: still running after " + secs + " s (the suite process was killed)";
  if (child.timed_out)
    return "timed out: the group passed its time limit of " + secs +
           " s while this ran (the suite process was killed)";
  if (child.signal != 0) return "killed by signal " + signal_text(child.signal);
  return "the suite process exited with code " + std::to_string(child.exit_code);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

double group_time_limit(double test_timeout_s) {
  return std::max(kGroupTimeLimitS, test_timeout_s + kGroupTimeMarginS);
}

TestList list_tests(const RunnerOptions& options) {
  TestList list;
  const std::string log = options.work_dir + "/list.txt";
  const ChildResult child =
      run_child({options.suite_path, "--gtest_list_tests"}, options.env, log, 300, nullptr);
  if (!child.started || child.exit_code != 0) {
    list.error = "the suite (" + options.suite_path + ") could not list its tests: " +
                 (child.started ? how_it_ended(child, true, 300) : child.start_error) + "\n" +
                 file_tail(log, 2000);
    return list;
  }
  std::ifstream in(log);
  std::string line, suite;
  std::vector<std::string> order;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) == 0) {
      if (suite.empty()) continue;
      std::string name = line.substr(2);
      name = name.substr(0, name.find_first_of(" #"));
      const std::string full = suite + name;
      const std::string group = group_of(full);
      if (list.tests.find(group) == list.tests.end()) order.push_back(group);
      list.tests[group].push_back(full);
    } else {
      const std::string head = line.substr(0, line.find(' '));
      suite = (!head.empty() && head.back() == '.') ? head : "";
    }
  }
  for (const auto& g : kPreferredOrder) {
    if (list.tests.count(g) != 0) list.groups.push_back(g);
  }
  for (const auto& g : order) {
    if (g != "parity" &&
        std::find(kPreferredOrder.begin(), kPreferredOrder.end(), g) == kPreferredOrder.end()) {
      list.groups.push_back(g);
    }
  }
  if (list.tests.count("parity") != 0) list.groups.push_back("parity");
  if (list.groups.empty()) {  // nothing would run, and nothing would fail
    list.error = "the suite (" + options.suite_path +
                 ") lists no tests: is it xal-conform-suite?";
  }
  return list;
}

RunResult run_groups(const RunnerOptions& options, const TestList& list,
                     const std::vector<std::string>& groups,
                     const std::map<int, std::string>& device_names) {
  RunResult run;
  const auto start = std::chrono::steady_clock::now();
  size_t total = 0;
  for (const auto& g : groups) total += list.tests.at(g).size();
  Progress progress(total, options.progress_tty, device_names);

  // --backend-dev: nothing more runs after the first failed test.
  auto stop_now = [&] {
    return options.fail_fast &&
           std::any_of(run.tests.begin(), run.tests.end(),
                       [](const TestResult& t) { return t.outcome == kFailed; });
  };
  for (const std::string& group : groups) {
    if (stop_now()) break;
    std::vector<std::string> remaining = list.tests.at(group);
    for (int attempt = 0; !remaining.empty() && !stop_now(); ++attempt) {
      const std::string stem = options.work_dir + "/" + group + "-" + std::to_string(attempt);
      const std::string events_path = stem + ".jsonl", log_path = stem + ".log";
      EventReader reader(events_path);
      std::map<std::string, TestResult> ended;
      std::string running;
      std::vector<int> running_devices;
      auto running_since = std::chrono::steady_clock::now();
      auto handle = [&](const json& e) {
        const std::string kind = text_field(e, "event");
        const std::string test = text_field(e, "test");
        if (kind == "start") {
          running = test;
          running_since = std::chrono::steady_clock::now();
          running_devices.clear();
          progress.running(group, test, running_devices);
        } else if (kind == "devices" && test == running) {
          running_devices = devices_field(e, "devices");
          progress.running(group, test, running_devices);
        } else if (kind == "figure") {
          Figure f;
          f.test = test;
          f.name = text_field(e, "name");
          f.value = number_field(e, "value");
          f.unit = text_field(e, "unit");
          f.device = device_field(e, "device");
          run.figures.push_back(std::move(f));
        } else if (kind == "end") {
          // After a failure in fail-fast mode the suite skips the rest: not
          // results (they did not run).
          if (options.fail_fast && (stop_now() || std::any_of(ended.begin(), ended.end(),
                                                              [](const auto& t) {
                                                                return t.second.outcome ==
                                                                       kFailed;
                                                              }))) {
            running.clear();
            return;
          }
          TestResult r;
          r.name = test;
          r.group = group_of(test);
          r.devices = test == running ? running_devices : std::vector<int>{};
          r.outcome = outcome_of(text_field(e, "outcome"));
          r.message = text_field(e, "message");
          r.duration_ms = number_field(e, "duration_ms").value_or(0.0);
          progress.finished(r);
          ended[test] = std::move(r);
          running.clear();
        }
      };
      // True when the running test is past its time limit.
      bool test_over = false;
      auto poll = [&] {
        for (const json& e : reader.read_new()) handle(e);
        test_over = !running.empty() &&
                    std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                  running_since).count() > options.test_timeout_s;
        return test_over;
      };
      std::map<std::string, std::string> env = options.env;
      env["XAL_CONFORM_EVENTS"] = events_path;
      const std::string filter = attempt == 0 && !options.listed_tests_only
                                     ? group + "/*:" + group + ".*"
                                     : join(remaining, ":");
      std::vector<std::string> args = {options.suite_path, "--gtest_filter=" + filter,
                                       "--gtest_color=no"};
      if (options.fail_fast) args.push_back("--gtest_fail_fast");
      const auto child_start = std::chrono::steady_clock::now();
      const ChildResult child =
          run_child(args, env, log_path, options.group_timeout_s, poll);
      if (options.verbose) std::fputs(file_tail(log_path, 1 << 20).c_str(), stderr);
      const double child_ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - child_start).count();
      const size_t progress_before = remaining.size();
      for (auto& [name, result] : ended) {
        remaining.erase(std::remove(remaining.begin(), remaining.end(), name), remaining.end());
        run.tests.push_back(std::move(result));
      }
      const bool abnormal = !child.started || child.timed_out || child.signal != 0 ||
                            !child.wait_error.empty() ||
                            (child.exit_code != 0 && child.exit_code != 1);
      const double limit = test_over ? options.test_timeout_s : options.group_timeout_s;
      const std::string how =
          child.started ? how_it_ended(child, test_over, limit) : child.start_error;
      const std::string tail = "\n--- suite output (tail) ---\n" + file_tail(log_path, 3000);
      if (!running.empty()) {
        TestResult r;
        r.name = running;
        r.group = group_of(running);
        r.devices = running_devices;
        r.outcome = kFailed;
        r.message = how + tail;
        progress.finished(r);
        run.tests.push_back(std::move(r));
        remaining.erase(std::remove(remaining.begin(), remaining.end(), running), remaining.end());
        continue;  // the rest of the group runs in a fresh process
      }
      if (remaining.empty()) {
        if (abnormal) {
          TestResult r;
          r.name = group + ".(suite process)";
          r.group = group;
          r.outcome = kFailed;
          r.message = how + " after the group's last test" + tail;
          r.duration_ms = child_ms;
          run.tests.push_back(std::move(r));
        }
        break;
      }
      if (remaining.size() == progress_before) {
        // No test could start: report every remaining test, do not loop.
        for (const std::string& name : remaining) {
          TestResult r;
          r.name = name;
          r.group = group;
          r.outcome = kFailed;
          r.message = "not run: " + how + " before the test started" + tail;
          progress.finished(r);
          run.tests.push_back(std::move(r));
        }
        break;
      }
    }
    if (options.after_group) {
      run.duration_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.after_group(run, static_cast<size_t>(&group - groups.data()) + 1);
    }
  }
  run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace conform_driver
