// Profiles and XAL_MOCK_DEVICES parsing: good specifications and every kind
// of malformed one, directly and through init.
#include <cstdio>
#include <fstream>
#include <string>

#include "device_spec.h"
#include "mock_harness.h"

namespace xal::mock {
namespace {

using test::Instance;
using test::table;

constexpr uint64_t GiB = 1ull << 30;

std::string spec_error(const std::string& spec) {
  try {
    parse_device_spec(spec);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Profiles, BuiltinTableHasPublicFigures) {
  auto h100 = find_builtin_profile("h100-sxm-80g");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->vendor, "NVIDIA");
  EXPECT_EQ(h100->compute_units, 132u);
  EXPECT_EQ(h100->memory_bytes, 80 * GiB);
  EXPECT_DOUBLE_EQ(h100->peak_memory_bandwidth_gbps, 3350.0);
  auto a100 = find_builtin_profile("A100-40G");  // case-insensitive
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->compute_units, 108u);
  EXPECT_DOUBLE_EQ(a100->peak_memory_bandwidth_gbps, 1555.0);
  auto mi250x = find_builtin_profile("mi250x");
  ASSERT_TRUE(mi250x);
  EXPECT_EQ(mi250x->vendor, "AMD");
  EXPECT_EQ(mi250x->compute_units, 220u);
  EXPECT_EQ(mi250x->memory_bytes, 128 * GiB);
  auto mi300x = find_builtin_profile("mi300x");
  ASSERT_TRUE(mi300x);
  EXPECT_EQ(mi300x->compute_units, 304u);
  EXPECT_EQ(mi300x->memory_bytes, 192 * GiB);
  EXPECT_DOUBLE_EQ(mi300x->peak_memory_bandwidth_gbps, 5300.0);
  auto max = find_builtin_profile("intel-max-1550");
  ASSERT_TRUE(max);
  EXPECT_EQ(max->vendor, "Intel");
  EXPECT_EQ(max->compute_units, 128u);
  auto ascend = find_builtin_profile("ascend-910b");
  ASSERT_TRUE(ascend);
  EXPECT_EQ(ascend->vendor, "Huawei");
  EXPECT_EQ(ascend->memory_bytes, 64 * GiB);
  EXPECT_FALSE(find_builtin_profile("h200"));
  for (const Profile& p : builtin_profiles()) {
    EXPECT_GT(p.memory_bytes, 0u) << p.key;
    EXPECT_GT(p.compute_units, 0u) << p.key;
    EXPECT_GT(p.peak_memory_bandwidth_gbps, 0.0) << p.key;
    EXPECT_GE(p.tdp_w, p.idle_w) << p.key;
    EXPECT_EQ(builtin_profile_names().find(p.key) != std::string::npos, true);
  }
}

TEST(DeviceSpec, DefaultIsTwoCards) {
  auto profiles = parse_device_spec("");
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].key, "a100-40g");
  EXPECT_EQ(parse_device_spec("   ").size(), 2u);
}

TEST(DeviceSpec, CompactList) {
  auto p = parse_device_spec("2*a100-40g, 1*mi250x ,h100-sxm-80g");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].key, "a100-40g");
  EXPECT_EQ(p[1].key, "a100-40g");
  EXPECT_EQ(p[2].key, "mi250x");
  EXPECT_EQ(p[3].key, "h100-sxm-80g");
}

TEST(DeviceSpec, CompactErrors) {
  std::string e = spec_error("2*a100-40g,1*nosuch");
  EXPECT_NE(e.find("entry 1"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown profile 'nosuch'"), std::string::npos) << e;
  EXPECT_NE(e.find("mi300x"), std::string::npos) << e;  // lists known names
  e = spec_error("a100-40g,,mi250x");
  EXPECT_NE(e.find("empty entry"), std::string::npos) << e;
  EXPECT_NE(e.find("byte 9"), std::string::npos) << e;
  EXPECT_NE(spec_error("0*a100-40g").find("positive device count"), std::string::npos);
  EXPECT_NE(spec_error("x*a100-40g").find("positive device count"), std::string::npos);
  EXPECT_NE(spec_error("-1*a100-40g").find("positive device count"), std::string::npos);
  EXPECT_NE(spec_error("99999999999*l4").find("more than"), std::string::npos);
  EXPECT_NE(spec_error("a100-40g,").find("empty entry"), std::string::npos);
}

TEST(DeviceSpec, JsonListWithOverrides) {
  auto p = parse_device_spec(R"([
    {"profile": "h100-sxm-80g", "count": 2, "memory": "2GiB", "bandwidth_gbps": 25},
    {"profile": "mi300x", "name": "Custom MI300X", "memory": 1048576}
  ])");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].memory_bytes, 2 * GiB);
  EXPECT_DOUBLE_EQ(p[0].bandwidth_gbps, 25.0);
  EXPECT_EQ(p[0].compute_units, 132u);  // rest of the profile kept
  EXPECT_EQ(p[2].name, "Custom MI300X");
  EXPECT_EQ(p[2].memory_bytes, 1048576u);
}

TEST(DeviceSpec, JsonObjectWithFullProfile) {
  auto p = parse_device_spec(R"({"devices": [
    {"name": "Lab Card 16GB", "vendor": "Lab", "kind": "accelerator",
     "memory": "16MiB", "compute_units": 40, "peak_memory_bandwidth_gbps": 512.5,
     "core_clock_mhz": 1500, "tdp_w": 200, "idle_w": 20}]})");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].vendor, "Lab");
  EXPECT_EQ(p[0].kind, static_cast<uint32_t>(XAL_DEVICE_KIND_ACCELERATOR));
  EXPECT_EQ(p[0].memory_bytes, 16u << 20);
  EXPECT_EQ(p[0].compute_units, 40u);
  EXPECT_DOUBLE_EQ(p[0].peak_memory_bandwidth_gbps, 512.5);
  EXPECT_DOUBLE_EQ(p[0].tdp_w, 200.0);
}

TEST(DeviceSpec, JsonErrorsNamePlaceAndExpectation) {
  std::string e = spec_error(R"([{"profile": "a100-40g", "memory": true}])");
  EXPECT_NE(e.find("/0/memory"), std::string::npos) << e;
  EXPECT_NE(e.find("byte size"), std::string::npos) << e;
  e = spec_error(R"({"devices": [{"profile": "a100-40g"}, {"profile": 5}]})");
  EXPECT_NE(e.find("/devices/1/profile"), std::string::npos) << e;
  EXPECT_NE(e.find("string"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "nope"}])");
  EXPECT_NE(e.find("unknown profile 'nope'"), std::string::npos) << e;
  EXPECT_NE(e.find("ascend-910b"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "colour": "red"}])");
  EXPECT_NE(e.find("unknown key \"colour\""), std::string::npos) << e;
  e = spec_error(R"([{"name": "x", "memory": "1GiB"}])");
  EXPECT_NE(e.find("needs \"vendor\""), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "count": 0}])");
  EXPECT_NE(e.find("count must be at least 1"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "count": -2}])");
  EXPECT_NE(e.find("/0/count"), std::string::npos) << e;
  // Unsigned values of 2^63 and more are too large, not negative.
  e = spec_error(R"([{"profile": "l4", "count": 9223372036854775808}])");
  EXPECT_NE(e.find("9223372036854775808 is too large"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "compute_units": 18446744073709551615}])");
  EXPECT_NE(e.find("compute_units 18446744073709551615 is too large"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "memory": "12 parsecs"}])");
  EXPECT_NE(e.find("unknown unit"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "memory": 100}])");
  EXPECT_NE(e.find("at least 4096"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "bandwidth_gbps": "fast"}])");
  EXPECT_NE(e.find("/0/bandwidth_gbps"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "kind": "toaster"}])");
  EXPECT_NE(e.find("\"gpu\""), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "tdp_w": 1, "idle_w": 10}])");
  EXPECT_NE(e.find("tdp_w"), std::string::npos) << e;
  e = spec_error(R"([])");
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
  e = spec_error(R"([3])");
  EXPECT_NE(e.find("at /0: expected an object"), std::string::npos) << e;
  e = spec_error(R"({"devices": 3})");
  EXPECT_NE(e.find("expected a list"), std::string::npos) << e;
  e = spec_error(R"({"gpus": []})");
  EXPECT_NE(e.find("unknown key \"gpus\""), std::string::npos) << e;
  e = spec_error(R"({})");
  EXPECT_NE(e.find("\"devices\" list"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4"},)");
  EXPECT_NE(e.find("JSON syntax error at byte"), std::string::npos) << e;
}

TEST(DeviceSpec, JsonFile) {
  const std::string dir = XAL_MOCK_PROFILE_DIR;
  auto p = parse_device_spec(dir + "/mixed-vendors.json");
  EXPECT_GE(p.size(), 3u);
  std::string e = spec_error("/nonexistent/devices.json");
  EXPECT_NE(e.find("cannot open file '/nonexistent/devices.json'"), std::string::npos) << e;
  const std::string bad = testing::TempDir() + "xal_mock_bad.json";
  {
    std::ofstream out(bad);
    out << "{\n  \"devices\": [ {\"profile\": \"l4\"} \n";
  }
  e = spec_error(bad);
  EXPECT_NE(e.find("file '" + bad + "'"), std::string::npos) << e;
  EXPECT_NE(e.find("JSON syntax error at byte"), std::string::npos) << e;
  std::remove(bad.c_str());
  e = spec_error(testing::TempDir());  // a directory
  EXPECT_NE(e.find("is a directory"), std::string::npos) << e;
}

TEST(DeviceSpec, DuplicateKeysAreRefused) {
  std::string e = spec_error(R"([{"profile": "l4", "memory": "1GiB", "memory": "2GiB"}])");
  EXPECT_NE(e.find("at /0/memory: duplicate key \"memory\""), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4"}, {"profile": "l4", "count": 2, "count": 3}])");
  EXPECT_NE(e.find("at /1/count: duplicate key"), std::string::npos) << e;
  e = spec_error(R"({"devices": [{"profile": "l4"}], "devices": []})");
  EXPECT_NE(e.find("at /devices: duplicate key"), std::string::npos) << e;
  e = spec_error(R"({"devices": [[1, 2], {"profile": "l4", "name": "a", "name": "b"}]})");
  EXPECT_NE(e.find("at /devices/1/name: duplicate key"), std::string::npos) << e;
  // The same key in different objects is fine.
  EXPECT_EQ(parse_device_spec(R"([{"profile": "l4"}, {"profile": "l4"}])").size(), 2u);
}

TEST(DeviceSpec, BandwidthsAreZeroOrAtLeastTheMinimum) {
  std::string e = spec_error(R"([{"profile": "l4", "bandwidth_gbps": 1e-300}])");
  EXPECT_NE(e.find("/0/bandwidth_gbps"), std::string::npos) << e;
  EXPECT_NE(e.find("0 or at least 0.001"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "peak_memory_bandwidth_gbps": 1e-9}])");
  EXPECT_NE(e.find("/0/peak_memory_bandwidth_gbps"), std::string::npos) << e;
  e = spec_error(R"([{"profile": "l4", "bandwidth_gbps": 1e400}])");
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("number overflow"), std::string::npos) << e;
  auto p = parse_device_spec(R"([{"profile": "l4", "bandwidth_gbps": 0}, )"
                             R"({"profile": "l4", "bandwidth_gbps": 0.001}])");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].bandwidth_gbps, 0.0);
  EXPECT_EQ(p[1].bandwidth_gbps, kMinRateGbps);
}

TEST(DeviceSpec, OnlyBoundedRegularFilesAreRead) {
  std::string e = spec_error("/dev/zero");
  EXPECT_NE(e.find("'/dev/zero' is not a regular file"), std::string::npos) << e;
  const std::string big = testing::TempDir() + "xal_mock_big.json";
  {
    std::ofstream out(big);
    out << "[{\"profile\": \"l4\"}]" << std::string(kMaxSpecFileBytes, ' ');
  }
  e = spec_error(big);
  EXPECT_NE(e.find("file '" + big + "' is larger than 1048576 bytes"), std::string::npos) << e;
  std::remove(big.c_str());
}

TEST(DeviceSpec, EveryShippedProfileFileParses) {
  const std::string dir = XAL_MOCK_PROFILE_DIR;
  for (const char* name : {"mixed-vendors.json", "small-test.json",
                           "throttled-pair.json", "custom-card.json"}) {
    EXPECT_NO_THROW(parse_device_spec(dir + "/" + name)) << name;
  }
}

TEST(Init, MalformedSpecGivesInvalidArgumentWithMessage) {
  test::set_mock_devices("3*not-a-card");
  xal_backend_init_args_t args{sizeof(args), test::services(), nullptr};
  xal_backend_t* b = nullptr;
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(test::last_error().message.find("unknown profile 'not-a-card'"),
            std::string::npos);
  test::set_mock_devices("[{\"profile\": \"l4\", \"memory\": []}]");
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(test::last_error().message.find("/0/memory"), std::string::npos);
}

TEST(Init, BadArguments) {
  xal_backend_t* b = nullptr;
  EXPECT_EQ(table().init(nullptr, &b), XAL_ERROR_INVALID_ARGUMENT);
  xal_backend_init_args_t args{sizeof(args), nullptr, nullptr};
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  args.services = test::services();
  EXPECT_EQ(table().init(&args, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  args.struct_size = 1;
  EXPECT_EQ(table().init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
}

TEST(Init, DefaultAndDescribe) {
  Instance inst("", /*unset=*/true);
  EXPECT_EQ(inst.count(), 2u);
  xal_backend_describe_t d{};
  d.struct_size = sizeof(d);
  ASSERT_EQ(table().describe(inst.backend(), &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "mock");
  EXPECT_EQ(d.flags & XAL_BACKEND_FLAG_SIMULATED, XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_NE(std::string(d.note).find("2*a100-40g"), std::string::npos);
  d.struct_size = 8;
  EXPECT_EQ(table().describe(inst.backend(), &d), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table().describe(inst.backend(), nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST(Init, TableHeader) {
  const xal_backend_table_t& t = table();
  EXPECT_EQ(t.struct_size, sizeof(xal_backend_table_t));
  EXPECT_EQ(t.abi_major, XAL_ABI_VERSION_MAJOR);
  EXPECT_STREQ(t.name, "mock");
  EXPECT_NE(t.version, nullptr);
  EXPECT_NE(t.comm_create, nullptr);  // native collectives
  EXPECT_NE(t.alltoall, nullptr);
  EXPECT_NE(t.kernel_launch, nullptr);
}

TEST(Init, IndependentInstances) {
  Instance a("1*l4");
  Instance b("3*mi250x");
  EXPECT_EQ(a.count(), 1u);
  EXPECT_EQ(b.count(), 3u);
  EXPECT_NE(a.device(0), b.device(0));
}

}  // namespace
}  // namespace xal::mock
