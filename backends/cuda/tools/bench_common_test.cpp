// time_copies() of xal-cuda-rawbench against a scripted side (no driver):
// the figures it computes, the gate lengthened while it opens too early,
// and the errors it passes on.
#include "bench_common.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xal::cuda::rawbench {
namespace {

// A side whose calls are counted, whose start event is already complete
// for the first `early` batches, and whose batches take `ms` each.
struct Scripted {
  int copies = 0;
  int early = 0;
  int batches = 0;
  float ms = 2.0f;
  bool fail_copy = false;
  std::vector<uint64_t> gates;
  std::string failure;

  CopySide side() {
    CopySide s;
    s.copy = [this](const std::string&, size_t) {
      ++copies;
      if (fail_copy) failure = "copy refused";
      return !fail_copy;
    };
    s.synchronize = [] { return true; };
    s.gate = [this](uint64_t ns) {
      gates.push_back(ns);
      return true;
    };
    s.record = [](bool) { return true; };
    s.query_start = [this] { return batches++ < early ? 1 : 0; };
    s.elapsed_ms = [this](float* out) {
      *out = ms;
      return true;
    };
    return s;
  }
};

Options options(int trials) {
  Options o;
  o.trials = trials;
  o.iterations = 4;
  o.gate_us = 100;
  return o;
}

TEST(RawbenchTiming, DeviceFigureIsBytesOverTheEventTime) {
  Scripted scripted;
  std::string error;
  double host = 0, device = 0;
  const size_t bytes = size_t{64} << 20;  // iterations_for: 4 copies
  ASSERT_TRUE(time_copies(options(2), "htod", bytes, scripted.side(), &host, &device, &error))
      << error;
  EXPECT_NEAR(device, double(bytes) * 4 / 2e-3 / 1e9, 1e-6);
  EXPECT_GT(host, 0);
  // Host-timed: a warm-up copy and 2 trials of 4; device-timed: 3 batches of 4.
  EXPECT_EQ(scripted.copies, 1 + 2 * 4 + 3 * 4);
  EXPECT_EQ(scripted.gates, std::vector<uint64_t>(3, 100'000));
}

TEST(RawbenchTiming, GateOpenedEarlyIsDoubledAndTheBatchRepeated) {
  Scripted scripted;
  scripted.early = 2;
  std::string error;
  double host = 0, device = 0;
  ASSERT_TRUE(time_copies(options(1), "dtod", size_t{64} << 20, scripted.side(), &host, &device,
                          &error))
      << error;
  EXPECT_EQ(scripted.gates, (std::vector<uint64_t>{100'000, 200'000, 400'000, 400'000}));
}

TEST(RawbenchTiming, BatchesAreCappedToWhatAQueueHolds) {
  Scripted scripted;
  std::string error;
  double host = 0, device = 0;
  ASSERT_TRUE(time_copies(options(1), "dtod", 4096, scripted.side(), &host, &device, &error));
  const int host_copies = 1 + iterations_for(options(1), 4096);
  EXPECT_EQ(scripted.copies, host_copies + 2 * kMaxQueuedCopies);
  EXPECT_NEAR(device, 4096.0 * kMaxQueuedCopies / 2e-3 / 1e9, 1e-9);
}

TEST(RawbenchTiming, GateThatNeverHoldsIsAnError) {
  Scripted scripted;
  scripted.early = 1000;
  std::string error;
  double host = 0, device = 0;
  EXPECT_FALSE(time_copies(options(1), "htod", size_t{64} << 20, scripted.side(), &host, &device,
                           &error));
  EXPECT_NE(error.find("the gate kernel ended before 4 copies were queued, even spinning 1638 ms"),
            std::string::npos)
      << error;
  EXPECT_EQ(scripted.gates.back(), 1'638'400'000u);  // 100 us doubled past 1 s
}

TEST(RawbenchTiming, FailedCallIsPassedOn) {
  Scripted scripted;
  scripted.fail_copy = true;
  std::string error;
  double host = 0, device = 0;
  EXPECT_FALSE(time_copies(options(1), "htod", 1 << 20, scripted.side(), &host, &device, &error));
  EXPECT_EQ(scripted.failure, "copy refused");
}

// --out is a folder: made when missing, and refused before any measurement
// when the report cannot be written there.
TEST(RawbenchOut, MissingFolderIsCreatedAndABadOneRefused) {
  const std::string base = ::testing::TempDir() + "/rawbench_out_" + std::to_string(::getpid());
  std::filesystem::remove_all(base);
  std::string error;
  ASSERT_TRUE(prepare_out_dir(base + "/a/b", &error)) << error;
  EXPECT_TRUE(std::filesystem::is_directory(base + "/a/b"));
  EXPECT_FALSE(std::filesystem::exists(base + "/a/b/raw_vs_xal.json")) << "probe left behind";
  { std::ofstream file(base + "/plain"); }
  EXPECT_FALSE(prepare_out_dir(base + "/plain/sub", &error));
  EXPECT_NE(error.find("cannot create the folder " + base + "/plain/sub"), std::string::npos)
      << error;
  std::filesystem::create_directories(base + "/report/raw_vs_xal.json");  // a folder in the way
  EXPECT_FALSE(prepare_out_dir(base + "/report", &error));
  EXPECT_NE(error.find("cannot write " + base + "/report/raw_vs_xal.json"), std::string::npos)
      << error;
  std::filesystem::remove_all(base);
}

// H2D/D2H are judged against raw copies from registered pages (the kind
// xal_host_alloc makes), not cuMemHostAlloc memory; both ratios reported.
TEST(RawbenchReport, HostCopiesAreJudgedAgainstRegisteredPages) {
  const std::string dir = ::testing::TempDir() + "/rawbench_report_" + std::to_string(::getpid());
  std::string error;
  ASSERT_TRUE(prepare_out_dir(dir, &error)) << error;
  Result htod{"htod", size_t{64} << 20};
  htod.raw_gbps = 50;             // cuMemHostAlloc memory
  htod.raw_registered_gbps = 45;  // registered pages
  htod.xal_gbps = 44.5;           // 0.989 of registered, 0.89 of cuMemHostAlloc
  htod.raw_host_gbps = 48;
  htod.raw_registered_host_gbps = 40;
  htod.xal_host_gbps = 39;
  Result dtod{"dtod", size_t{64} << 20};
  dtod.raw_gbps = 2000;
  dtod.xal_gbps = 1990;
  dtod.own_raw_gbps = 2050;  // each side's own set-up: shown, not judged
  dtod.own_xal_gbps = 1900;
  Options o;
  ::testing::internal::CaptureStdout();
  EXPECT_TRUE(report(dir, o, {htod, dtod}, 2.0, 2.1, &error)) << error;
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("registered with cuMemHostRegister"), std::string::npos) << printed;
  EXPECT_NE(printed.find("vs alloc"), std::string::npos) << printed;
  EXPECT_NE(printed.find("own set-up"), std::string::npos) << printed;
  EXPECT_NE(printed.find("ratio  0.9268"), std::string::npos) << printed;

  std::ifstream file(dir + "/raw_vs_xal.json");
  const nlohmann::json doc = nlohmann::json::parse(file);
  const auto& h = doc["copies"][0];
  EXPECT_EQ(h["baseline"], "cuMemHostRegister pages");
  EXPECT_NEAR(h["ratio"].get<double>(), 44.5 / 45, 1e-9);
  EXPECT_NEAR(h["ratio_vs_host_alloc"].get<double>(), 44.5 / 50, 1e-9);
  EXPECT_NEAR(h["host_ratio"].get<double>(), 39.0 / 40, 1e-9);
  EXPECT_TRUE(h["pass"].get<bool>());
  const auto& d = doc["copies"][1];
  EXPECT_EQ(d["baseline"], "raw");
  EXPECT_NEAR(d["ratio"].get<double>(), 0.995, 1e-9);
  EXPECT_NEAR(d["own_xal_gbps"].get<double>(), 1900, 1e-9);
  EXPECT_TRUE(d["pass"].get<bool>());  // the own set-up's 0.927 is not judged
  EXPECT_TRUE(doc["all_targets_met"].get<bool>());

  // Short of the registered baseline: the target is missed.
  htod.xal_gbps = 43;
  ::testing::internal::CaptureStdout();
  EXPECT_FALSE(report(dir, o, {htod}, 2.0, 2.1, &error));
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("below target 0.98"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xal::cuda::rawbench
