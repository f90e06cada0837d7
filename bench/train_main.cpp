// xal-bench train: heterogeneous training efficiency on the mock's compute
// model (train.hpp; docs/PERFORMANCE.md, "Heterogeneous training").
//
//   xal-bench train [--set a100-40g,h100-sxm-80g]... [-W dp|pp|both]
//                   [--split equal|balanced|both|W1:W2:...] [--steps 10]
//                   [--warmup 2] [--width 32] [--ffn 64] [--layers 48]
//                   [--batch 256] [--micro 8] [--compute-scale 1e-6]
//                   [--tolerance 1e-4] [--repeats 1] [--unweighted] [--json FILE]
//                   [--mpi [--mpi-np 2]]
//
// For each set of cards and workload, one run measures a homogeneous job
// of the same shape for every card of the set, then the mixed job with the
// equal and with the balanced split. Efficiency = samples/s of the mixed
// job / the sum over its cards of the samples/s each card gives in its
// homogeneous job (that job's samples/s / its card count). Every job's
// loss after warmup + steps steps must equal the first homogeneous job's
// within the tolerance (and be below the initial loss); otherwise the
// command exits 1.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "coll.hpp"
#include "train.hpp"
#include "train_model.hpp"
#include "xal_common/cli.hpp"
#include "xal_common/strings.hpp"

namespace xal::bench {

namespace {

using namespace train;

struct Options {
  std::vector<std::string> sets;
  std::string workload = "both", split = "both", json, scale, memory = "512MiB";
  double tolerance = 1e-4;
  uint32_t repeats = 1;
  bool mpi = false;
  int mpi_np = 2;
  Shape shape;
};

// One job's line of the report.
struct Row {
  std::string workload, job, cards;
  Split split;
  Result result;
  double efficiency = 0;  // mixed jobs
  double rel_diff = 0;    // |loss - reference| / reference
  bool ok = true;
};

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) {
    const std::string t(common::trim(item));
    if (!t.empty()) out.push_back(common::to_lower(t));
  }
  return out;
}

std::string join(const std::vector<double>& v, const char* sep) {
  std::string out;
  for (double x : v) {
    if (!out.empty()) out += sep;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    out += buf;
  }
  return out;
}

// Ranks [first, first + count) of `n` belong to process p of P.
uint32_t first_rank(uint32_t n, int p, int P) { return static_cast<uint32_t>(uint64_t{n} * p / P); }

xal_status_t local_comm_create(const xal_device_t* devs, uint32_t n, xal_comm_t* out) {
  return xal_comm_create(devs, n, nullptr, out);
}

// Runs this program's `train` with the same arguments under mpirun.
int relaunch(int np, int argc, char** argv) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> args = {"mpirun", "--oversubscribe", "--bind-to", "none", "-np",
                                   std::to_string(np), ec ? std::string("xal-bench") : self,
                                   "train"};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("XAL_BENCH_MPI_CHILD", "1", 1);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    execvp("mpirun", cargs.data());
    std::perror("xal-bench train --mpi: mpirun");
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The runs of one set of cards: homogeneous jobs, then the mixed ones.
class SetRun {
 public:
  SetRun(const Options& o, std::vector<std::string> cards, int proc, int procs,
         const std::map<std::string, std::vector<xal_device_t>>& devices)
      : o_(o), cards_(std::move(cards)), devices_(devices) {
    n_ = static_cast<uint32_t>(cards_.size());
    first_ = first_rank(n_, proc, procs);
    local_ = first_rank(n_, proc + 1, procs) - first_;
    for (const auto& c : cards_)
      if (std::find(types_.begin(), types_.end(), c) == types_.end()) types_.push_back(c);
  }

  uint32_t size() const { return n_; }

  // The ranks of this process in a job on `cards` (one type each).
  Ranks ranks(const std::vector<std::string>& cards) const {
    Ranks r;
    r.first = first_;
    r.total = n_;
    r.comm_create = o_.mpi ? &mpi_comm_create : &local_comm_create;
    std::map<std::string, size_t> used;
    for (uint32_t i = first_; i < first_ + local_; ++i)
      r.devices.push_back(devices_.at(cards[i])[used[cards[i]]++]);
    return r;
  }

  // The jobs run --repeats times in turn (all jobs, then all again), each
  // keeping its best samples/s: a burst of load on a shared host then
  // distorts one round, not the comparison. Every round's loss is checked.
  std::vector<Row> run(const std::string& workload, std::vector<Split> mixed) const {
    std::string all;
    for (const auto& c : cards_) all += (all.empty() ? "" : ",") + c;
    std::vector<Row> rows;
    std::vector<std::vector<std::string>> job_cards;
    for (const auto& type : types_) {
      rows.push_back(Row{workload, "homogeneous", type + " x" + std::to_string(n_), Split{}, {}});
      job_cards.emplace_back(n_, type);
    }
    for (const Split& split : mixed) {
      const char* name = split.kind == Split::kEqual      ? "mixed, equal split"
                         : split.kind == Split::kBalanced ? "mixed, balanced split"
                                                          : "mixed, fixed split";
      rows.push_back(Row{workload, name, all, split, {}});
      job_cards.push_back(cards_);
    }
    std::vector<double> losses(rows.size(), 0.0);
    for (uint32_t rep = 0; rep < o_.repeats; ++rep)
      for (size_t j = 0; j < rows.size(); ++j) {
        const Ranks r = ranks(job_cards[j]);
        Result res = workload == "dp" ? run_data_parallel(o_.shape, r, rows[j].split)
                                      : run_pipeline(o_.shape, r, rows[j].split);
        if (rep == 0) losses[j] = res.loss;
        // Every round's loss against the first homogeneous job's first.
        if (rep == 0 || res.samples_per_s > rows[j].result.samples_per_s) rows[j].result = res;
        rows[j].rel_diff = std::max(rows[j].rel_diff, std::abs(res.loss - losses[0]) /
                                                           std::max(std::abs(losses[0]), 1e-30));
        if (!std::isfinite(res.loss)) rows[j].rel_diff = INFINITY;
      }
    std::map<std::string, double> per_card;  // samples/s of one card of a type
    for (size_t t = 0; t < types_.size(); ++t) per_card[types_[t]] = rows[t].result.samples_per_s / n_;
    double ideal = 0;
    for (const auto& c : cards_) ideal += per_card[c];
    for (size_t j = types_.size(); j < rows.size(); ++j)
      rows[j].efficiency = rows[j].result.samples_per_s / ideal;
    for (Row& row : rows) row.ok = row.rel_diff <= o_.tolerance;
    return rows;
  }

 private:
  const Options& o_;
  std::vector<std::string> cards_, types_;
  const std::map<std::string, std::vector<xal_device_t>>& devices_;
  uint32_t n_ = 0, first_ = 0, local_ = 0;
};

xal_status_t init_backends() {
  const char* backends = std::getenv("XAL_BACKENDS");
  xal_init_options_t options{};
  options.struct_size = sizeof(options);
  options.backends = backends != nullptr && backends[0] != '\0' ? nullptr : "mock";
  options.validation = -1;
  return xal_init(&options);
}

void print_table(FILE* out, const Options& o, const std::vector<Row>& rows, int procs,
                 double initial_loss) {
  const Shape& s = o.shape;
  const char* scale = std::getenv("XAL_MOCK_COMPUTE_SCALE");
  std::fprintf(out,
               "# xal-bench train: residual MLP, D=%u F=%u L=%u, batch %u (%u micro-batches), "
               "%u+%u steps, lr %g, XAL_MOCK_COMPUTE_SCALE=%s, %d process(es)\n",
               s.width, s.ffn, s.layers, s.batch, s.micro, s.warmup, s.steps, double(s.lr),
               scale && *scale ? scale : "(the mock's default)", procs);
  std::fprintf(out, "# initial loss %.6f; loss tolerance %g (relative to the first homogeneous job)%s\n",
               initial_loss, o.tolerance, s.unweighted ? "; --unweighted (wrong averaging)" : "");
  std::fprintf(out, "%-3s %-22s %-44s %-18s %10s %12s %9s %10s %s\n", "wl", "job", "cards", "split",
               "samples/s", "loss", "rel.diff", "efficiency", "check");
  for (const Row& r : rows) {
    std::string eff = r.efficiency > 0 ? std::to_string(r.efficiency).substr(0, 5) : "-";
    std::fprintf(out, "%-3s %-22s %-44s %-18s %10.1f %12.6f %9.2e %10s %s\n", r.workload.c_str(),
                 r.job.c_str(), r.cards.c_str(), join(r.result.split, ":").c_str(),
                 r.result.samples_per_s, r.result.loss, r.rel_diff, eff.c_str(),
                 r.ok ? "ok" : "LOSS MISMATCH");
    if (!r.result.speed.empty()) {
      std::vector<double> rel;
      for (double v : r.result.speed) rel.push_back(std::round(v / r.result.speed[0] * 100) / 100);
      std::fprintf(out, "#   calibrated speed per rank, relative to rank 0: %s\n",
                   join(rel, ":").c_str());
    }
  }
  std::fprintf(out,
               "# split: samples (dp) or blocks (pp) per rank; efficiency: mixed samples/s / "
               "sum over its cards of one card's samples/s in its homogeneous job\n");
}

nlohmann::json to_json(const Options& o, const std::vector<Row>& rows, int procs,
                       double initial_loss) {
  nlohmann::json j;
  const Shape& s = o.shape;
  j["model"] = {{"width", s.width}, {"ffn", s.ffn}, {"layers", s.layers}, {"batch", s.batch},
                {"micro_batches", s.micro}, {"warmup", s.warmup}, {"steps", s.steps},
                {"lr", s.lr}};
  j["processes"] = procs;
  j["initial_loss"] = initial_loss;
  j["tolerance"] = o.tolerance;
  const char* scale = std::getenv("XAL_MOCK_COMPUTE_SCALE");
  j["compute_scale"] = scale ? scale : "";
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows)
    j["rows"].push_back({{"workload", r.workload}, {"job", r.job}, {"cards", r.cards},
                         {"split", r.result.split}, {"speed", r.result.speed},
                         {"seconds", r.result.seconds}, {"samples_per_s", r.result.samples_per_s},
                         {"loss", r.result.loss}, {"rel_diff", r.rel_diff},
                         {"efficiency", r.efficiency}, {"ok", r.ok}});
  return j;
}

}  // namespace

int train_main(int argc, char** argv) {
  Options o;
  Shape& s = o.shape;
  CLI::App app{"xal-bench train: heterogeneous training (data and pipeline parallel) on the "
               "mock's compute model: efficiency of mixed sets, loss checked"};
  app.add_option("--set", o.sets,
                 "a set of mock cards, comma-separated profiles (repeat for several sets; "
                 "default a100-40g,h100-sxm-80g)");
  app.add_option("-W,--workload", o.workload, "dp (data parallel), pp (pipeline) or both")
      ->check(CLI::IsMember({"dp", "pp", "both"}));
  app.add_option("--split", o.split,
                 "mixed jobs: equal, balanced (calibrated), both, or fixed weights W1:W2:...");
  app.add_option("--steps", s.steps, "timed steps")->check(CLI::Range(1u, 100000u));
  app.add_option("--warmup", s.warmup, "untimed steps first")->check(CLI::Range(0u, 100000u));
  app.add_option("--width", s.width, "D: the residual width")->check(CLI::Range(1u, 4096u));
  app.add_option("--ffn", s.ffn, "F: each block's hidden width")->check(CLI::Range(1u, 16384u));
  app.add_option("--layers", s.layers, "L: blocks")->check(CLI::Range(1u, 1024u));
  app.add_option("--batch", s.batch, "B: samples per step")->check(CLI::Range(1u, 65536u));
  app.add_option("--micro", s.micro, "pipeline: micro-batches per step (divides the batch)")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--bucket-layers", s.bucket_layers, "data parallel: blocks per allreduce bucket")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--lr", s.lr, "learning rate")->check(common::NumberFrom(0, true));
  app.add_option("--seed", s.seed, "data and weights");
  app.add_option("--compute-scale", o.scale,
                 "XAL_MOCK_COMPUTE_SCALE for the run (the mock's pace: TFLOPS x scale)");
  app.add_option("--tolerance", o.tolerance, "largest relative loss difference from the "
                                             "homogeneous job")
      ->check(common::NumberFrom(0, false));
  app.add_option("--repeats", o.repeats,
                 "run every job this many times in turn, keeping each one's best samples/s")
      ->check(CLI::Range(1u, 100u));
  app.add_flag("--unweighted", s.unweighted,
               "data parallel: average the ranks' mean gradients with equal weights "
               "(wrong with unequal shares: the loss check must then fail)");
  app.add_option("--json", o.json, "write the results as JSON to this file ('-' for stdout)")
      ->check(common::WritableFile());
  app.add_flag("--mpi", o.mpi, "ranks as processes under mpirun (xal_comm_create_mpi)");
  app.add_option("--mpi-np", o.mpi_np, "with --mpi: processes (default 2)")
      ->check(common::AtLeast(1));
  if (const auto status = common::parse_options(app, "xal-bench train", argc, argv)) return *status;

  if (o.sets.empty()) o.sets.push_back("a100-40g,h100-sxm-80g");
  std::vector<std::vector<std::string>> sets;
  for (const auto& text : o.sets) {
    sets.push_back(split_list(text, ','));
    if (sets.back().empty()) {
      std::cerr << "xal-bench train: empty --set '" << text << "'\n";
      return common::kExitBadOptions;
    }
  }
  std::vector<Split> mixed;
  if (o.split == "equal" || o.split == "both") mixed.push_back({Split::kEqual, {}});
  if (o.split == "balanced" || o.split == "both") mixed.push_back({Split::kBalanced, {}});
  if (mixed.empty()) {
    Split fixed{Split::kFixed, {}};
    for (const auto& w : split_list(o.split, ':')) {
      char* end = nullptr;
      const double v = std::strtod(w.c_str(), &end);
      if (end == w.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
        std::cerr << "xal-bench train: --split '" << o.split
                  << "': expected equal, balanced, both or positive weights W1:W2:...\n";
        return common::kExitBadOptions;
      }
      fixed.weights.push_back(v);
    }
    for (const auto& set : sets)
      if (fixed.weights.size() != set.size()) {
        std::cerr << "xal-bench train: --split has " << fixed.weights.size()
                  << " weights, a set has " << set.size() << " cards\n";
        return common::kExitBadOptions;
      }
    mixed.push_back(fixed);
  }
  if (s.batch % s.micro != 0 && o.workload != "dp") {
    std::cerr << "xal-bench train: --batch " << s.batch << " is not a multiple of --micro "
              << s.micro << "\n";
    return common::kExitBadOptions;
  }
  if (!o.scale.empty()) setenv("XAL_MOCK_COMPUTE_SCALE", o.scale.c_str(), 1);
  if (o.mpi && !mpi_inside()) return relaunch(o.mpi_np, argc, argv);

  MpiPlace place;
  if (o.mpi) {
    if (std::string e = mpi_start(0, place); !e.empty()) {
      std::cerr << "xal-bench train --mpi: " << e << "\n";
      return 1;
    }
  }
  const int proc = place.rank, procs = o.mpi ? place.size : 1;
  for (const auto& set : sets)
    if (set.size() < static_cast<size_t>(procs)) {
      std::cerr << "xal-bench train: a set of " << set.size() << " cards over " << procs
                << " processes\n";
      if (o.mpi) mpi_finish();
      return common::kExitBadOptions;
    }

  // This process's mock cards: for each profile, as many as it has ranks in
  // the largest set that holds it (its homogeneous job there).
  std::vector<std::string> order;
  std::map<std::string, uint32_t> count;
  for (const auto& set : sets) {
    const uint32_t n = static_cast<uint32_t>(set.size());
    const uint32_t local = first_rank(n, proc + 1, procs) - first_rank(n, proc, procs);
    for (const auto& c : set) {
      if (!count.count(c)) order.push_back(c);
      count[c] = std::max(count[c], local);
    }
  }
  nlohmann::json spec = nlohmann::json::array();
  for (const auto& c : order)
    spec.push_back({{"profile", c}, {"count", count[c]}, {"memory", o.memory}});
  setenv("XAL_MOCK_DEVICES", spec.dump().c_str(), 1);

  int status = 0;
  std::vector<Row> rows;
  double initial_loss = 0;
  if (xal_status_t st = init_backends(); st) {
    xal_error_info_t e{};
    e.struct_size = sizeof e;
    xal_last_error(&e);
    std::cerr << "xal-bench train: xal_init: " << xal_status_name(st) << ": " << e.message << "\n";
    if (o.mpi) mpi_finish();
    return 1;
  }
  try {
    uint32_t ndev = 0;
    check(xal_device_count(&ndev), "xal_device_count");
    std::map<std::string, std::vector<xal_device_t>> devices;
    uint32_t next = 0;
    for (const auto& c : order)
      for (uint32_t i = 0; i < count[c]; ++i) {
        if (next >= ndev)
          throw Failure("expected at least " + std::to_string(next + 1) +
                        " devices (the mock's cards of XAL_MOCK_DEVICES), found " +
                        std::to_string(ndev) +
                        ": xal-bench train runs on the mock backend (XAL_BACKENDS unset, "
                        "or naming the mock)");
        xal_device_t d = nullptr;
        check(xal_device_get(next++, &d), "xal_device_get");
        devices[c].push_back(d);
      }
    initial_loss = host_initial_loss(s, make_host_data(s));
    for (const auto& set : sets) {
      SetRun run(o, set, proc, procs, devices);
      for (const char* w : {"dp", "pp"}) {
        if (o.workload != "both" && o.workload != w) continue;
        for (Row& r : run.run(w, mixed)) {
          if (!(r.result.loss < initial_loss)) r.ok = false;
          rows.push_back(std::move(r));
        }
      }
    }
  } catch (const Failure& e) {
    std::cerr << "xal-bench train: " << e.what() << "\n";
    status = 1;
  }
  xal_shutdown();
  if (o.mpi) mpi_finish();
  if (status != 0) return status;
  // Rank 0 reports the loss check and gives the exit status: another rank
  // exiting 1 first would have mpirun stop rank 0 before it prints the table.
  if (proc != 0) return 0;
  for (const Row& r : rows)
    if (!r.ok) status = 1;

  FILE* const table = o.json == "-" ? stderr : stdout;
  print_table(table, o, rows, procs, initial_loss);
  if (status != 0)
    std::fprintf(table, "xal-bench train: FAILED: a job's loss differs from its homogeneous "
                        "job's (or did not go down)\n");
  if (!o.json.empty()) {
    const std::string text = to_json(o, rows, procs, initial_loss).dump(2) + "\n";
    if (o.json == "-") {
      std::cout << text << std::flush;
    } else {
      std::ofstream f(o.json);
      if (!(f << text)) {
        std::cerr << "xal-bench train: cannot write " << o.json << "\n";
        return 1;
      }
    }
  }
  return status;
}

}  // namespace xal::bench
