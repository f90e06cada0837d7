// Tests of xal-conform itself: options and their errors, --list, the JSON
// report read field by field, and JUnit XML.
#include <fstream>
#include <set>
#include <sstream>

#include "cli_harness.hpp"

namespace {

using namespace conform_test;

TEST_F(ConformCli, BadOptionsExit2WithAMessage) {
  Outcome o = conform({"--backend", "nosuch"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("unknown backend 'nosuch'"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("mock (loaded)"), std::string::npos) << o.output;

  o = conform({"--device", "99"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("unknown device 99"), std::string::npos) << o.output;

  o = conform({"--group", "nosuch"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("unknown group 'nosuch'"), std::string::npos) << o.output;

  o = conform({"--bogus-option"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  o = conform({"--timeout", "-4"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;

  // An unwritable report is refused before anything runs.
  o = conform({"--report", "/nonexistent-folder/report.json"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("/nonexistent-folder/report.json: cannot be written"),
            std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("groups on"), std::string::npos) << "it ran anyway";
  o = conform({"--junit", dir_.string()}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("is a directory"), std::string::npos) << o.output;

  auto env = kMock;
  env["XAL_DEVICE_SELECTOR"] = "cuda:*";
  o = conform({"--quick"}, env);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("XAL_DEVICE_SELECTOR"), std::string::npos) << o.output;

  const std::string bad_known = write("known.json", "{\"known_failures\": [{\"test\": 3}]}");
  o = conform({"--known-failures", bad_known, "--list"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find(bad_known + ": /known_failures/0"), std::string::npos) << o.output;
  const std::string broken_json = write("broken.json", "{\"known_failures\": [");
  o = conform({"--known-failures", broken_json, "--list"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find(broken_json), std::string::npos) << o.output;
  o = conform({"--known-failures", dir_.string(), "--list"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find(dir_.string() + ": is a directory"), std::string::npos) << o.output;

  o = conform({"--timeout", "0"}, kMock);
  EXPECT_EQ(o.rc, 2) << o.output;
  EXPECT_NE(o.output.find("--timeout: must be more than 0, not 0"), std::string::npos) << o.output;
}

// A suite that lists no tests would run nothing and pass: it fails the run.
TEST_F(ConformCli, SuiteWithoutTestsFails) {
  const Outcome o = conform({"--suite", "/bin/true", "--quick"}, kMock);
  EXPECT_EQ(o.rc, 1) << o.output;
  EXPECT_NE(o.output.find("the suite (/bin/true) lists no tests"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("PASSED"), std::string::npos) << o.output;
}

TEST_F(ConformCli, ListsGroupsAndTests) {
  const Outcome o = conform({"--list"}, kMock);
  ASSERT_EQ(o.rc, 0) << o.output;
  for (const char* text : {"platform (", "device (", "memory (", "copies (", "streams_events (",
                           "errors (", "parity (", "memory/Memory.AllocFree/d0_mock",
                           "copies/PeerCopies.AllSizes/d0_to_d1", "platform.InitShutdownCycles"}) {
    EXPECT_NE(o.output.find(text), std::string::npos) << text << " missing:\n" << o.output;
  }
  // The parity group runs last.
  EXPECT_GT(o.output.find("parity ("), o.output.find("errors ("));
}

TEST_F(ConformCli, QuickReportFieldByField) {
  const Outcome o = conform({"--quick", "--group", "platform", "--group", "device",
                             "--group", "memory", "--group", "errors", "--report",
                             path("r.json"), "--junit", path("r.xml")},
                            kMock);
  ASSERT_EQ(o.rc, 0) << o.output;
  EXPECT_NE(o.output.find("result: PASSED"), std::string::npos) << o.output;
  const json r = read_json(path("r.json"));
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["tool"], "xal-conform");
  EXPECT_EQ(r["mode"], "quick");
  EXPECT_EQ(r["result"], "passed");
  EXPECT_EQ(r["xal_abi_version"], "1.1");
  EXPECT_EQ(r["groups"], json({"platform", "device", "memory", "errors"}));
  ASSERT_EQ(r["backends"].size(), 1u);
  EXPECT_EQ(r["backends"][0]["name"], "mock");
  EXPECT_EQ(r["backends"][0]["state"], "loaded");
  EXPECT_EQ(r["backends"][0]["simulated"], true);
  EXPECT_EQ(r["backends"][0]["device_count"], 2);
  ASSERT_EQ(r["devices"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& d = r["devices"][i];
    EXPECT_EQ(d["index"], i);
    EXPECT_EQ(d["backend"], "mock");
    EXPECT_EQ(d["selected"], true);
    EXPECT_EQ(d["simulated"], true);
    EXPECT_GT(d["memory_bytes"].get<uint64_t>(), 0u);
    EXPECT_NE(d["name"].get<std::string>().find("A100"), std::string::npos);
  }
  const std::set<std::string> outcomes = {"passed", "failed", "unsupported", "known-failure",
                                          "unexpected-pass"};
  std::map<std::string, int> by_outcome;
  std::set<std::string> groups;
  ASSERT_GT(r["tests"].size(), 20u);
  const std::string last = std::to_string(r["tests"].size());
  EXPECT_NE(o.output.find("[" + last + "/" + last + "] "), std::string::npos)
      << "no progress line for the last test:\n" << o.output;
  for (const json& t : r["tests"]) {
    ASSERT_TRUE(t["name"].is_string());
    ASSERT_TRUE(t["message"].is_string());
    ASSERT_TRUE(t["duration_ms"].is_number());
    EXPECT_EQ(outcomes.count(t["outcome"].get<std::string>()), 1u) << t.dump();
    by_outcome[t["outcome"]]++;
    groups.insert(t["group"].get<std::string>());
    if (t["group"] != "platform") {
      EXPECT_TRUE(t["device"].is_number()) << t.dump();
      EXPECT_EQ(t["backends"][0], "mock") << t.dump();
    }
    if (t["outcome"] == "unsupported") {
      EXPECT_NE(t["message"].get<std::string>().find("unsupported: "), std::string::npos);
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"platform", "device", "memory", "errors"}));
  const json& s = r["summary"];
  EXPECT_EQ(s["total"], r["tests"].size());
  EXPECT_EQ(s["passed"], by_outcome["passed"]);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["unsupported"], by_outcome["unsupported"]);
  EXPECT_EQ(s["by_group"]["memory"]["total"].get<int>() > 0, true);
  const json* alloc = find_test(r, "memory/Memory.AllocFree/d1_mock");
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ((*alloc)["outcome"], "passed");
  EXPECT_EQ((*alloc)["device"], 1);
  bool memory_figure = false;
  for (const json& f : r["figures"]) {
    if (f["name"] == "memory_bytes" && f["device"] == 0) {
      memory_figure = true;
      EXPECT_EQ(f["unit"], "B");
      EXPECT_EQ(f["value"].get<double>(), r["devices"][0]["memory_bytes"].get<double>());
    }
  }
  EXPECT_TRUE(memory_figure);
  std::ifstream xml(path("r.xml"));
  std::stringstream text;
  text << xml.rdbuf();
  EXPECT_NE(text.str().find("<testsuites name=\"xal-conform\""), std::string::npos);
  EXPECT_NE(text.str().find("<testsuite name=\"memory\""), std::string::npos);
  EXPECT_NE(text.str().find("name=\"memory/Memory.AllocFree/d0_mock\""), std::string::npos);
}

TEST_F(ConformCli, DeviceAndBackendSelection) {
  Outcome o = conform({"--quick", "--group", "memory", "--device", "1", "--report",
                       path("r.json")}, kMock);
  ASSERT_EQ(o.rc, 0) << o.output;
  json r = read_json(path("r.json"));
  EXPECT_EQ(r["devices"][0]["selected"], false);
  EXPECT_EQ(r["devices"][1]["selected"], true);
  ASSERT_FALSE(r["tests"].empty());
  for (const json& t : r["tests"]) EXPECT_EQ(t["device"], 1) << t.dump();

  auto env = kMock;
  env["XAL_DEVICE_SELECTOR"] = "mock:0";
  o = conform({"--quick", "--group", "memory", "--backend", "mock", "--report",
               path("s.json")}, env);
  ASSERT_EQ(o.rc, 0) << o.output;
  r = read_json(path("s.json"));
  EXPECT_EQ(r["device_selector"], "mock:0");
  ASSERT_EQ(r["devices"].size(), 1u);
  for (const json& t : r["tests"]) EXPECT_EQ(t["device"], 0) << t.dump();
}

}  // namespace
