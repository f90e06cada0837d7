#include "commands.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "log_summary.hpp"
#include "ops.hpp"
#include "plan.hpp"
#include "runner.hpp"

namespace xal::faulttool {
namespace {

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

nlohmann::json outcome_json(const Outcome& o, double timeout_s) {
  nlohmann::json j;
  j["started"] = o.started;
  if (!o.started) j["start_error"] = o.start_error;
  j["exit_code"] = o.signal == 0 && !o.timed_out && o.started && o.stopped_by == 0 &&
                           o.wait_error.empty()
                       ? nlohmann::json(o.exit_code)
                       : nlohmann::json(nullptr);
  j["signal"] = o.signal;
  if (o.stopped_by != 0) j["stopped_by"] = o.stopped_by;
  j["timed_out"] = o.timed_out;
  j["seconds"] = o.seconds;
  j["ended"] = describe(o, timeout_s);
  return j;
}

std::string default_error(const std::string& op) {
  if (op.find("alloc") != std::string::npos) return "OUT_OF_MEMORY";
  for (size_t i = 0; i < fault::kOpCount; ++i) {
    const auto o = static_cast<fault::Op>(i);
    if (fault::op_matches(op, o) &&
        (fault::op_is_sync(o) || o == fault::Op::allreduce ||
         o == fault::Op::broadcast || o == fault::Op::reduce ||
         o == fault::Op::allgather || o == fault::Op::reduce_scatter ||
         o == fault::Op::alltoall)) {
      return "TIMEOUT";
    }
  }
  return "BACKEND";
}

// Flushes stdout: false, with a message on stderr, when the report could
// not be written there (a full disk, say).
bool stdout_written(const char* who) {
  errno = 0;
  std::cout.flush();
  const int err = errno;
  if (std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return true;
  std::cerr << who << ": cannot write the report to stdout"
            << (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) << "\n";
  return false;
}

// A run stopped by a signal (Outcome::stop_signal): xal-fault stops too.
int stopped(const char* who, int signal) {
  std::cerr << who << ": stopped by " << signal_name(signal) << "\n";
  return 128 + signal;
}

// The JSON report: bytes that are not UTF-8 (in an argument, say) as U+FFFD.
std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Why `path` cannot receive the injection log (a missing folder, no
// permission, a directory); "" when it can. Creates the file if missing.
std::string log_problem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write the log '" + path + "': " + std::strerror(errno);
  ::close(fd);
  return "";
}

// Why the fault backend injected nothing in the command; "" when it started.
// It writes its log from its start, or a line saying why it could not start,
// so a log that was never created means the command never started it.
std::string fault_backend_problem(const LogSummary& log, const Outcome& out,
                                  const std::map<std::string, std::string>& env) {
  if (!log.start_failures.empty()) return log.start_failures.front();
  // A command killed early may not have reached xal_init yet.
  if (log.found || out.timed_out || out.signal != 0) return "";
  const auto it = env.find("XAL_BACKENDS");
  const char* user = std::getenv("XAL_BACKENDS");
  const std::string backends = it != env.end() ? it->second : user != nullptr ? user : "";
  return "no fault log was written: the command did not call xal_init with the "
         "fault backend (XAL_BACKENDS=" + backends + ")";
}

}  // namespace

std::string temp_log_path(const std::string& tag) {
  // Absolute: the command may change its directory before it writes.
  const char* dir = std::getenv("TMPDIR");
  std::string pattern =
      std::filesystem::absolute(dir != nullptr && *dir ? dir : "/tmp").string() +
      "/xal-fault-" + tag + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary log file");
  ::close(fd);
  std::remove(buf.data());
  return std::string(buf.data());
}

std::map<std::string, std::string> run_environment(const CommonOptions& o,
                                                   const std::string& faults,
                                                   const std::string& log) {
  std::map<std::string, std::string> env;
  std::string target = o.target;
  if (!o.plan.empty()) {
    const auto plan = fault::parse_plan_file(o.plan);  // refuse bad plans now
    if (target.empty()) target = plan.target;
    env["XAL_FAULT_PLAN"] = std::filesystem::absolute(o.plan).string();
  }
  if (!faults.empty()) {
    const auto plan = fault::parse_plan_compact(faults, "--faults");
    if (target.empty()) target = plan.target;
    env["XAL_FAULTS"] = faults;
  } else if (!o.plan.empty()) {
    env["XAL_FAULTS"] = "";  // a stray XAL_FAULTS must not add rules
  }
  if (target.empty()) target = "mock";
  env["XAL_FAULT_LOG"] = log;
  if (o.seed) env["XAL_FAULT_SEED"] = std::to_string(*o.seed);
  const char* backends = std::getenv("XAL_BACKENDS");
  if (backends == nullptr || *backends == '\0') {
    env["XAL_BACKENDS"] = "fault:" + target;
  }
  return env;
}

int command_run(const RunOptions& options) {
  const auto& o = options.common;
  if (o.plan.empty() && o.faults.empty() && std::getenv("XAL_FAULT_PLAN") == nullptr &&
      std::getenv("XAL_FAULTS") == nullptr) {
    std::cerr << "xal-fault run: give --plan and/or --faults\n";
    return 2;
  }
  if (o.timeout_s < 0) {
    std::cerr << "xal-fault run: --timeout must be >= 0\n";
    return 2;
  }
  const bool keep = !options.log.empty();
  // Absolute: the command may change its directory before it writes.
  const std::string log =
      keep ? std::filesystem::absolute(options.log).string() : temp_log_path("run");
  std::map<std::string, std::string> env;
  try {
    env = run_environment(o, o.faults, log);
  } catch (const fault::PlanError& e) {
    std::cerr << "xal-fault run: plan refused: " << e.what() << "\n";
    return 2;
  }
  if (keep) {
    const std::string problem = log_problem(log);
    if (!problem.empty()) {
      std::cerr << "xal-fault run: " << problem << "\n";
      return 2;
    }
    std::remove(log.c_str());  // a fresh log for this run
  }
  const Outcome out = run_command(o.command, env, o.timeout_s, o.quiet);
  const LogSummary summary = summarize_log(log);
  if (!keep) std::remove(log.c_str());
  if (out.stop_signal != 0) return stopped("xal-fault run", out.stop_signal);
  if (!out.started) {
    std::cerr << "xal-fault run: " << out.start_error << "\n";
    return 127;
  }
  if (!out.wait_error.empty()) {
    std::cerr << "xal-fault run: cannot tell how the command ended: " << out.wait_error
              << "\n";
    return 2;
  }
  const std::string not_started = fault_backend_problem(summary, out, env);
  if (o.json) {
    nlohmann::json j;
    j["command"] = o.command;
    j["outcome"] = outcome_json(out, o.timeout_s);
    j["injections"] = summary.injections;
    j["rules"] = nlohmann::json::object();
    for (const auto& [name, r] : summary.rules) {
      j["rules"][name] = {{"fired", r.fired},
                          {"operations", r.operations},
                          {"actions", r.actions}};
    }
    if (keep && summary.found) j["log"] = log;
    if (!not_started.empty()) j["fault_backend_error"] = not_started;
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << "xal-fault: " << command_text(o.command) << "\n"
              << "  ended: " << describe(out, o.timeout_s) << " after "
              << out.seconds << " s\n"
              << "  injections: " << summary.injections << "\n";
    for (const auto& [name, r] : summary.rules) {
      std::cout << "    rule '" << name << "': " << r.fired << " (";
      bool first = true;
      for (const auto& [op, n] : r.operations) {
        std::cout << (first ? "" : ", ") << op << " x" << n;
        first = false;
      }
      for (const auto& [what, n] : r.actions) std::cout << "; " << what << " x" << n;
      std::cout << ")\n";
    }
    if (keep && summary.found) std::cout << "  log: " << log << "\n";
  }
  if (!stdout_written("xal-fault run")) return 2;
  if (!not_started.empty()) {
    std::cerr << "xal-fault run: the fault backend did not start in the command: "
              << not_started << "\n";
    return 2;
  }
  return shell_status(out);
}

int command_sweep(const SweepOptions& options) {
  const auto& o = options.common;
  if (o.timeout_s < 0 || options.max_runs == 0) {
    std::cerr << "xal-fault sweep: --timeout must be >= 0 and --max-runs > 0\n";
    return 2;
  }
  const std::string error =
      options.error.empty() ? default_error(options.op) : options.error;
  // Check the rule once: unknown operations and errors are refused here.
  const std::string probe = options.op + "=nth(1)name(sweep)error(" + error + ")";
  try {
    fault::parse_plan_compact(probe, "--op/--error");
  } catch (const fault::PlanError& e) {
    std::cerr << "xal-fault sweep: " << e.what() << "\n";
    return 2;
  }
  nlohmann::json runs = nlohmann::json::array();
  uint32_t crashed = 0, hung = 0, failed = 0, passed = 0;
  bool finished = false;
  for (uint32_t k = 1; k <= options.max_runs; ++k) {
    const std::string rule =
        options.op + "=nth(" + std::to_string(k) + ")name(sweep)error(" + error + ")";
    const std::string faults = o.faults.empty() ? rule : o.faults + ";" + rule;
    const std::string log = temp_log_path("sweep");
    std::map<std::string, std::string> env;
    try {
      env = run_environment(o, faults, log);
    } catch (const fault::PlanError& e) {
      std::cerr << "xal-fault sweep: plan refused: " << e.what() << "\n";
      return 2;
    }
    const Outcome out = run_command(o.command, env, o.timeout_s, o.quiet);
    const LogSummary summary = summarize_log(log);
    std::remove(log.c_str());
    if (out.stop_signal != 0) return stopped("xal-fault sweep", out.stop_signal);
    if (!out.started) {
      std::cerr << "xal-fault sweep: " << out.start_error << "\n";
      return 127;
    }
    if (!out.wait_error.empty()) {
      std::cerr << "xal-fault sweep: run " << k << ": cannot tell how the command ended: "
                << out.wait_error << "\n";
      return 2;
    }
    // Nothing can be tested: every run would end the same way.
    const std::string not_started = fault_backend_problem(summary, out, env);
    if (!not_started.empty()) {
      std::cerr << "xal-fault sweep: run " << k
                << ": the fault backend did not start in the command: " << not_started
                << "\n";
      return 2;
    }
    const auto it = summary.rules.find("sweep");
    const bool injected = it != summary.rules.end() && it->second.fired > 0;
    std::string verdict = "ok";
    if (out.timed_out || out.stopped_by != 0) {  // waiting for the terminal: forever
      verdict = "hung";
      ++hung;
    } else if (out.signal != 0) {
      verdict = "crashed";
      ++crashed;
    } else if (out.exit_code != 0) {
      verdict = "exited non-zero";
      ++failed;
    } else {
      ++passed;
    }
    runs.push_back({{"call", k},
                    {"injected", injected},
                    {"verdict", verdict},
                    {"outcome", outcome_json(out, o.timeout_s)},
                    {"injections", summary.injections}});
    if (!o.json) {
      std::cout << "run " << k << ": fail call " << k << " of " << options.op
                << (injected ? "" : " (no such call)") << ": "
                << describe(out, o.timeout_s) << (verdict == "ok" ? "" : "  <-- ")
                << (verdict == "ok" ? "" : verdict) << "\n";
    }
    if (!injected) {
      finished = true;
      break;
    }
  }
  const bool bad = crashed > 0 || hung > 0 || (options.strict && failed > 0);
  if (o.json) {
    nlohmann::json j;
    j["command"] = o.command;
    j["operation"] = options.op;
    j["error"] = error;
    j["runs"] = runs;
    j["complete"] = finished;
    j["summary"] = {{"runs", runs.size()}, {"ok", passed}, {"crashed", crashed},
                    {"hung", hung}, {"exited_non_zero", failed}};
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << "sweep of " << options.op << " (" << error << "): "
              << runs.size() << " runs" << (finished ? "" : " (stopped at --max-runs)")
              << ", " << passed << " ok, " << crashed << " crashed, " << hung
              << " hung, " << failed << " exited non-zero\n";
    for (const auto& r : runs) {
      if (r["verdict"] != "ok") {
        std::cout << "  call " << r["call"].get<uint32_t>() << ": "
                  << r["verdict"].get<std::string>() << " ("
                  << r["outcome"]["ended"].get<std::string>() << ")\n";
      }
    }
  }
  if (!stdout_written("xal-fault sweep")) return 2;
  return bad ? 1 : 0;
}

}  // namespace xal::faulttool
