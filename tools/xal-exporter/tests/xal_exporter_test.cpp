// xal-exporter, the program, against the mock backend: scraped with cpp-httplib and curl and checked by a strict
// parser of the Prometheus text format. Also validates the Grafana
// dashboard against the metric names the exporter serves.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <map>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "job_worker.hpp"
#include "prom_parser.hpp"

namespace {

using namespace std::chrono_literals;
using xal::exporter::test::ChildProcess;
using xal::exporter::test::JobWorker;
using xal::exporter::test::Parsed;
using xal::exporter::test::Sample;
using xal::exporter::test::parse_exposition;

const std::string kMockEnv = std::string("XAL_BACKENDS=") + XAL_MOCK_PLUGIN;

std::string join_errors(const Parsed& p) {
  std::string out;
  for (const std::string& e : p.errors) out += e + "\n";
  return out;
}

// Runs the exporter to completion (bounded) and returns {exit, output}.
std::pair<int, std::string> run_exporter(const std::vector<std::string>& args,
                                         std::vector<std::string> env = {}) {
  std::vector<std::string> argv{XAL_EXPORTER_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  env.insert(env.begin(), kMockEnv);
  ChildProcess child(argv, env);
  const int code = child.wait(30s);
  return {code, child.output()};
}

// Memory of each device as xal-info --json reports it (the mock profile).
std::vector<uint64_t> memory_from_xal_info() {
  ChildProcess info({XAL_INFO_EXE, "--json"}, {kMockEnv});
  EXPECT_EQ(info.wait(30s), 0) << info.output();
  const auto j = nlohmann::json::parse(info.output(), nullptr, false);
  std::vector<uint64_t> out;
  if (j.is_discarded() || !j.contains("devices")) {
    ADD_FAILURE() << "xal-info --json gave no devices:\n" << info.output();
    return out;
  }
  for (const auto& d : j["devices"]) out.push_back(d.at("memory_bytes"));
  return out;
}

// The checks every exposition of the two default mock devices passes.
void check_mock_exposition(const std::string& text) {
  const Parsed p = parse_exposition(text);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << "\n" << text;
  ASSERT_NE(p.family("xal_device_info"), nullptr) << text;
  EXPECT_EQ(p.family("xal_device_info")->samples.size(), 2u);
  EXPECT_EQ(p.family("xal_device_info")->type, "gauge");
  const std::vector<uint64_t> memory = memory_from_xal_info();
  ASSERT_EQ(memory.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const std::map<std::string, std::string> dev{{"device", std::to_string(i)}};
    const auto info = p.find("xal_device_info", dev);
    ASSERT_EQ(info.size(), 1u) << "device " << i;
    EXPECT_EQ(info[0].labels.at("backend"), "mock");
    EXPECT_EQ(info[0].labels.at("simulated"), "true");
    EXPECT_EQ(info[0].labels.at("partition"), "");
    EXPECT_TRUE(std::regex_match(info[0].labels.at("uuid"),
                                 std::regex("[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")));
    EXPECT_FALSE(info[0].labels.at("name").empty());

    const auto total = p.find("xal_memory_total_bytes", dev);
    ASSERT_EQ(total.size(), 1u) << text;
    EXPECT_EQ(static_cast<uint64_t>(total[0].value), memory[i]);
    const auto used = p.find("xal_memory_used_bytes", dev);
    ASSERT_EQ(used.size(), 1u);
    EXPECT_LE(used[0].value, total[0].value);
    const auto util = p.find("xal_utilization_ratio", dev);
    ASSERT_EQ(util.size(), 1u);
    EXPECT_GE(util[0].value, 0.0);
    EXPECT_LE(util[0].value, 1.0);
    ASSERT_EQ(p.find("xal_power_watts", dev).size(), 1u);
    EXPECT_GT(p.find("xal_power_watts", dev)[0].value, 0.0);
    EXPECT_EQ(p.find("xal_temperature_celsius", dev).size(), 1u);
    EXPECT_EQ(p.find("xal_sm_clock_hertz", dev).size(), 1u);
    const auto health = p.find("xal_device_health", dev);
    ASSERT_EQ(health.size(), 4u);
    for (const auto& s : health) {
      EXPECT_EQ(s.value, s.labels.at("state") == "ok" ? 1.0 : 0.0);
    }
    EXPECT_EQ(p.find("xal_device_metrics_up", dev).at(0).value, 1.0);
  }
  // The mock does not fill PCIe replays: the family must be absent.
  EXPECT_EQ(p.family("xal_pcie_replays_total"), nullptr);
  if (const auto* copy = p.family("xal_copy_bytes_total")) {
    EXPECT_EQ(copy->type, "counter");
    EXPECT_EQ(copy->samples.size(), 8u);  // 4 directions x 2 devices
    EXPECT_EQ(p.find("xal_copy_bytes_total", {{"direction", "peer"}}).size(), 2u);
    const auto oom = p.find("xal_errors_total",
                            {{"status", "XAL_ERROR_OUT_OF_MEMORY"}});
    EXPECT_EQ(oom.size(), 2u);
  }
  ASSERT_NE(p.family("xal_devices"), nullptr);
  EXPECT_EQ(p.family("xal_devices")->samples.at(0).value, 2.0);
  EXPECT_EQ(p.find("xal_backend_info", {{"backend", "mock"}}).size(), 1u);
}

// The unit Grafana shows target `ref_id` of `panel` in: an override
// matching its refId, else the panel's default ("" when none).
std::string target_unit(const nlohmann::json& panel, const std::string& ref_id) {
  const auto& config = panel.at("fieldConfig");
  for (const auto& o : config.value("overrides", nlohmann::json::array())) {
    const auto& m = o.at("matcher");
    if (m.at("id") != "byFrameRefID" || m.at("options") != ref_id) continue;
    for (const auto& prop : o.at("properties")) {
      if (prop.at("id") == "unit") return prop.at("value");
    }
  }
  return config.at("defaults").value("unit", "");
}

// A free TCP port on 127.0.0.1, and a socket that holds it when asked.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(bool keep) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd, 1) != 0) {
      ADD_FAILURE() << "cannot bind a test socket";
      return;
    }
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    if (!keep) {
      close(fd);
      fd = -1;
    }
  }
  ~Listener() {
    if (fd >= 0) close(fd);
  }
};

// Starts the exporter on a free port; returns the port from its banner.
int start_server(ChildProcess& child) {
  const std::string line = child.wait_for_line("serving http://", 30s);
  std::smatch m;
  if (!std::regex_search(line, m, std::regex(":([0-9]+)/metrics"))) {
    ADD_FAILURE() << "no banner:\n" << child.output();
    return 0;
  }
  return std::stoi(m[1]);
}

TEST(XalExporter, OnceOutputIsAValidExposition) {
  const auto [code, output] = run_exporter({"--once"});
  ASSERT_EQ(code, 0) << output;
  check_mock_exposition(output);
}

TEST(XalExporter, ServesMetricsToAnHttplibClient) {
  ChildProcess child({XAL_EXPORTER_EXE, "--port", "0"}, {kMockEnv});
  const int port = start_server(child);
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(10, 0);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << "no answer: " << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("version=0.0.4"),
            std::string::npos);
  check_mock_exposition(res->body);

  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  auto index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_NE(index->body.find("href=\"/metrics\""), std::string::npos);
  auto missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  EXPECT_EQ(child.stop(SIGTERM, 15s), 0) << child.output();
  EXPECT_NE(child.output().find("stopped"), std::string::npos) << child.output();
}

TEST(XalExporter, ServesMetricsToCurlAndStopsOnSigint) {
  const std::string curl = XAL_CURL;
  if (curl.empty() || curl.find("NOTFOUND") != std::string::npos) {
    GTEST_SKIP() << "curl not found; the httplib client test covers scraping";
  }
  ChildProcess child({XAL_EXPORTER_EXE, "--port", "0"}, {kMockEnv});
  const int port = start_server(child);
  ASSERT_GT(port, 0);
  ChildProcess fetch({curl, "-sS", "--fail", "--max-time", "20",
                      "http://127.0.0.1:" + std::to_string(port) + "/metrics"},
                     {});
  ASSERT_EQ(fetch.wait(30s), 0) << fetch.output();
  check_mock_exposition(fetch.output());
  EXPECT_EQ(child.stop(SIGINT, 15s), 0) << child.output();
}

TEST(XalExporter, PortInUseIsAClearError) {
  Listener busy(true);
  ASSERT_GT(busy.port, 0);
  const std::string port = std::to_string(busy.port);
  const auto [code, output] = run_exporter({"--port", port});
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("port " + port + " on 127.0.0.1 is in use"),
            std::string::npos)
      << output;
}

// A port another exporter listens on is refused as any port in use is.
TEST(XalExporter, SecondExporterOnTheSamePortIsRefused) {
  ChildProcess first({XAL_EXPORTER_EXE, "--port", "0"}, {kMockEnv});
  const int port = start_server(first);
  ASSERT_GT(port, 0) << first.output();
  const auto [code, output] = run_exporter({"--port", std::to_string(port)});
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("port " + std::to_string(port) + " on 127.0.0.1 is in use"),
            std::string::npos)
      << output;
  EXPECT_EQ(first.stop(SIGTERM, 15s), 0) << first.output();
}

TEST(XalExporter, BadOptionsExit2) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--bogus"}, {"--port", "70000"}, {"--port"}}) {
    const auto [code, output] = run_exporter(args);
    EXPECT_EQ(code, 2) << args[0] << "\n" << output;
    EXPECT_NE(output.find("Run with --help"), std::string::npos) << output;
  }
  const auto [code, output] = run_exporter({"--once", "--backend", "nosuch"});
  EXPECT_EQ(code, 2) << output;
  EXPECT_NE(output.find("xal-exporter: backend 'nosuch' is"), std::string::npos) << output;
}

// --once to a stdout that cannot be written (a full disk) fails (it exited
// 0, and `--once > file && mv file ...` kept an empty exposition).
TEST(XalExporter, OnceToAFullDiskExitsOne) {
  ChildProcess child({"/bin/sh", "-c", "exec \"$0\" --once >/dev/full", XAL_EXPORTER_EXE},
                     {kMockEnv});
  EXPECT_EQ(child.wait(30s), 1) << child.output();
  EXPECT_NE(child.output().find("xal-exporter: cannot write to stdout"), std::string::npos)
      << child.output();
}

// A device whose properties cannot be read is exported as such
// (xal_device_properties_up 0) and the other device's metrics are all
// there, on every scrape and with --once.
TEST(XalExporter, UnreadableDeviceDoesNotHideTheOthers) {
#ifndef XAL_WITH_FAULT_BACKEND
  GTEST_SKIP() << "the fault backend is not built";
#endif
  const std::vector<std::string> env = {
      "XAL_BACKENDS=fault:mock", "XAL_FAULTS=device_get_properties=device(0)DEVICE_LOST"};
  const auto check = [](const std::string& text) {
    const Parsed p = parse_exposition(text);
    ASSERT_TRUE(p.errors.empty()) << join_errors(p) << "\n" << text;
    const auto up0 = p.find("xal_device_properties_up", {{"device", "0"}});
    const auto up1 = p.find("xal_device_properties_up", {{"device", "1"}});
    ASSERT_EQ(up0.size(), 1u) << text;
    ASSERT_EQ(up1.size(), 1u) << text;
    EXPECT_EQ(up0[0].value, 0.0);
    EXPECT_EQ(up1[0].value, 1.0);
    EXPECT_EQ(p.find("xal_device_info", {{"device", "0"}}).size(), 0u);
    EXPECT_EQ(p.find("xal_device_info", {{"device", "1"}}).size(), 1u);
    EXPECT_EQ(p.find("xal_memory_total_bytes", {{"device", "1"}}).size(), 1u);
    EXPECT_EQ(p.family("xal_devices")->samples.at(0).value, 2.0);
  };
  const auto [code, output] = run_exporter({"--once"}, env);
  EXPECT_EQ(code, 0) << output;
  check(output.substr(output.find("# HELP")));

  std::vector<std::string> server_env = env;
  server_env.insert(server_env.begin(), kMockEnv);
  ChildProcess server({XAL_EXPORTER_EXE, "--port", "0"}, server_env);
  const int port = start_server(server);
  ASSERT_GT(port, 0) << server.output();
  httplib::Client client("127.0.0.1", port);
  for (int scrape = 0; scrape < 2; ++scrape) {
    const auto res = client.Get("/metrics");
    ASSERT_TRUE(res) << "no answer";
    EXPECT_EQ(res->status, 200) << res->body;
    check(res->body);
  }
  EXPECT_EQ(server.stop(SIGTERM, 15s), 0) << server.output();
}

TEST(XalExporter, BadInputGivesAClearError) {
  const auto [dev_code, dev_out] = run_exporter({"--once", "--device", "9"});
  EXPECT_EQ(dev_code, 1);
  EXPECT_NE(dev_out.find("no device 9"), std::string::npos) << dev_out;

  const auto [host_code, host_out] =
      run_exporter({"--host", "192.0.2.1", "--port", "0"});
  EXPECT_EQ(host_code, 1);
  EXPECT_NE(host_out.find("192.0.2.1"), std::string::npos) << host_out;

  const auto [port_code, port_out] = run_exporter({"--port", "70000"});
  EXPECT_EQ(port_code, 2) << port_out;

  const auto [none_code, none_out] =
      run_exporter({"--once"}, {"XAL_BACKENDS=/nonexistent/libxal_backend_x.so"});
  // A missing backend is listed, not fatal: the exposition stays valid.
  if (none_code == 0) {
    const Parsed p = parse_exposition(none_out);
    EXPECT_TRUE(p.errors.empty()) << join_errors(p);
    EXPECT_EQ(p.family("xal_devices")->samples.at(0).value, 0.0);
    EXPECT_EQ(p.find("xal_backend_info", {{"state", "loaded"}}).size(), 0u);
  } else {
    EXPECT_EQ(none_code, 1) << none_out;
  }
}

TEST(XalExporter, MemoryLimitIsExported) {
  const auto [code, output] = run_exporter({"--once"}, {"XAL_MEMORY_LIMIT=1GiB"});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p);
  const auto limit = p.find("xal_memory_limit_bytes");
  if (limit.empty()) GTEST_SKIP() << "the core does not report the limit yet";
  EXPECT_EQ(limit.size(), 2u);
  EXPECT_EQ(limit[0].value, 1073741824.0);
}

TEST(XalExporter, JobMemoryIsExportedWithTheQuotaLedger) {
  const std::string name = "xal-exporter-test-" + std::to_string(getpid());
  const auto [code, output] = run_exporter(
      {"--once"}, {"XAL_MEMORY_LIMIT=1GiB", "XAL_QUOTA_LEDGER=" + name});
  std::remove(("/dev/shm/xal-ledger-" + std::to_string(getuid()) + "-" + name).c_str());
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p);
  // The exporter also shows the other jobs of the host (labelled `job`):
  // other tests' jobs may be live beside this one, so only the samples of
  // the exporter's own job (no `job` label) are counted.
  const auto own = [&p](const std::string& family) {
    std::vector<Sample> out;
    for (const Sample& s : p.find(family))
      if (s.labels.count("job") == 0) out.push_back(s);
    return out;
  };
  const auto used = own("xal_job_memory_used_bytes");
  const auto procs = own("xal_job_processes");
  ASSERT_EQ(used.size(), 2u) << output;
  ASSERT_EQ(procs.size(), 2u) << output;
  EXPECT_EQ(used[0].value, 0.0);
  EXPECT_EQ(procs[0].value, 1.0);  // the exporter's own limit entry
  // Without a ledger the exporter's own job families are absent.
  const auto [plain_code, plain] = run_exporter({"--once"});
  ASSERT_EQ(plain_code, 0) << plain;
  for (const Sample& s : parse_exposition(plain).find("xal_job_processes"))
    EXPECT_EQ(s.labels.count("job"), 1u) << "a job family of the exporter's own";
}

TEST(XalExporter, PartitionsAreLabelledWithTheirCardAndShare) {
  const auto [code, output] = run_exporter(
      {"--once"}, {"XAL_PARTITIONS=mock:0=1GiB@30%,1GiB@70%"});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p);
  const auto part = p.find("xal_compute_share_ratio", {{"device", "2"}});
  ASSERT_EQ(part.size(), 1u) << output;
  EXPECT_EQ(part[0].labels.at("partition"), "0");
  EXPECT_DOUBLE_EQ(part[0].value, 0.3);
  const auto card = p.find("xal_compute_share_ratio", {{"device", "0"}});
  ASSERT_EQ(card.size(), 1u);
  EXPECT_EQ(card[0].labels.at("partition"), "");
  EXPECT_DOUBLE_EQ(card[0].value, 1.0);
  const auto total = p.find("xal_memory_total_bytes", {{"device", "3"}});
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0].value, 1073741824.0);
}

TEST(XalExporter, RepeatedDeviceIsExportedOnce) {
  const auto [code, output] = run_exporter({"--once", "-d", "1", "-d", "0", "-d", "1"});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << output;
  const auto info = p.find("xal_device_info");
  ASSERT_EQ(info.size(), 2u) << output;
  EXPECT_EQ(info[0].labels.at("device"), "1");  // the order given
  EXPECT_EQ(info[1].labels.at("device"), "0");
  EXPECT_EQ(p.family("xal_devices")->samples.at(0).value, 2.0);
}

TEST(XalExporter, BackendListedTwiceGivesTwoSeries) {
  const auto [code, output] = run_exporter(
      {"--once"},
      {std::string("XAL_BACKENDS=") + XAL_MOCK_PLUGIN + "," + XAL_MOCK_PLUGIN});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << output;
  const auto info = p.find("xal_backend_info", {{"backend", "mock"}});
  ASSERT_EQ(info.size(), 2u) << output;
  EXPECT_NE(info[0].labels.at("index"), info[1].labels.at("index"));
}

TEST(XalExporter, LongNonAsciiNamesStayValidUtf8) {
  // 40 x "ü" (80 bytes) overflows the 64-byte name and vendor fields.
  std::string long_name;
  for (int i = 0; i < 40; ++i) long_name += "\xC3\xBC";
  const std::string devices = "XAL_MOCK_DEVICES=[{\"profile\":\"l4\",\"name\":\"" +
                              long_name + "\",\"vendor\":\"" + long_name + "\"}]";
  const auto [code, output] = run_exporter({"--once"}, {devices});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p);
  const auto info = p.find("xal_device_info");
  ASSERT_EQ(info.size(), 1u) << output;
  const std::string vendor = info[0].labels.at("vendor");
  EXPECT_GT(vendor.size(), 0u);
  EXPECT_EQ(vendor, long_name.substr(0, vendor.size()));  // whole characters
  const std::string name = info[0].labels.at("name");
  EXPECT_EQ(name, ("Mock " + long_name).substr(0, name.size()));
  EXPECT_EQ(name.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(GrafanaDashboard, ParsesAndQueriesOnlyExportedMetrics) {
  std::ifstream file(XAL_DASHBOARD);
  ASSERT_TRUE(file) << XAL_DASHBOARD;
  const auto dash = nlohmann::json::parse(file, nullptr, false);
  ASSERT_FALSE(dash.is_discarded()) << "not JSON: " << XAL_DASHBOARD;
  EXPECT_GE(dash.at("schemaVersion").get<int>(), 36);
  EXPECT_FALSE(dash.at("title").get<std::string>().empty());
  std::set<std::string> vars;
  for (const auto& v : dash.at("templating").at("list")) vars.insert(v.at("name"));
  EXPECT_TRUE(vars.count("datasource") && vars.count("instance") &&
              vars.count("backend") && vars.count("device"));

  // A job with a shared ledger, so that the per-job families are served.
  JobWorker job("xal-dashboard-test-" + std::to_string(getpid()), 8.0);
  ASSERT_TRUE(job.ready());
  const auto [code, output] = run_exporter({"--once"});
  ASSERT_EQ(code, 0) << output;
  const Parsed p = parse_exposition(output);
  std::set<std::string> types;
  size_t targets = 0;
  const std::regex metric("xal_[a-z_]+");
  for (const auto& panel : dash.at("panels")) {
    types.insert(panel.at("type").get<std::string>());
    if (!panel.contains("targets")) continue;
    for (const auto& t : panel["targets"]) {
      const std::string expr = t.at("expr");
      ++targets;
      // Device "0" of every host is a different card: an aggregation that
      // drops `instance` would merge them, and so would a selector that
      // ignores the instance variable.
      const std::regex by("by \\(([^)]*)\\)");
      for (std::sregex_iterator it(expr.begin(), expr.end(), by), end;
           it != end; ++it) {
        EXPECT_TRUE(std::regex_search((*it)[1].str(),
                                      std::regex("(^|[ ,])instance($|[ ,])")))
            << "aggregation without instance: " << expr;
      }
      if (expr.find("$device") != std::string::npos) {
        EXPECT_NE(expr.find("instance=~\"$instance\""), std::string::npos)
            << expr;
      }
      // Calls per second are operations, not bytes.
      if (expr.find("_calls_total") != std::string::npos) {
        EXPECT_EQ(target_unit(panel, t.at("refId")), "ops") << expr;
      }
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end;
           it != end; ++it) {
        std::string name = it->str();
        // Rates and histograms refer to the family itself.
        EXPECT_TRUE(p.family(name) != nullptr ||
                    name == "xal_memory_limit_bytes" ||
                    name == "xal_pcie_replays_total" ||
                    name == "xal_ecc_corrected_errors_total")
            << "dashboard queries " << name << " which the exporter lacks";
      }
    }
  }
  EXPECT_GE(targets, 5u);
  EXPECT_TRUE(types.count("heatmap")) << "the utilization heat map";
}

}  // namespace
