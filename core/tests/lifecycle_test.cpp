// init/shutdown, NOT_INITIALIZED, error detail, status names.
#include <atomic>
#include <set>
#include <string>
#include <thread>

#include "test_util.hpp"

using namespace xal_test;

TEST(Lifecycle, CallsBeforeInitAreNotInitialized) {
  uint32_t n;
  EXPECT_XAL_ERROR(xal_device_count(&n), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_STREQ(last_error().operation, "xal_device_count");
  EXPECT_XAL_ERROR(xal_backend_count(&n), XAL_ERROR_NOT_INITIALIZED);
  xal_device_t d;
  EXPECT_XAL_ERROR(xal_device_get(0, &d), XAL_ERROR_NOT_INITIALIZED);
  xal_devptr_t p;
  EXPECT_XAL_ERROR(xal_mem_alloc(nullptr, 16, &p), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_XAL_ERROR(xal_stream_query(nullptr), XAL_ERROR_NOT_INITIALIZED);
  void* h;
  EXPECT_XAL_ERROR(xal_host_alloc(16, 0, &h), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_XAL_ERROR(xal_host_free(&n), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_XAL_ERROR(xal_group_start(), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_XAL_ERROR(xal_shutdown(), XAL_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(xal_abi_version(), XAL_ABI_VERSION);
}

TEST(Lifecycle, SecondInitIsRefused) {
  ASSERT_XAL_OK(init(plugin("testdev")));
  EXPECT_XAL_ERROR(init(plugin("testdev")), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(last_error().operation, "xal_init");
  ASSERT_XAL_OK(xal_shutdown());
  EXPECT_XAL_ERROR(xal_shutdown(), XAL_ERROR_NOT_INITIALIZED);
}

// Reserved flag bits and validation values xal does not define are refused
// (a later version may give them a meaning).
TEST(Lifecycle, OptionsWithReservedFlagsOrAnUnknownValidation) {
  xal_init_options_t o{};
  o.struct_size = sizeof o;
  o.backends = nullptr;
  o.validation = -1;
  o.flags = 0x80000000u;
  EXPECT_XAL_ERROR(xal_init(&o), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("flags"), std::string::npos);
  o.flags = 0;
  for (int32_t v : {-2, 2, 7}) {
    o.validation = v;
    EXPECT_XAL_ERROR(xal_init(&o), XAL_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(last_error().message).find("validation"), std::string::npos);
  }
  uint32_t n;
  EXPECT_XAL_ERROR(xal_device_count(&n), XAL_ERROR_NOT_INITIALIZED);  // nothing started
}

TEST(Lifecycle, OptionsWithATooSmallStructSize) {
  xal_init_options_t o{};
  o.struct_size = 4;
  EXPECT_XAL_ERROR(xal_init(&o), XAL_ERROR_INVALID_ARGUMENT);
  uint32_t n;
  EXPECT_EQ(xal_device_count(&n), XAL_ERROR_NOT_INITIALIZED);
}

TEST(Lifecycle, RepeatedCyclesWorkAndReleaseEverything) {
  for (int cycle = 0; cycle < 5; ++cycle) {
    ASSERT_XAL_OK(init(plugin("testdev")));
    xal_device_t d;
    ASSERT_XAL_OK(xal_device_get(0, &d));
    xal_devptr_t p;
    ASSERT_XAL_OK(xal_mem_alloc(d, 1 << 20, &p));
    xal_stream_t s;
    ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
    xal_event_t e;
    ASSERT_XAL_OK(xal_event_create(d, 0, &e));
    ASSERT_XAL_OK(xal_event_record(e, s));
    void* h;
    ASSERT_XAL_OK(xal_host_alloc(4096, 0, &h));
    // Shut down with everything still live: xal releases it.
    ASSERT_XAL_OK(xal_shutdown());
    // Handles of a finished runtime are refused.
    EXPECT_XAL_ERROR(xal_stream_query(s), XAL_ERROR_NOT_INITIALIZED);
    EXPECT_XAL_ERROR(xal_event_query(e), XAL_ERROR_NOT_INITIALIZED);
    EXPECT_XAL_ERROR(xal_mem_free(d, p), XAL_ERROR_NOT_INITIALIZED);
  }
}

// Calls that take no handle may race xal_shutdown from another thread:
// each one runs on the whole runtime or gets NOT_INITIALIZED, never a
// half-destroyed one (shutdown unpublishes first and waits for them).
TEST(Lifecycle, HandleFreeCallsRacingShutdownAreSafe) {
  const std::string p = plugin("testdev");
  for (int round = 0; round < 50; ++round) {
    ASSERT_XAL_OK(init(p));
    std::atomic<bool> go{true};
    std::atomic<int> bad{XAL_SUCCESS}, calls{0};
    auto allowed = [&](xal_status_t s) {
      if (s != XAL_SUCCESS && s != XAL_ERROR_NOT_INITIALIZED) bad.store(s);
      calls.fetch_add(1);
      return s == XAL_SUCCESS;
    };
    std::thread host([&] {
      while (go.load()) {
        void* h = nullptr;
        if (allowed(xal_host_alloc(64, 0, &h))) allowed(xal_host_free(h));
      }
    });
    std::thread queries([&] {
      while (go.load()) {
        uint32_t n = 0;
        allowed(xal_device_count(&n));
        xal_device_t d;
        allowed(xal_device_get(0, &d));
        allowed(xal_backend_count(&n));
        xal_backend_info_t b{};
        b.struct_size = sizeof b;
        allowed(xal_backend_get_info(0, &b));
        char text[64];
        allowed(xal_partition_config_errors(text, sizeof text, nullptr));
      }
    });
    // Shut down after the threads' first calls, at a point of their loops
    // that changes from round to round.
    while (calls.load() < 2 + round * 10) std::this_thread::yield();
    const xal_status_t down = xal_shutdown();
    go.store(false);
    host.join();
    queries.join();
    ASSERT_EQ(down, XAL_SUCCESS) << "round " << round;
    ASSERT_EQ(bad.load(), XAL_SUCCESS)
        << "round " << round << ": " << xal_status_name(bad.load());
  }
}

TEST(Lifecycle, OldHandlesAfterReinitAreInvalid) {
  ASSERT_XAL_OK(init(plugin("testdev")));
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  xal_stream_t s;
  ASSERT_XAL_OK(xal_stream_create(d, 0, &s));
  ASSERT_XAL_OK(xal_shutdown());
  ASSERT_XAL_OK(init(plugin("testdev")));
  EXPECT_XAL_ERROR(xal_stream_synchronize(s), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_stream_create(d, 0, &s), XAL_ERROR_INVALID_HANDLE);
  ASSERT_XAL_OK(xal_shutdown());
}

// A destroyed handle stays destroyed after its memory has been reused for
// new objects many times over (the core reuses a destroyed handle's slot
// after a few thousand other destroys): the stale handle neither works nor
// reaches the object now in its place.
TEST(Lifecycle, StaleHandleStaysDestroyedWhenItsSlotIsReused) {
  ASSERT_XAL_OK(init(plugin("testdev")));
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  xal_event_t stale;
  ASSERT_XAL_OK(xal_event_create(d, 0, &stale));
  ASSERT_XAL_OK(xal_event_destroy(stale));
  const auto slot = [](const void* h) { return reinterpret_cast<uintptr_t>(h) & ~uintptr_t{1023}; };
  int reused = 0;
  for (int i = 0; i < 20000 && reused < 3; ++i) {
    xal_event_t e;
    ASSERT_XAL_OK(xal_event_create(d, 0, &e));
    if (slot(e) == slot(stale)) {
      ++reused;
      EXPECT_NE(e, stale);
      EXPECT_XAL_ERROR(xal_event_query(stale), XAL_ERROR_INVALID_HANDLE);
      EXPECT_XAL_ERROR(xal_event_destroy(stale), XAL_ERROR_INVALID_HANDLE);
      EXPECT_EQ(xal_event_query(e), XAL_SUCCESS);  // the new event is untouched
    }
    ASSERT_XAL_OK(xal_event_destroy(e));
  }
  EXPECT_EQ(reused, 3) << "the stale handle's slot was not reused: the test checked nothing";
  ASSERT_XAL_OK(xal_shutdown());
}

TEST(Lifecycle, StatusNamesAreStableAndDistinct) {
  std::set<std::string> names;
  for (int s = -(XAL_STATUS_COUNT - 1); s <= 1; ++s) {
    const std::string n = xal_status_name(s);
    EXPECT_EQ(n.rfind("XAL_", 0), 0u) << s;
    EXPECT_NE(n, "XAL_STATUS_UNKNOWN") << s;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(XAL_STATUS_COUNT + 1));
  EXPECT_STREQ(xal_status_name(XAL_ERROR_OUT_OF_MEMORY), "XAL_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(xal_status_name(XAL_SUCCESS), "XAL_SUCCESS");
  EXPECT_STREQ(xal_status_name(-100), "XAL_STATUS_UNKNOWN");
  EXPECT_STREQ(xal_status_name(7), "XAL_STATUS_UNKNOWN");
}

TEST(Lifecycle, LastErrorChecksItsArgument) {
  EXPECT_EQ(xal_last_error(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  xal_error_info_t e{};
  e.struct_size = 8;
  EXPECT_EQ(xal_last_error(&e), XAL_ERROR_INVALID_ARGUMENT);
}

TEST(Lifecycle, ErrorDetailIsPerThread) {
  uint32_t n;
  EXPECT_EQ(xal_device_count(&n), XAL_ERROR_NOT_INITIALIZED);
  xal_error_info_t other{};
  std::thread t([&] {
    other.struct_size = sizeof other;
    xal_last_error(&other);
  });
  t.join();
  EXPECT_EQ(other.status, XAL_SUCCESS);
  EXPECT_STREQ(other.message, "");
  EXPECT_EQ(last_error().status, XAL_ERROR_NOT_INITIALIZED);
}

TEST(Lifecycle, BackendErrorsCarryVendorDetail) {
  ScopedEnv mem("XAL_TESTDEV_MEMORY", "1048576");
  ASSERT_XAL_OK(init(plugin("testdev")));
  xal_device_t d;
  ASSERT_XAL_OK(xal_device_get(0, &d));
  xal_devptr_t p;
  EXPECT_XAL_ERROR(xal_mem_alloc(d, 2 << 20, &p), XAL_ERROR_OUT_OF_MEMORY);
  const xal_error_info_t e = last_error();
  EXPECT_STREQ(e.operation, "xal_mem_alloc");
  EXPECT_STREQ(e.backend, "testdev");
  EXPECT_EQ(e.vendor_code, 2);
  EXPECT_STREQ(e.vendor_name, "TESTDEV_ERROR_OOM");
  EXPECT_STREQ(e.message, "testdev: device memory exhausted");
  // Errors of the core itself name no backend.
  EXPECT_XAL_ERROR(xal_mem_alloc(d, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(last_error().backend, "");
  EXPECT_EQ(last_error().vendor_code, 0);
  ASSERT_XAL_OK(xal_shutdown());
}
