// xal-fault: runs a program under a fault plan, or sweeps the call sites of
// one operation (docs/FAULTS.md).
//
//   xal-fault run [--plan P] [--faults STR] [--timeout S] [--log F] -- CMD ...
//   xal-fault sweep --op OP [--target T] [--error E] -- CMD ...
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "runner.hpp"
#include "xal_common/cli.hpp"

int main(int argc, char** argv) {
  using xal::common::AtLeast;
  using xal::common::parse_options;
  using xal::common::WholeNumber;
  // Before any child: SIGCHLD back to its default, stop signals caught.
  xal::faulttool::install_signal_handlers();
  CLI::App app{"xal-fault: run programs under fault-injection plans"};
  app.require_subcommand(1);
  xal::faulttool::RunOptions run;
  xal::faulttool::SweepOptions sweep;

  auto* r = app.add_subcommand("run", "run a command under a fault plan");
  r->add_option("--plan", run.common.plan, "JSON plan file (XAL_FAULT_PLAN)");
  r->add_option("--faults", run.common.faults, "compact rules (XAL_FAULTS)");
  r->add_option("--target", run.common.target,
                "backend to wrap when XAL_BACKENDS is unset (default: the "
                "plan's target, else mock)");
  r->add_option("--seed", run.common.seed, "XAL_FAULT_SEED for the run")
      ->check(WholeNumber());
  r->add_option("--timeout", run.common.timeout_s,
                "seconds before the command is killed (0: none)")
      ->capture_default_str()
      ->check(AtLeast(0));
  r->add_option("--log", run.log, "keep the injection log in this file");
  r->add_flag("--json", run.common.json, "print the report as JSON");
  r->add_flag("--quiet", run.common.quiet, "hide the command's output");
  r->add_option("command", run.common.command, "the command and its arguments")
      ->required();

  auto* s = app.add_subcommand(
      "sweep", "fail the 1st, 2nd, ... call of an operation, one run each");
  s->add_option("--op", sweep.op, "operation to fail (mem_alloc, allreduce...)")
      ->required();
  s->add_option("--error", sweep.error,
                "error to inject (default: OUT_OF_MEMORY for allocations, "
                "TIMEOUT for synchronisation and collectives, else BACKEND)");
  s->add_option("--plan", sweep.common.plan, "JSON plan file for every run");
  s->add_option("--faults", sweep.common.faults, "extra compact rules");
  s->add_option("--target", sweep.common.target, "backend to wrap")
      ->capture_default_str();
  s->add_option("--seed", sweep.common.seed, "XAL_FAULT_SEED for every run")
      ->check(WholeNumber());
  s->add_option("--timeout", sweep.common.timeout_s, "seconds per run (0: none)")
      ->capture_default_str()
      ->check(AtLeast(0));
  s->add_option("--max-runs", sweep.max_runs, "stop after this many runs")
      ->capture_default_str()
      ->check(AtLeast(1));
  s->add_flag("--strict", sweep.strict,
              "also fail when a run exits non-zero");
  s->add_flag("--json", sweep.common.json, "print the report as JSON");
  s->add_flag("--verbose", sweep.verbose, "show the command's output");
  s->add_option("command", sweep.common.command, "the command and its arguments")
      ->required();

  if (const auto status = parse_options(app, "xal-fault", argc, argv)) return *status;
  try {
    if (r->parsed()) return xal::faulttool::command_run(run);
    sweep.common.quiet = !sweep.verbose;
    return xal::faulttool::command_sweep(sweep);
  } catch (const std::exception& e) {
    std::cerr << "xal-fault: " << e.what() << "\n";
    return 2;
  }
}
