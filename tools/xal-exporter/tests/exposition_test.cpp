// The exposition builder and the strict parser the tests use, and the
// exposition of work done through xal in this process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "exposition.hpp"
#include "prom_parser.hpp"
#include "xal/xal.h"

namespace {

using xal::exporter::test::Parsed;
using xal::exporter::test::parse_exposition;

std::string join_errors(const Parsed& p) {
  std::string out;
  for (const std::string& e : p.errors) out += e + "\n";
  return out;
}

TEST(Exposition, EscapesAndFormats) {
  using xal::exporter::escape_label_value;
  using xal::exporter::format_value;
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(format_value(3.0), "3");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(-2.5), "-2.5");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(INFINITY), "+Inf");
}

TEST(Exposition, LabelValuesAreAlwaysValidUtf8) {
  using xal::exporter::escape_label_value;
  const std::string fffd = "\xEF\xBF\xBD";
  // Well-formed characters of 2, 3 and 4 bytes pass unchanged.
  EXPECT_EQ(escape_label_value("\xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80");
  // A truncated character at the end (what a byte-count cut leaves).
  EXPECT_EQ(escape_label_value("\xC3\xBC\xC3"), "\xC3\xBC" + fffd);
  EXPECT_EQ(escape_label_value("a\xE2\x82"), "a" + fffd + fffd);
  // Stray continuation, overlong form, surrogate, bytes never in UTF-8.
  EXPECT_EQ(escape_label_value("\xBCx"), fffd + "x");
  EXPECT_EQ(escape_label_value("\xC0\xAF"), fffd + fffd);
  EXPECT_EQ(escape_label_value("\xED\xA0\x80"), fffd + fffd + fffd);
  EXPECT_EQ(escape_label_value("\xFF\\"), fffd + "\\\\");

  xal::telemetry::Snapshot snap;
  xal::telemetry::DeviceSnapshot d;
  std::snprintf(d.props.vendor, sizeof(d.props.vendor), "%s", "V\xC3");
  snap.devices.push_back(d);
  const std::string text = xal::exporter::render_exposition(snap, 0);
  const Parsed p = parse_exposition(text);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << text;
  EXPECT_EQ(p.find("xal_device_info").at(0).labels.at("vendor"), "V" + fffd);
}

TEST(Exposition, GroupsFamiliesAndParsesBack) {
  xal::exporter::Exposition e;
  e.add("x_ratio", "gauge", "A ratio.", {{"device", "0"}}, 0.5);
  e.add_count("y_total", "counter", "Line\nbreak \\ help.", {}, 7);
  e.add("x_ratio", "gauge", "A ratio.", {{"device", "1"}, {"name", "q\"uote"}}, 1);
  const std::string text = e.text();
  const Parsed p = parse_exposition(text);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << text;
  ASSERT_EQ(p.families.size(), 2u);
  EXPECT_EQ(p.families[0].samples.size(), 2u);
  EXPECT_EQ(p.find("x_ratio", {{"name", "q\"uote"}}).at(0).value, 1.0);
  EXPECT_EQ(p.find("y_total").at(0).value, 7.0);
}

TEST(Exposition, OnlyValidFieldsAreExported) {
  xal::telemetry::Snapshot snap;
  xal::telemetry::DeviceSnapshot d;
  d.index = 3;
  std::snprintf(d.props.name, sizeof(d.props.name), "%s", "card \"x\"");
  std::snprintf(d.props.backend, sizeof(d.props.backend), "%s", "cuda");
  d.props.parent_index = 1;
  d.metrics.valid = XAL_METRIC_POWER | XAL_METRIC_PCIE_REPLAYS;
  d.metrics.power_w = 123.5;
  d.metrics.pcie_replays = 4;
  d.metrics.temperature_c = 99.0;  // not valid: must not appear
  snap.devices.push_back(d);
  const std::string text = xal::exporter::render_exposition(snap, 0.001);
  const Parsed p = parse_exposition(text);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p) << text;
  EXPECT_EQ(p.find("xal_power_watts").at(0).value, 123.5);
  EXPECT_EQ(p.find("xal_power_watts").at(0).labels.at("partition"), "1");
  EXPECT_EQ(p.find("xal_power_watts").at(0).labels.at("simulated"), "false");
  EXPECT_EQ(p.find("xal_pcie_replays_total").at(0).value, 4.0);
  EXPECT_EQ(p.family("xal_temperature_celsius"), nullptr);
  EXPECT_EQ(p.family("xal_utilization_ratio"), nullptr);
  EXPECT_EQ(p.family("xal_copy_bytes_total"), nullptr);
  EXPECT_EQ(p.find("xal_device_info").at(0).labels.at("name"), "card \"x\"");
}

// In this process: work done through xal shows in the exposition's
// counters (copies by direction, allocations, errors by status).
TEST(Exposition, CountsWorkDoneThroughXalInThisProcess) {
  xal_init_options_t init{};
  init.struct_size = sizeof(init);
  init.backends = XAL_MOCK_PLUGIN;
  init.validation = -1;
  ASSERT_EQ(xal_init(&init), XAL_SUCCESS);
  struct Shutdown {
    ~Shutdown() { xal_shutdown(); }
  } shutdown;
  xal_device_t dev = nullptr;
  ASSERT_EQ(xal_device_get(0, &dev), XAL_SUCCESS);
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(dev, 0, &stream), XAL_SUCCESS);
  constexpr size_t kBytes = 4u << 20;
  std::vector<unsigned char> host(kBytes, 0x5a);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(xal_mem_alloc(dev, kBytes, &ptr), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_htod(stream, ptr, host.data(), kBytes), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(stream, host.data(), ptr, kBytes / 2), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS);
  xal_devptr_t huge = 0;
  EXPECT_EQ(xal_mem_alloc(dev, size_t{1} << 50, &huge),
            XAL_ERROR_OUT_OF_MEMORY);

  const std::string text =
      xal::exporter::render_exposition(xal::telemetry::take_snapshot({0}), 0);
  const Parsed p = parse_exposition(text);
  ASSERT_TRUE(p.errors.empty()) << join_errors(p);
  const auto copied = [&](const char* dir) {
    const auto s = p.find("xal_copy_bytes_total", {{"direction", dir}});
    return s.size() == 1 ? s[0].value : -1.0;
  };
  EXPECT_EQ(copied("htod"), static_cast<double>(kBytes)) << text;
  EXPECT_EQ(copied("dtoh"), static_cast<double>(kBytes / 2));
  EXPECT_EQ(copied("peer"), 0.0);
  EXPECT_EQ(p.find("xal_allocated_bytes").at(0).value, static_cast<double>(kBytes));
  EXPECT_EQ(p.find("xal_allocations").at(0).value, 1.0);
  EXPECT_GE(p.find("xal_memory_used_bytes").at(0).value,
            static_cast<double>(kBytes));
  EXPECT_EQ(p.find("xal_errors_total", {{"status", "XAL_ERROR_OUT_OF_MEMORY"}})
                .at(0)
                .value,
            1.0);
  EXPECT_EQ(xal_mem_free(dev, ptr), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
}

TEST(Parser, RejectsMalformedExpositions) {
  EXPECT_FALSE(parse_exposition("x 1\n").errors.empty());  // no HELP/TYPE
  EXPECT_FALSE(
      parse_exposition("# HELP a_c c\n# TYPE a_c counter\na_c 1\n").errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP g g\n# TYPE g gauge\ng{a=\"1\"} 1\n"
                                "g{a=\"1\"} 2\n")
                   .errors.empty());  // duplicate series
  EXPECT_FALSE(parse_exposition("# HELP g g\n# TYPE g gauge\ng{1a=\"1\"} 1\n")
                   .errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP g g\n# TYPE g gauge\ng one\n").errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP g g\n# TYPE g gauge\ng{a=\"\xC3\"} 1\n")
                   .errors.empty());  // invalid UTF-8
  EXPECT_TRUE(parse_exposition("# HELP g g\n# TYPE g gauge\ng{a=\"\xC3\xBC\"} 1\n")
                  .errors.empty());
  EXPECT_TRUE(parse_exposition("# HELP g g\n# TYPE g gauge\ng{a=\"\\\"\"} 1\n")
                  .errors.empty());
}

}  // namespace
