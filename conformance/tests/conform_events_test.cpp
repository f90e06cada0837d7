// Unit tests of the suite's events file (suite/events.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "events.hpp"

namespace {

namespace fs = std::filesystem;

// A figure that is not finite is not recorded: JSON has no NaN or infinity
// (nlohmann would write null), and there is no measurement to report.
TEST(SuiteEvents, FigureThatIsNotFiniteIsNotRecorded) {
  std::string dir = (fs::temp_directory_path() / "xal-conform-events-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string file = dir + "/events.jsonl";
  auto writer = conform::make_event_writer(file.c_str());
  ASSERT_NE(writer, nullptr);
  conform::record_figure("nan_rate", std::nan(""), "GB/s", 0);
  conform::record_figure("inf_rate", std::numeric_limits<double>::infinity(), "GB/s", 0);
  conform::record_figure("rate", 2.5, "GB/s", 0);
  writer.reset();  // closes the file
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  std::error_code ec;
  fs::remove_all(dir, ec);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["name"], "rate");
  EXPECT_EQ(lines[0]["value"], 2.5);
}

}  // namespace
