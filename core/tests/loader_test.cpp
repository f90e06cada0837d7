// The loader: names and paths, reasons for every broken plugin, ABI checks
// in both directions, the device selector.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "xal/xal_backend.h"
#include "xal/xal_fault.h"

using namespace xal_test;

namespace {

xal_backend_info_t info_of(uint32_t i) {
  xal_backend_info_t b{};
  b.struct_size = sizeof b;
  EXPECT_EQ(xal_backend_get_info(i, &b), XAL_SUCCESS);
  return b;
}

// The backend whose path ends with libxal_backend_<name>.so, or whose name
// is `name`.
bool find_backend(const std::string& name, xal_backend_info_t* out) {
  uint32_t n = 0;
  EXPECT_EQ(xal_backend_count(&n), XAL_SUCCESS);
  const std::string file = "libxal_backend_" + name + ".so";
  for (uint32_t i = 0; i < n; ++i) {
    xal_backend_info_t b = info_of(i);
    const std::string path = b.path;
    if (b.name == name ||
        (path.size() >= file.size() &&
         path.compare(path.size() - file.size(), file.size(), file) == 0)) {
      *out = b;
      return true;
    }
  }
  return false;
}

bool contains(const char* text, const std::string& part) {
  return std::string(text).find(part) != std::string::npos;
}

class Loader : public ::testing::Test {
 protected:
  void TearDown() override { xal_shutdown(); }
};

}  // namespace

TEST_F(Loader, EveryBrokenPluginIsListedWithItsReason) {
  const std::string list = plugin("testdev") + "," + plugin("notalib") + "," +
                           plugin("noentry") + "," + plugin("major2") + "," +
                           plugin("unavailable") + "," + plugin("oldminor") +
                           "," + plugin("newminor") + "," +
                           plugin("oldunavailable") + ",nosuch";
  ASSERT_XAL_OK(init(list));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  EXPECT_EQ(n, 9u);

  xal_backend_info_t b{};
  ASSERT_TRUE(find_backend("testdev", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED);
  EXPECT_EQ(b.status, XAL_SUCCESS);
  EXPECT_EQ(b.device_count, 2u);
  EXPECT_STREQ(b.version, "1.0.0");
  EXPECT_STREQ(b.driver_version, "testdev 1");
  EXPECT_EQ(b.flags & XAL_BACKEND_FLAG_SIMULATED, XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_EQ(b.abi_version, XAL_ABI_VERSION);
  EXPECT_STREQ(b.note, "");  // describe's note (empty), not the table's

  ASSERT_TRUE(find_backend("notalib", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_TRUE(contains(b.reason, "dlopen failed")) << b.reason;
  // The dlerror text names the file.
  EXPECT_TRUE(contains(b.reason, "libxal_backend_notalib.so")) << b.reason;

  ASSERT_TRUE(find_backend("noentry", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_TRUE(contains(b.reason, "missing symbol xal_backend_get")) << b.reason;

  ASSERT_TRUE(find_backend("major2", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_EQ(b.status, XAL_ERROR_ABI_MISMATCH);
  EXPECT_TRUE(contains(b.reason, "plugin built for ABI 2.0, libxal is 1.1")) << b.reason;
  EXPECT_EQ(b.abi_version, 2u << 16);

  ASSERT_TRUE(find_backend("unavailable", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_UNAVAILABLE);
  EXPECT_EQ(b.status, XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_TRUE(contains(b.reason, "no testdev device present")) << b.reason;
  EXPECT_TRUE(contains(b.reason, "100")) << b.reason;
  EXPECT_TRUE(contains(b.reason, "TESTDEV_ERROR_NO_DEVICE")) << b.reason;
  // What the plugin has been verified on is shown even though init failed.
  EXPECT_STREQ(b.note, "verified on testdev's own tests only");

  ASSERT_TRUE(find_backend("oldminor", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED) << b.reason;
  EXPECT_EQ(b.device_count, 2u);

  ASSERT_TRUE(find_backend("newminor", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED) << b.reason;
  EXPECT_EQ(b.abi_version, (1u << 16) | (XAL_ABI_VERSION_MINOR + 3));

  ASSERT_TRUE(find_backend("oldunavailable", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_UNAVAILABLE);
  EXPECT_STREQ(b.note, "");  // its table ends before support_note

  ASSERT_TRUE(find_backend("nosuch", &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_UNAVAILABLE);
  EXPECT_TRUE(contains(b.reason, "libxal_backend_nosuch.so not found")) << b.reason;

  uint32_t devices = 0;
  ASSERT_XAL_OK(xal_device_count(&devices));
  EXPECT_EQ(devices, 6u);
}

// A plugin built against the 1.0 headers loads and works; what came in 1.1
// (read past its table's end, even when set there) is not supported.
TEST_F(Loader, AnAbi10PluginLoadsAndItsInteropIsNotSupported) {
  ASSERT_XAL_OK(init(plugin("abi10")));
  xal_backend_info_t b{};
  b.struct_size = sizeof b;
  ASSERT_XAL_OK(xal_backend_get_info(0, &b));
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED) << b.reason;
  EXPECT_EQ(b.abi_version, 1u << 16);
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_XAL_OK(xal_device_get_properties(d, &p));
  EXPECT_EQ(p.capabilities & (XAL_DEVICE_CAP_MEM_IMPORT | XAL_DEVICE_CAP_STREAM_IMPORT |
                              XAL_DEVICE_CAP_IPC),
            0u);
  xal_devptr_t q = 0;
  std::vector<uint8_t> host(64);
  EXPECT_XAL_ERROR(xal_mem_import(d, reinterpret_cast<uint64_t>(host.data()), host.size(),
                                  XAL_MEM_IMPORT_HOST, &q),
                   XAL_ERROR_NOT_SUPPORTED);
  xal_stream_t s;
  EXPECT_XAL_ERROR(xal_stream_import(d, 0x1000, 0, &s), XAL_ERROR_NOT_SUPPORTED);
  xal_ipc_handle_t h{};
  xal_devptr_t a = 0;
  ASSERT_XAL_OK(xal_mem_alloc(d, 4096, &a));
  EXPECT_XAL_ERROR(xal_mem_get_ipc_handle(d, a, &h), XAL_ERROR_NOT_SUPPORTED);
  ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
  uint32_t v = 9, r = 0;
  ASSERT_XAL_OK(xal_memcpy_htod(s, a, &v, 4));
  ASSERT_XAL_OK(xal_memcpy_dtoh(s, &r, a, 4));
  ASSERT_XAL_OK(xal_stream_synchronize(s));
  EXPECT_EQ(r, 9u);
  ASSERT_XAL_OK(xal_stream_destroy(s));
  ASSERT_XAL_OK(xal_mem_free(d, a));
  // The 1.0 size of the backend info is still accepted.
  xal_backend_info_t old{};
  old.struct_size = XAL_BACKEND_INFO_SIZE_1_0;
  ASSERT_XAL_OK(xal_backend_get_info(0, &old));
  EXPECT_EQ(old.struct_size, XAL_BACKEND_INFO_SIZE_1_0);
}

TEST_F(Loader, OlderMinorLoadsAndItsMissingEntriesAreNotSupported) {
  ASSERT_XAL_OK(init(plugin("oldminor")));
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  xal_devptr_t p;
  ASSERT_XAL_OK(xal_mem_alloc(d, 4096, &p));
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
  uint32_t v = 7, r = 0;
  ASSERT_XAL_OK(xal_memcpy_htod(s, p, &v, 4));
  ASSERT_XAL_OK(xal_memcpy_dtoh(s, &r, p, 4));
  ASSERT_XAL_OK(xal_stream_synchronize(s));
  EXPECT_EQ(r, 7u);
  xal_module_t m;
  EXPECT_XAL_ERROR(xal_module_load(d, XAL_MODULE_FORMAT_NATIVE, "testdev-kernels", 15, &m),
                   XAL_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(contains(last_error().message, "does not support kernels"));
  // No native collectives in the old table: the core's path serves.
  xal_comm_t c[1];
  ASSERT_XAL_OK(xal_comm_create(&d, 1, nullptr, c));
  ASSERT_XAL_OK(xal_comm_destroy(c[0]));
  // The table seen by the core reads NULL past the plugin's struct_size.
  const xal_backend_table_t* t = nullptr;
  xal_backend_t* inst = nullptr;
  ASSERT_XAL_OK(xal_backend_get_native(0, &t, &inst));
  EXPECT_EQ(t->module_load, nullptr);
  EXPECT_EQ(t->device_ptr_to_host, nullptr);
  EXPECT_NE(t->event_elapsed_ms, nullptr);
  ASSERT_XAL_OK(xal_mem_free(d, p));
}

TEST_F(Loader, NamesAreSearchedInTheBackendPath) {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = "testdev, testdev2";
  o.backend_path = XAL_TEST_PLUGIN_DIR;
  o.validation = -1;
  ASSERT_XAL_OK(xal_init(&o));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(info_of(0).name, "testdev");
  EXPECT_STREQ(info_of(1).name, "testdev2");
  EXPECT_EQ(std::string(info_of(0).path), plugin("testdev"));
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 4u);
}

TEST_F(Loader, EnvironmentVariablesAreUsedWithoutOptions) {
  ScopedEnv b("XAL_BACKENDS", "testdev2");
  ScopedEnv p("XAL_BACKEND_PATH", "relative/dir:" XAL_TEST_PLUGIN_DIR);
  ASSERT_XAL_OK(xal_init(nullptr));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(info_of(0).state, XAL_BACKEND_STATE_LOADED);
  EXPECT_STREQ(info_of(0).name, "testdev2");
}

TEST_F(Loader, ScanningFindsEveryPluginSortedByName) {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = "";
  o.backend_path = XAL_TEST_PLUGIN_DIR;
  o.validation = -1;
  ASSERT_XAL_OK(xal_init(&o));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  std::vector<std::string> ours;
  const std::string dir = XAL_TEST_PLUGIN_DIR;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string path = info_of(i).path;
    if (path.rfind(dir, 0) == 0) ours.push_back(path.substr(dir.size() + 1));
  }
  const std::vector<std::string> expected = {
      "libxal_backend_abi10.so",
      "libxal_backend_major2.so",  "libxal_backend_minimal.so",
      "libxal_backend_newminor.so",
      "libxal_backend_noentry.so", "libxal_backend_notalib.so",
      "libxal_backend_oldminor.so", "libxal_backend_oldunavailable.so",
      "libxal_backend_probe.so",
      "libxal_backend_testdev.so",  "libxal_backend_testdev2.so",
      "libxal_backend_tiny.so",     "libxal_backend_unavailable.so"};
  EXPECT_EQ(ours, expected);
}

TEST_F(Loader, RelativePathsAreRefused) {
  ASSERT_XAL_OK(init("some/relative/libxal_backend_x.so"));
  xal_backend_info_t b = info_of(0);
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_TRUE(contains(b.reason, "relative")) << b.reason;
}

TEST_F(Loader, NoBackendMeansZeroDevicesNotFailure) {
  ASSERT_XAL_OK(init("nosuch"));
  uint32_t n = 1;
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 0u);
  xal_device_t d;
  EXPECT_XAL_ERROR(xal_device_get(0, &d), XAL_ERROR_INVALID_ARGUMENT);
}

// The fault plugin may or may not be built beside libxal: these tests hold
// either way.
namespace {

bool starts_with(const char* text, const char* prefix) {
  return std::string(text).rfind(prefix, 0) == 0;
}

// A fault entry is either loaded, or listed with the reason it is not.
void expect_fault_entry(const xal_backend_info_t& b) {
  EXPECT_TRUE(starts_with(b.name, "fault")) << b.name;
  if (b.state != XAL_BACKEND_STATE_LOADED) {
    EXPECT_STRNE(b.reason, "");
  }
}

}  // namespace

TEST_F(Loader, WrappedTargetIsNotLoadedStandalone) {
  ASSERT_XAL_OK(init("fault:testdev," + plugin("testdev") + ",testdev"));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  // The absolute path of testdev is another entry; the bare name is not.
  ASSERT_EQ(n, 2u);
  expect_fault_entry(info_of(0));
  EXPECT_STREQ(info_of(1).name, "testdev");
}

TEST_F(Loader, FaultEnvironmentAddsTheFaultBackend) {
  ScopedEnv f("XAL_FAULTS", "mem_alloc=nth(1)OUT_OF_MEMORY");
  ASSERT_XAL_OK(init(plugin("testdev")));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(info_of(0).name, "testdev");
  const xal_backend_info_t b = info_of(1);
  expect_fault_entry(b);
  if (b.state == XAL_BACKEND_STATE_LOADED) {
    EXPECT_EQ(xal_fault_clear(), XAL_SUCCESS);
  } else {
    EXPECT_XAL_ERROR(xal_fault_clear(), XAL_ERROR_BACKEND_UNAVAILABLE);
    EXPECT_TRUE(contains(last_error().message, "no fault backend loaded"));
  }
}

TEST_F(Loader, FaultFunctionsWithoutAFaultBackend) {
  ASSERT_XAL_OK(init(plugin("testdev")));
  uint32_t n;
  EXPECT_XAL_ERROR(xal_fault_rule_count(&n), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_XAL_ERROR(xal_fault_load_plan("x=nth(1)TIMEOUT", 0), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_XAL_ERROR(xal_fault_set_rule_enabled("r", 1), XAL_ERROR_BACKEND_UNAVAILABLE);
  xal_fault_counters_t c{};
  c.struct_size = sizeof c;
  EXPECT_XAL_ERROR(xal_fault_get_counters(&c), XAL_ERROR_BACKEND_UNAVAILABLE);
  xal_fault_rule_info_t r{};
  r.struct_size = sizeof r;
  EXPECT_XAL_ERROR(xal_fault_rule_get_info(0, &r), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_XAL_ERROR(xal_fault_load_plan(nullptr, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_fault_rule_count(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_fault_get_counters(nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Loader, SelectorPicksDevicesInLoadOrder) {
  const std::string both = plugin("testdev") + "," + plugin("testdev2");
  ASSERT_XAL_OK(init(both, "testdev2:1;testdev:0"));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_device_count(&n));
  ASSERT_EQ(n, 2u);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  ASSERT_XAL_OK(xal_device_get_properties(d, &p));
  EXPECT_STREQ(p.backend, "testdev");
  EXPECT_EQ(p.backend_index, 0u);
  EXPECT_EQ(p.index, 0u);
  ASSERT_XAL_OK(xal_device_get(1, &d));
  ASSERT_XAL_OK(xal_device_get_properties(d, &p));
  EXPECT_STREQ(p.backend, "testdev2");
  EXPECT_EQ(p.backend_index, 1u);
  EXPECT_EQ(p.index, 1u);
  EXPECT_EQ(info_of(1).device_count, 1u);
  ASSERT_XAL_OK(xal_shutdown());

  ASSERT_XAL_OK(init(both, "testdev:*"));
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(info_of(1).device_count, 0u);
  ASSERT_XAL_OK(xal_shutdown());

  ASSERT_XAL_OK(init(both, "testdev:0-1;testdev2:1,0"));
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 4u);
  ASSERT_XAL_OK(xal_shutdown());

  ASSERT_XAL_OK(init(both, "cuda:*"));
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 0u);
}

TEST_F(Loader, MalformedSelectorFailsInit) {
  for (const char* bad : {"testdev:x", ":1", "testdev:", "testdev:1-0",
                          "testdev:1,,2", "testdev:-1"}) {
    EXPECT_XAL_ERROR(init(plugin("testdev"), bad), XAL_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error().message, "selector")) << bad;
    uint32_t n;
    EXPECT_EQ(xal_device_count(&n), XAL_ERROR_NOT_INITIALIZED) << bad;
  }
  ScopedEnv s("XAL_DEVICE_SELECTOR", "testdev:zz");
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  const std::string p = plugin("testdev");
  o.backends = p.c_str();
  o.validation = -1;
  EXPECT_XAL_ERROR(xal_init(&o), XAL_ERROR_INVALID_ARGUMENT);
}

// A selector that keeps nothing (a misspelt backend, an index past the
// end) is not an error, but xal says so instead of leaving zero devices
// unexplained; a relative backend folder is ignored with a warning too.
TEST_F(Loader, SelectorThatKeepsNothingIsReported) {
  const std::string p = plugin("testdev");
  ::testing::internal::CaptureStderr();
  ASSERT_XAL_OK(init(p, "testdve:0;testdev:1,5"));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 1u);
  ASSERT_XAL_OK(xal_shutdown());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err.c_str(), "'testdve' names no started backend")) << err;
  EXPECT_TRUE(contains(err.c_str(), "'testdev:5': testdev has 2 device(s)")) << err;
  EXPECT_FALSE(contains(err.c_str(), "testdev:1'")) << err;

  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = p.c_str();
  o.backend_path = "relative/plugins";
  o.validation = -1;
  ::testing::internal::CaptureStderr();
  ASSERT_XAL_OK(xal_init(&o));
  ASSERT_XAL_OK(xal_shutdown());
  const std::string err2 = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err2.c_str(), "'relative/plugins' is ignored: only absolute folders")) << err2;
}

// A wide range past the last device is one warning, not one per index
// (nor a set of 16 million indices).
TEST_F(Loader, WideSelectorRangeIsReportedOnce) {
  const std::string p = plugin("testdev");
  auto lines_about = [](const std::string& err) {
    size_t n = 0;
    for (size_t at = err.find("selects nothing"); at != std::string::npos;
         at = err.find("selects nothing", at + 1))
      ++n;
    return n;
  };
  for (const char* sel : {"testdev:0-4095", "testdev:1;testdev:0-16777215,7"}) {
    ::testing::internal::CaptureStderr();
    const xal_status_t st = init(p, sel);
    uint32_t n = 0;
    if (st == XAL_SUCCESS) xal_device_count(&n);
    xal_shutdown();
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(st, XAL_SUCCESS) << sel;
    EXPECT_EQ(n, 2u) << sel;
    ASSERT_EQ(lines_about(err), 1u) << sel << ": " << err.substr(0, 2000);
    const std::string range = std::string(sel).find("16777215") != std::string::npos
                                  ? "'testdev:2-16777215': testdev has 2 device(s)"
                                  : "'testdev:2-4095': testdev has 2 device(s)";
    EXPECT_TRUE(contains(err.c_str(), range.c_str())) << err;
  }
}

// A program built against the 1.0 header passes the 1.0 struct size: the
// fields it knows are filled, nothing past them is written.
TEST_F(Loader, BackendInfoOfThe10SizeIsFilledUpToItsEnd) {
  ASSERT_XAL_OK(init(plugin("testdev")));
  const size_t size10 = offsetof(xal_backend_info_t, driver_version) +
                        sizeof(xal_backend_info_t::driver_version);
  xal_backend_info_t b;
  std::memset(&b, 0x5a, sizeof b);
  b.struct_size = size10;
  ASSERT_XAL_OK(xal_backend_get_info(0, &b));
  EXPECT_EQ(b.struct_size, size10);
  EXPECT_STREQ(b.driver_version, "testdev 1");
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED);
  const auto* tail = reinterpret_cast<const unsigned char*>(&b) + size10;
  for (size_t i = 0; i < sizeof b - size10; ++i) ASSERT_EQ(tail[i], 0x5a) << i;
  b.struct_size = size10 - 1;
  EXPECT_XAL_ERROR(xal_backend_get_info(0, &b), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Loader, TableSmallerThanTheRequiredEntriesIsRefused) {
  ASSERT_XAL_OK(init(plugin("tiny")));
  xal_backend_info_t b = info_of(0);
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_EQ(b.status, XAL_ERROR_ABI_MISMATCH);
  EXPECT_TRUE(contains(b.reason, "table too small")) << b.reason;
}

TEST_F(Loader, WrapperLoadsItsTargetThroughServices) {
  // probe:<target> gives init the argument; probe loads it with
  // services->load_backend, searched in the backend path.
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = "probe:testdev2";
  o.backend_path = XAL_TEST_PLUGIN_DIR;
  o.validation = -1;
  ASSERT_XAL_OK(xal_init(&o));
  xal_backend_info_t b = info_of(0);
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_LOADED) << b.reason;
  EXPECT_STREQ(b.name, "probe(testdev2)");
  // describe()'s note (the wrapper's: the file of its target).
  EXPECT_TRUE(contains(b.note, "libxal_backend_testdev2.so")) << b.note;
  // The selector knows a wrapper by its target's name as well.
  ASSERT_XAL_OK(xal_shutdown());
  o.device_selector = "testdev2:1";
  ASSERT_XAL_OK(xal_init(&o));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_device_count(&n));
  EXPECT_EQ(n, 1u);
  ASSERT_XAL_OK(xal_shutdown());

  o.device_selector = "";
  o.backends = "probe:nosuch";
  ASSERT_XAL_OK(xal_init(&o));
  b = info_of(0);
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_UNAVAILABLE);
  EXPECT_TRUE(contains(b.reason, "cannot load backend 'nosuch'")) << b.reason;
  ASSERT_XAL_OK(xal_shutdown());

  o.backends = "probe:major2";
  ASSERT_XAL_OK(xal_init(&o));
  b = info_of(0);
  EXPECT_EQ(b.state, XAL_BACKEND_STATE_FAILED);
  EXPECT_TRUE(contains(b.reason, "plugin built for ABI 2.0")) << b.reason;
}

TEST_F(Loader, FaultFunctionsReachTheControlExtension) {
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("probe")));
  ASSERT_XAL_OK(xal_fault_load_plan("mem_alloc=nth(1)OUT_OF_MEMORY", XAL_FAULT_PLAN_REPLACE));
  ASSERT_XAL_OK(xal_fault_load_plan("second", XAL_FAULT_PLAN_APPEND));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_fault_rule_count(&n));
  EXPECT_EQ(n, 2u);
  xal_fault_rule_info_t r{};
  r.struct_size = sizeof r;
  ASSERT_XAL_OK(xal_fault_rule_get_info(1, &r));
  EXPECT_STREQ(r.name, "second");
  EXPECT_XAL_ERROR(xal_fault_rule_get_info(5, &r), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_XAL_OK(xal_fault_set_rule_enabled("second", 0));
  EXPECT_XAL_ERROR(xal_fault_set_rule_enabled("other", 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_fault_load_plan("bad", 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error().message, "rule 1")) << last_error().message;
  EXPECT_STREQ(last_error().backend, "probe");
  EXPECT_STREQ(last_error().operation, "xal_fault_load_plan");
  xal_fault_counters_t c{};
  c.struct_size = sizeof c;
  ASSERT_XAL_OK(xal_fault_get_counters(&c));
  EXPECT_EQ(c.calls, 2u);
  ASSERT_XAL_OK(xal_fault_clear());
  ASSERT_XAL_OK(xal_fault_rule_count(&n));
  EXPECT_EQ(n, 0u);
}

TEST_F(Loader, FaultPlanTargetReplacesThatBackend) {
  const std::string file = ::testing::TempDir() + "xal_core_plan.json";
  auto write = [&](const char* text) {
    FILE* out = std::fopen(file.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(text, out);
    std::fclose(out);
  };
  // The plan names testdev2: it is wrapped in its place, testdev stays.
  write(R"({"target": "testdev2", "rules": []})");
  ScopedEnv f("XAL_FAULT_PLAN", file.c_str());
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(info_of(0).name, "testdev");
  expect_fault_entry(info_of(1));
  ASSERT_XAL_OK(xal_shutdown());

  // Without a target the plan wraps the default, mock: nothing listed here
  // is replaced and the fault entry is added.
  write(R"({"rules": []})");
  ASSERT_XAL_OK(init(plugin("testdev")));
  ASSERT_XAL_OK(xal_backend_count(&n));
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(info_of(0).name, "testdev");
  expect_fault_entry(info_of(1));
  std::remove(file.c_str());
}

// XAL_FAULTS' own target= setting (the compact syntax) names the backend to
// wrap as the plan's "target" does: that backend is wrapped in its place,
// not the default mock added beside it. Items are separated by ';' or
// newlines, with blanks around them.
TEST_F(Loader, CompactFaultTargetReplacesThatBackend) {
  for (const char* faults : {"target=testdev2;mem_alloc=nth(1)OUT_OF_MEMORY",
                             "mem_alloc=nth(1)OUT_OF_MEMORY\n  target = testdev2 ;seed=3"}) {
    ScopedEnv f("XAL_FAULTS", faults);
    ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
    uint32_t n = 0;
    ASSERT_XAL_OK(xal_backend_count(&n));
    ASSERT_EQ(n, 2u) << faults;
    EXPECT_STREQ(info_of(0).name, "testdev");
    const xal_backend_info_t b = info_of(1);
    expect_fault_entry(b);
    if (b.state == XAL_BACKEND_STATE_LOADED) {
      EXPECT_STREQ(b.name, "fault(testdev2)");
    }
    ASSERT_XAL_OK(xal_shutdown());
  }
  // A plan without a target leaves XAL_FAULTS' target in force (the fault
  // backend merges them so).
  const std::string file = ::testing::TempDir() + "xal_core_plan_notarget.json";
  FILE* out = std::fopen(file.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs(R"({"rules": []})", out);
  std::fclose(out);
  ScopedEnv p("XAL_FAULT_PLAN", file.c_str());
  ScopedEnv f("XAL_FAULTS", "target=testdev2");
  ASSERT_XAL_OK(init(plugin("testdev") + "," + plugin("testdev2")));
  uint32_t n = 0;
  ASSERT_XAL_OK(xal_backend_count(&n));
  EXPECT_EQ(n, 2u);
  expect_fault_entry(info_of(1));
  std::remove(file.c_str());
}
