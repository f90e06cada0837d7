// The vendor backends' shared plugin-side code: the exception barrier,
// reporting through the services table, the status-table lookup and the
// resolution of vendor symbol lists.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "xalsupport/config.h"
#include "xalsupport/device_objects.h"
#include "xalsupport/guarded.h"
#include "xalsupport/nccl_abi.h"
#include "xalsupport/report.h"
#include "xalsupport/status_table.h"
#include "xalsupport/sticky_error.h"
#include "xalsupport/symbol_table.h"

namespace xal::support {
namespace {

struct Recorded {
  int calls = 0;
  xal_status_t status = XAL_SUCCESS;
  int64_t code = 0;
  std::string name;
  std::string message;
};
Recorded g_recorded;

xal_status_t record(xal_status_t status, int64_t code, const char* name,
                    const char* message) {
  ++g_recorded.calls;
  g_recorded.status = status;
  g_recorded.code = code;
  g_recorded.name = name != nullptr ? name : "";
  g_recorded.message = message != nullptr ? message : "";
  return status;
}

const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, record, nullptr, nullptr,
    nullptr};

class Support : public ::testing::Test {
 protected:
  void SetUp() override {
    g_recorded = Recorded{};
    set_services(&kServices);
  }
  void TearDown() override { set_services(nullptr); }
};

TEST_F(Support, CatchAllPassesTheBodysStatusThrough) {
  int errors = 0;
  auto on_error = [&](xal_status_t s, const char*) { ++errors; return s; };
  EXPECT_EQ(catch_all([] { return XAL_SUCCESS; }, on_error), XAL_SUCCESS);
  EXPECT_EQ(catch_all([] { return XAL_NOT_READY; }, on_error), XAL_NOT_READY);
  EXPECT_EQ(errors, 0);
}

TEST_F(Support, CatchAllMapsEachKindOfException) {
  xal_status_t seen = XAL_SUCCESS;
  std::string what = "unset";
  auto on_error = [&](xal_status_t s, const char* w) {
    seen = s;
    what = w != nullptr ? w : "(null)";
    return XAL_ERROR_BACKEND;  // the handler's result is what returns
  };
  EXPECT_EQ(catch_all([]() -> xal_status_t { throw std::bad_alloc(); }, on_error),
            XAL_ERROR_BACKEND);
  EXPECT_EQ(seen, XAL_ERROR_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(what, "(null)");
  EXPECT_EQ(catch_all([]() -> xal_status_t { throw std::runtime_error("boom"); },
                      on_error),
            XAL_ERROR_BACKEND);
  EXPECT_EQ(seen, XAL_ERROR_INTERNAL);
  EXPECT_EQ(what, "boom");
  EXPECT_EQ(catch_all([]() -> xal_status_t { throw 42; }, on_error),
            XAL_ERROR_BACKEND);
  EXPECT_EQ(seen, XAL_ERROR_INTERNAL);
  EXPECT_EQ(what, "(null)");
}

TEST_F(Support, CatchAllSurvivesAThrowingHandler) {
  auto throwing = [](xal_status_t, const char*) -> xal_status_t {
    throw std::bad_alloc();
  };
  EXPECT_EQ(catch_all([]() -> xal_status_t { throw std::logic_error("x"); },
                      throwing),
            XAL_ERROR_INTERNAL);
  EXPECT_EQ(catch_all([]() -> xal_status_t { throw std::bad_alloc(); }, throwing),
            XAL_ERROR_OUT_OF_HOST_MEMORY);
}

TEST_F(Support, GuardedReportsTheOperationAndTheCause) {
  EXPECT_EQ(guarded("hipMalloc", [] { return XAL_SUCCESS; }), XAL_SUCCESS);
  EXPECT_EQ(g_recorded.calls, 0);
  EXPECT_EQ(guarded("op", []() -> xal_status_t { throw std::bad_alloc(); }),
            XAL_ERROR_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(g_recorded.message, "op: out of host memory");
  EXPECT_EQ(guarded("op", []() -> xal_status_t { throw std::runtime_error("bad"); }),
            XAL_ERROR_INTERNAL);
  EXPECT_EQ(g_recorded.message, "op: bad");
  EXPECT_EQ(g_recorded.status, XAL_ERROR_INTERNAL);
  EXPECT_EQ(guarded("op", []() -> xal_status_t { throw 1; }), XAL_ERROR_INTERNAL);
  EXPECT_EQ(g_recorded.message, "op: unknown exception");
  EXPECT_EQ(g_recorded.calls, 3);
}

TEST_F(Support, ReportKeepsTheVendorDetail) {
  EXPECT_EQ(report(XAL_ERROR_OUT_OF_MEMORY, 2, "hipErrorOutOfMemory", "hipMalloc failed"),
            XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(g_recorded.code, 2);
  EXPECT_EQ(g_recorded.name, "hipErrorOutOfMemory");
  EXPECT_EQ(g_recorded.message, "hipMalloc failed");
  EXPECT_EQ(services(), &kServices);
}

TEST_F(Support, ReportWithoutServicesOnlyReturnsTheStatus) {
  set_services(nullptr);
  EXPECT_EQ(report(XAL_ERROR_INTERNAL, 0, nullptr, "lost"), XAL_ERROR_INTERNAL);
  const xal_backend_services_t no_set_error = {
      sizeof(xal_backend_services_t), XAL_ABI_VERSION, nullptr, nullptr, nullptr,
      nullptr};
  EXPECT_EQ(report(&no_set_error, XAL_ERROR_BACKEND, 1, nullptr, "lost"),
            XAL_ERROR_BACKEND);
  EXPECT_EQ(report(nullptr, XAL_ERROR_BACKEND, 1, nullptr, "lost"), XAL_ERROR_BACKEND);
  EXPECT_EQ(g_recorded.calls, 0);
}

TEST(StatusTable, FindsKnownCodesAndNamesUnknownOnes) {
  constexpr std::array kTable{
      StatusEntry{0, StatusMapping{XAL_SUCCESS, "ok", false}},
      StatusEntry{700, StatusMapping{XAL_ERROR_DEVICE_LOST, "lost", true}},
  };
  EXPECT_EQ(find_status(kTable, 0, "unknown").status, XAL_SUCCESS);
  const StatusMapping lost = find_status(kTable, 700, "unknown");
  EXPECT_EQ(lost.status, XAL_ERROR_DEVICE_LOST);
  EXPECT_STREQ(lost.name, "lost");
  EXPECT_TRUE(lost.sticky);
  const StatusMapping other = find_status(kTable, -5, "unknown");
  EXPECT_EQ(other.status, XAL_ERROR_BACKEND);
  EXPECT_STREQ(other.name, "unknown");
  EXPECT_FALSE(other.sticky);
  EXPECT_EQ(find_status({}, 0, "none").status, XAL_ERROR_BACKEND);
}

const char* fixed_config(const char* key) {
  return std::string(key) == "XAL_SUPPORT_TEST_KEY" ? "from-core" : nullptr;
}

TEST(Config, TheCoresSettingWinsOverTheEnvironment) {
  setenv("XAL_SUPPORT_TEST_KEY", "from-env", 1);
  const xal_backend_services_t with_config = {
      sizeof(xal_backend_services_t), XAL_ABI_VERSION, nullptr, nullptr, nullptr,
      fixed_config};
  EXPECT_STREQ(config_value(&with_config, "XAL_SUPPORT_TEST_KEY"), "from-core");
  EXPECT_EQ(config(&with_config, "XAL_SUPPORT_TEST_OTHER"), "");
  // No services, no get_config, or a table too old to have it: the
  // environment.
  EXPECT_EQ(config(nullptr, "XAL_SUPPORT_TEST_KEY"), "from-env");
  xal_backend_services_t old = with_config;
  old.get_config = nullptr;
  EXPECT_EQ(config(&old, "XAL_SUPPORT_TEST_KEY"), "from-env");
  old = with_config;
  old.struct_size = offsetof(xal_backend_services_t, get_config);
  EXPECT_EQ(config(&old, "XAL_SUPPORT_TEST_KEY"), "from-env");
  unsetenv("XAL_SUPPORT_TEST_KEY");
  EXPECT_EQ(config_value(nullptr, "XAL_SUPPORT_TEST_KEY"), nullptr);
  EXPECT_EQ(config(nullptr, "XAL_SUPPORT_TEST_KEY"), "");
}

struct Thing {
  int id = 0;
  uint64_t generation = 0;
};

TEST(DeviceObjects, KeepStampsTheGenerationAndTakeHandsBackOwnership) {
  Objects<Thing> things;
  auto made = std::make_unique<Thing>();
  made->id = 7;
  Thing* handle = keep(things, std::move(made), 3);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->generation, 3u);
  EXPECT_EQ(things.size(), 1u);
  Thing stranger;
  EXPECT_EQ(take(things, &stranger), nullptr);  // not a live object
  EXPECT_EQ(things.size(), 1u);
  std::unique_ptr<Thing> owned = take(things, handle);
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(owned->id, 7);
  EXPECT_TRUE(things.empty());
  EXPECT_EQ(take(things, handle), nullptr);  // taken once only
}

TEST_F(Support, StickyErrorKeepsTheFirstErrorUntilCleared) {
  StickyError sticky;
  EXPECT_TRUE(sticky.healthy());
  xal_device_health_t health{};
  health.struct_size = sizeof health;
  sticky.describe(&health);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(health.sticky_status, XAL_SUCCESS);
  EXPECT_STREQ(health.message, "");

  sticky.record(XAL_ERROR_DEVICE_LOST, 700, "hipErrorIllegalAddress", "first");
  sticky.record(XAL_ERROR_HARDWARE, 214, "hipErrorECCNotCorrectable", "second");
  EXPECT_FALSE(sticky.healthy());
  sticky.describe(&health);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_LOST));
  EXPECT_EQ(health.sticky_status, XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(health.vendor_code, 700);
  EXPECT_STREQ(health.message, "first");

  EXPECT_EQ(sticky.report_again("HIP device 1"), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(g_recorded.code, 700);
  EXPECT_EQ(g_recorded.name, "hipErrorIllegalAddress");
  EXPECT_EQ(g_recorded.message,
            "HIP device 1 has a sticky error (first); call xal_device_reset");

  sticky.clear();
  EXPECT_TRUE(sticky.healthy());
  sticky.record(XAL_ERROR_HARDWARE, 214, nullptr, std::string(600, 'x'));
  sticky.describe(&health);
  EXPECT_EQ(health.state, static_cast<uint32_t>(XAL_HEALTH_ERROR));
  EXPECT_EQ(sticky.name, "");
  EXPECT_EQ(std::string(health.message).size(), sizeof health.message - 1);  // cut
}

// NCCL's ABI as the CUDA and HIP plugins and the simulated NCCL use it:
// every xal dtype and op NCCL has maps there and back, the rest refuse.
TEST(NcclAbi, DtypesAndOpsMapThereAndBack) {
  const std::array<std::pair<xal_dtype_t, int>, 10> types{{
      {XAL_DTYPE_I8, 0}, {XAL_DTYPE_U8, 1}, {XAL_DTYPE_I32, 2}, {XAL_DTYPE_U32, 3},
      {XAL_DTYPE_I64, 4}, {XAL_DTYPE_U64, 5}, {XAL_DTYPE_F16, 6}, {XAL_DTYPE_F32, 7},
      {XAL_DTYPE_F64, 8}, {XAL_DTYPE_BF16, 9}}};
  for (const auto& [dtype, nccl] : types) {
    int to = -1;
    xal_dtype_t back = XAL_DTYPE_I8;
    EXPECT_TRUE(nccl_abi::to_nccl(dtype, &to));
    EXPECT_EQ(to, nccl) << "dtype " << dtype;
    EXPECT_TRUE(nccl_abi::from_nccl_dtype(nccl, &back));
    EXPECT_EQ(back, dtype);
  }
  const std::array<std::pair<xal_op_t, int>, 5> ops{
      {{XAL_OP_SUM, 0}, {XAL_OP_PROD, 1}, {XAL_OP_MAX, 2}, {XAL_OP_MIN, 3}, {XAL_OP_AVG, 4}}};
  for (const auto& [op, nccl] : ops) {
    int to = -1;
    xal_op_t back = XAL_OP_SUM;
    EXPECT_TRUE(nccl_abi::to_nccl(op, &to));
    EXPECT_EQ(to, nccl) << "op " << op;
    EXPECT_TRUE(nccl_abi::from_nccl_op(nccl, &back));
    EXPECT_EQ(back, op);
  }
  int out = 42;
  xal_dtype_t dtype = XAL_DTYPE_F32;
  xal_op_t op = XAL_OP_MAX;
  EXPECT_FALSE(nccl_abi::to_nccl(static_cast<xal_dtype_t>(1000), &out));
  EXPECT_FALSE(nccl_abi::to_nccl(static_cast<xal_op_t>(-1), &out));
  EXPECT_EQ(out, 42);  // untouched
  EXPECT_FALSE(nccl_abi::from_nccl_dtype(10, &dtype));  // ncclFloat8e4m3: none in xal
  EXPECT_FALSE(nccl_abi::from_nccl_dtype(-1, &dtype));
  EXPECT_FALSE(nccl_abi::from_nccl_op(5, &op));  // ncclNumOps / a user-made op
  EXPECT_EQ(dtype, XAL_DTYPE_F32);
  EXPECT_EQ(op, XAL_OP_MAX);
}

TEST(NcclAbi, ResultsMapToStatusesAndNames) {
  EXPECT_EQ(nccl_abi::status_of(0), XAL_SUCCESS);
  EXPECT_STREQ(nccl_abi::result_name(0), "ncclSuccess");
  EXPECT_EQ(nccl_abi::status_of(1), XAL_ERROR_BACKEND);
  EXPECT_STREQ(nccl_abi::result_name(1), "ncclUnhandledCudaError");
  EXPECT_EQ(nccl_abi::status_of(3), XAL_ERROR_INTERNAL);
  EXPECT_EQ(nccl_abi::status_of(4), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nccl_abi::status_of(5), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nccl_abi::result_name(5), "ncclInvalidUsage");
  EXPECT_EQ(nccl_abi::status_of(6), XAL_ERROR_BACKEND);
  EXPECT_EQ(nccl_abi::status_of(7), XAL_NOT_READY);
  EXPECT_STREQ(nccl_abi::result_name(7), "ncclInProgress");
  for (int unknown : {-1, 8, 1000}) {
    EXPECT_EQ(nccl_abi::status_of(unknown), XAL_ERROR_BACKEND) << unknown;
    EXPECT_STREQ(nccl_abi::result_name(unknown), "ncclUnknownResult") << unknown;
  }
}

// A fake library for SymbolResolver: two functions, looked up by name;
// every lookup is recorded with the version it asked for.
int fake_open() { return 1; }
int fake_close() { return 2; }
struct FakeLibrary {
  std::string asked;
  SymbolLookup lookup() {
    return [this](const char* name, int64_t since) -> void* {
      asked += std::string(name) + "@" + std::to_string(since) + " ";
      if (std::string_view(name) == "fake_open") return reinterpret_cast<void*>(&fake_open);
      if (std::string_view(name) == "fake_close") return reinterpret_cast<void*>(&fake_close);
      return nullptr;
    };
  }
};
std::string fake_version(int64_t since) {
  return "Fake " + std::to_string(since / 100) + "." + std::to_string(since % 100);
}

TEST(SymbolResolver, ResolvesEveryEntryIntoItsTypedSlot) {
  FakeLibrary library;
  SymbolResolver resolver(library.lookup());
  int (*open)() = nullptr;
  int (*close)() = nullptr;
  resolver.resolve(SymbolKind::REQUIRED, "fake_open", 102, open);
  resolver.resolve(SymbolKind::OPTIONAL, "fake_close", 305, close);
  EXPECT_TRUE(resolver.complete());
  EXPECT_EQ(resolver.missing(), nullptr);
  EXPECT_EQ(resolver.reason("libfake.so.1", fake_version), "");
  ASSERT_NE(open, nullptr);
  ASSERT_NE(close, nullptr);
  EXPECT_EQ(open(), 1);
  EXPECT_EQ(close(), 2);
  EXPECT_EQ(library.asked, "fake_open@102 fake_close@305 ");  // `since` passed on
}

TEST(SymbolResolver, MissingOptionalEntryIsNullAndNotAFailure) {
  FakeLibrary library;
  SymbolResolver resolver(library.lookup());
  int (*open)() = nullptr;
  int (*absent)() = &fake_close;
  resolver.resolve(SymbolKind::REQUIRED, "fake_open", 100, open);
  resolver.resolve(SymbolKind::OPTIONAL, "fake_absent", 200, absent);
  EXPECT_EQ(absent, nullptr);
  EXPECT_NE(open, nullptr);
  EXPECT_TRUE(resolver.complete());
  EXPECT_EQ(resolver.reason("libfake.so.1", fake_version), "");
}

TEST(SymbolResolver, FirstMissingRequiredEntryGivesTheReasonWithItsVersion) {
  FakeLibrary library;
  SymbolResolver resolver(library.lookup());
  int (*slots[4])() = {&fake_open, &fake_open, &fake_open, nullptr};
  resolver.resolve(SymbolKind::OPTIONAL, "fake_gone", 900, slots[0]);
  resolver.resolve(SymbolKind::REQUIRED, "fake_new", 412, slots[1]);
  resolver.resolve(SymbolKind::REQUIRED, "fake_newer", 520, slots[2]);
  resolver.resolve(SymbolKind::REQUIRED, "fake_close", 100, slots[3]);
  EXPECT_FALSE(resolver.complete());
  EXPECT_STREQ(resolver.missing(), "fake_new");
  EXPECT_EQ(resolver.missing_since(), 412);
  EXPECT_EQ(resolver.reason("libfake.so.1", fake_version),
            "libfake.so.1 is too old: missing fake_new (Fake 4.12 or newer needed)");
  // A symbol of the first release names no version: every one has it.
  EXPECT_EQ(resolver.reason("libfake.so.1", fake_version, 412),
            "libfake.so.1 is too old: missing fake_new");
  EXPECT_EQ(resolver.reason("libfake.so.1", fake_version, 411),
            "libfake.so.1 is too old: missing fake_new (Fake 4.12 or newer needed)");
  // Every entry is still looked up: the later ones are filled or null.
  EXPECT_EQ(slots[0], nullptr);
  EXPECT_EQ(slots[1], nullptr);
  EXPECT_EQ(slots[2], nullptr);
  EXPECT_EQ(slots[3], &fake_close);
}

TEST(SymbolResolver, DlsymLookupFindsTheLibrarysExports) {
  SymbolResolver resolver(dlsym_lookup(RTLD_DEFAULT));
  void* found = resolver.find(SymbolKind::REQUIRED, "malloc", 0);
  EXPECT_NE(found, nullptr);
  EXPECT_TRUE(resolver.complete());
  EXPECT_EQ(resolver.find(SymbolKind::REQUIRED, "xal_no_such_function_anywhere", 7), nullptr);
  EXPECT_STREQ(resolver.missing(), "xal_no_such_function_anywhere");
}

}  // namespace
}  // namespace xal::support
