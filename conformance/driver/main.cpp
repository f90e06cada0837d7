// xal-conform: runs the conformance suite on every selected device, prints
// a summary per device, writes a JSON report and JUnit XML, and exits
// non-zero on any failure (2 on bad options). See docs/CONFORMANCE.md.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "child.hpp"
#include "inventory.hpp"
#include "known_failures.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "summary.hpp"
#include "xal_common/cli.hpp"

namespace fs = std::filesystem;
using namespace conform_driver;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

fs::path self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "xal-conform: %s\n", message.c_str());
  return kExitUsage;
}

// A temporary folder removed when the run ends.
class TempDir {
 public:
  TempDir() {
    // Absolute, whatever TMPDIR says: the suite is given paths inside it.
    std::string base =
        (fs::absolute(fs::temp_directory_path()) / "xal-conform-XXXXXX").string();
    if (::mkdtemp(base.data()) != nullptr) path_ = base;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty() && !keep_) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

int run(int argc, char** argv) {
  CLI::App app{"xal-conform: the xal conformance suite on every selected device"};
  std::string backend, report_path, junit_path, suite_path, known_path;
  std::vector<int> devices;
  std::vector<std::string> groups;
  std::string test;
  bool quick = false, list = false, verbose = false, keep_temp = false,
       strict = false, no_known = false, backend_dev = false;
  double timeout_s = 0;
  app.add_option("--backend", backend, "Test only the devices of this backend");
  app.add_option("--device", devices, "Test only this device (global index; repeatable)");
  app.add_option("--group", groups, "Run only this group (repeatable)");
  app.add_option("--test", test, "Run only this test (its name as --list prints it)");
  app.add_flag("--backend-dev", backend_dev,
               "For backend authors: one group (--group) or test (--test) of the backend "
               "named by --backend, every call of its plugin table traced to stderr with "
               "its arguments and status, stop at the first failure");
  app.add_flag("--quick", quick, "Quick mode for CI: fewer sizes and repetitions; "
                                 "parity targets reported, not checked");
  app.add_option("--report", report_path, "Write the JSON report to FILE");
  app.add_option("--junit", junit_path, "Write JUnit XML to FILE");
  app.add_flag("--list", list, "List the groups and tests, then exit");
  app.add_option("--known-failures", known_path,
                 "Known-failures file (default: share/xal/known_failures.json)");
  app.add_flag("--no-known-failures", no_known, "Ignore the known-failures file");
  app.add_flag("--fail-on-unexpected-pass", strict,
               "Exit non-zero when a known failure passes");
  app.add_option("--timeout", timeout_s, "Seconds one test may run before its process "
                                        "is killed and it is reported failed (default 600)")
      ->check(xal::common::Positive());
  app.add_option("--suite", suite_path, "Path of xal-conform-suite (default: beside xal-conform)");
  app.add_flag("--verbose", verbose, "Copy the suite's own output to stderr");
  app.add_flag("--keep-temp", keep_temp, "Keep the temporary folder of the run");
  if (const auto status = xal::common::parse_options(app, "xal-conform", argc, argv)) {
    return *status;
  }

  if (backend_dev) {
    if (backend.empty()) return usage_error("--backend-dev needs --backend NAME");
    if (groups.size() + (test.empty() ? 0 : 1) != 1) {
      return usage_error("--backend-dev runs one group (--group) or one test (--test)");
    }
    verbose = true;
  }
  // Output files are checked before anything runs.
  for (const std::string* path : {&report_path, &junit_path}) {
    if (path->empty()) continue;
    const std::string problem = check_writable(*path);
    if (!problem.empty()) return usage_error(problem);
  }
  const fs::path dir = self_dir();
  if (suite_path.empty()) suite_path = (dir / "xal-conform-suite").string();
  if (::access(suite_path.c_str(), X_OK) != 0) {
    return usage_error("the suite program " + suite_path + " is missing or not executable");
  }
  std::vector<KnownFailure> known;
  if (!no_known) {
    if (known_path.empty()) {
      for (const fs::path& p : {dir / ".." / "share" / "xal" / "known_failures.json"}) {
        if (fs::exists(p)) known_path = fs::weakly_canonical(p).string();
      }
    }
    if (!known_path.empty()) {
      std::string error;
      auto loaded = load_known_failures(known_path, error);
      if (!loaded) return usage_error(error);
      known = std::move(*loaded);
    }
  }

  std::string error;
  auto platform = collect_platform(error);
  if (!platform) return usage_error(error);
  error = select_devices(*platform, backend, devices);
  if (!error.empty()) return usage_error(error);

  TempDir temp;
  if (temp.path().empty()) return usage_error("cannot create a temporary folder");
  if (keep_temp) temp.keep();
  RunnerOptions options;
  options.suite_path = suite_path;
  options.work_dir = temp.path();
  options.test_timeout_s = timeout_s > 0 ? timeout_s : 600;
  options.group_timeout_s = group_time_limit(options.test_timeout_s);
  options.progress_tty = ::isatty(STDERR_FILENO) != 0;
  options.verbose = verbose;
  std::string selected;
  for (const DeviceEntry& d : platform->devices) {
    if (d.selected) selected += (selected.empty() ? "" : ",") + std::to_string(d.index);
  }
  options.env["XAL_CONFORM_DEVICES"] = selected;
  options.env["XAL_CONFORM_BACKEND"] = backend;
  options.env["XAL_CONFORM_QUICK"] = quick ? "1" : "0";
  if (backend_dev) {
    options.env["XAL_TRACE_ENTRIES"] = backend;  // the core's table tracing
    options.fail_fast = true;
  }

  TestList tests = list_tests(options);
  if (!tests.error.empty()) {
    std::fprintf(stderr, "xal-conform: %s\n", tests.error.c_str());
    return kExitFailed;
  }
  if (!test.empty()) {  // the list narrowed to that test
    const std::string group = group_of(test);
    const auto found = tests.tests.find(group);
    if (found == tests.tests.end() ||
        std::find(found->second.begin(), found->second.end(), test) == found->second.end()) {
      return usage_error("unknown test '" + test + "' (see --list)");
    }
    if (!groups.empty() && std::find(groups.begin(), groups.end(), group) == groups.end()) {
      return usage_error("the test '" + test + "' is not in the groups given");
    }
    tests.tests = {{group, {test}}};
    tests.groups = {group};
    groups = {group};
    options.listed_tests_only = true;
  }
  std::vector<std::string> run_list;
  for (const std::string& g : groups) {
    if (tests.tests.count(g) == 0) {
      std::string names;
      for (const auto& known_group : tests.groups) names += " " + known_group;
      return usage_error("unknown group '" + g + "'; groups:" + names);
    }
  }
  for (const std::string& g : tests.groups) {
    if (groups.empty() || std::find(groups.begin(), groups.end(), g) != groups.end()) {
      run_list.push_back(g);
    }
  }
  if (list) {
    for (const std::string& g : run_list) {
      std::printf("%s (%zu tests)\n", g.c_str(), tests.tests.at(g).size());
      for (const std::string& t : tests.tests.at(g)) std::printf("  %s\n", t.c_str());
    }
    return 0;
  }

  std::map<int, std::string> names;
  for (const DeviceEntry& d : platform->devices) {
    names[static_cast<int>(d.index)] = "d" + std::to_string(d.index);
  }
  std::fprintf(stderr, "xal-conform: %zu groups on %s (%s mode)\n", run_list.size(),
               selected.empty() ? "no device" : ("devices " + selected).c_str(),
               quick ? "quick" : "full");
  ReportContext context;
  context.mode = quick ? "quick" : "full";
  context.groups = run_list;
  context.command.assign(argv, argv + argc);
  context.known_failures_file = known_path;
  context.fail_on_unexpected_pass = strict;
  // The reports are written after each group too ("complete": false until
  // the end), so that a run killed from outside still leaves them.
  options.after_group = [&](const RunResult& so_far, size_t done) {
    if (done >= run_list.size()) return;  // the final reports follow
    RunResult partial = so_far;
    apply_known_failures(known, *platform, partial);
    ReportContext now = context;
    now.groups_not_run.assign(run_list.begin() + static_cast<std::ptrdiff_t>(done),
                              run_list.end());
    if (!report_path.empty()) (void)write_file(report_path, json_report(*platform, partial, now));
    if (!junit_path.empty()) (void)write_file(junit_path, junit_report(partial));
  };
  RunResult result = run_groups(options, tests, run_list, names);
  apply_known_failures(known, *platform, result);
  print_summary(stdout, *platform, result, context);
  int rc = run_failed(result, context) ? kExitFailed : 0;
  if (!report_path.empty()) {
    const std::string problem = write_file(report_path, json_report(*platform, result, context));
    if (!problem.empty()) {
      std::fprintf(stderr, "xal-conform: %s\n", problem.c_str());
      rc = kExitFailed;
    }
  }
  if (!junit_path.empty()) {
    const std::string problem = write_file(junit_path, junit_report(result));
    if (!problem.empty()) {
      std::fprintf(stderr, "xal-conform: %s\n", problem.c_str());
      rc = kExitFailed;
    }
  }
  if (keep_temp) std::fprintf(stderr, "xal-conform: temporary files kept in %s\n", temp.path().c_str());
  throw_if_stopped();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any child: SIGCHLD back to its default, stop signals caught (a
  // stop ends the running suite process and removes the temporary folder).
  install_signal_handlers();
  try {
    return run(argc, argv);
  } catch (const Stopped& e) {
    std::fprintf(stderr, "xal-conform: %s\n", e.what());
    return 128 + e.signal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xal-conform: %s\n", e.what());
    return kExitFailed;
  }
}
