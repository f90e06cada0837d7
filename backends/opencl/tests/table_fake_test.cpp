// Streams and events against the fake OpenCL library (tests/fake_opencl.cpp):
// failed commands and concurrent submission, which a real driver does not
// produce on demand.
#include "table_harness.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <thread>

namespace xal::opencl::testing {
namespace {

// An instance on the fake library in `mode`, its device and a stream.
class OpenclFake : public ::testing::Test {
 protected:
  void start(const char* mode) {
    mode_ = std::make_unique<ScopedEnv>("XAL_FAKE_OPENCL_MODE", mode);
    t = plugin_table();
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(instance.start(), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(t->device_get(instance.get(), 0, &dev), XAL_SUCCESS);
    ASSERT_EQ(t->stream_create(dev, 0, &stream), XAL_SUCCESS) << last_error().message;
  }

  // Expects the call `what` to have reported CL_OUT_OF_RESOURCES.
  static void expect_out_of_resources(xal_status_t st, const char* what) {
    EXPECT_EQ(st, XAL_ERROR_OUT_OF_MEMORY) << what;
    EXPECT_EQ(last_error().vendor_code, CL_OUT_OF_RESOURCES) << what;
    EXPECT_EQ(last_error().vendor_name, "CL_OUT_OF_RESOURCES") << what;
  }

  ScopedEnv lib_{"XAL_OPENCL_LIBRARY", XAL_FAKE_OPENCL};
  std::unique_ptr<ScopedEnv> mode_;
  const xal_backend_table_t* t = nullptr;
  Instance instance;
  xal_bdevice_t* dev = nullptr;
  xal_bstream_t* stream = nullptr;
};

TEST_F(OpenclFake, FailedCommandIsReportedBySynchronizeAndDestroy) {
  start("command_fails");
  xal_bevent_t* ev = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &ev), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;

  expect_out_of_resources(t->stream_query(stream), "stream_query");
  expect_out_of_resources(t->stream_synchronize(stream), "stream_synchronize");
  expect_out_of_resources(t->device_synchronize(dev), "device_synchronize");
  expect_out_of_resources(t->event_query(ev), "event_query");
  // clWaitForEvents says only CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
  expect_out_of_resources(t->event_synchronize(ev), "event_synchronize");
  EXPECT_NE(last_error().message.find("event_synchronize: CL_OUT_OF_RESOURCES"),
            std::string::npos)
      << last_error().message;

  // Reported once; the stream is kept, and the retry destroys it.
  const xal_status_t st = t->stream_destroy(stream);
  expect_out_of_resources(st, "stream_destroy");
  if (st != XAL_SUCCESS) {
    EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS) << last_error().message;
  }
  EXPECT_EQ(t->event_destroy(ev), XAL_SUCCESS);
}

// Two threads record on one stream. The fake holds the first command's
// enqueue until the other thread has flushed (a second at most), so that
// without ordering the first command, complete, would be remembered after
// the second, still running, and stream_query would say the stream is done.
TEST_F(OpenclFake, QueryAfterConcurrentSubmissionSeesTheNewestCommand) {
  start("enqueue_race");
  xal_bevent_t* e1 = nullptr;
  xal_bevent_t* e2 = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &e1), XAL_SUCCESS);
  ASSERT_EQ(t->event_create(dev, 0, &e2), XAL_SUCCESS);
  xal_status_t st1 = XAL_ERROR_BACKEND, st2 = XAL_ERROR_BACKEND;
  std::thread a([&] { st1 = t->event_record(e1, stream); });
  std::thread b([&] { st2 = t->event_record(e2, stream); });
  a.join();
  b.join();
  EXPECT_EQ(st1, XAL_SUCCESS);
  EXPECT_EQ(st2, XAL_SUCCESS);
  // One of the two commands is still running.
  EXPECT_EQ(t->stream_query(stream), XAL_NOT_READY);
  EXPECT_EQ(t->event_destroy(e1), XAL_SUCCESS);
  EXPECT_EQ(t->event_destroy(e2), XAL_SUCCESS);
  EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS);
}

// The fake's counts: {user events not yet set, live buffers, buffer
// releases made while a user event was unset}.
struct FakeCounts {
  int unset = -1, live = -1, bad_releases = -1;
};
FakeCounts fake_counts() {
  FakeCounts c;
  void* lib = dlopen(XAL_FAKE_OPENCL, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    ADD_FAILURE() << dlerror();
    return c;
  }
  auto get = reinterpret_cast<void (*)(int*)>(dlsym(lib, "xal_fake_opencl_counts"));
  if (get == nullptr) {
    ADD_FAILURE() << "no xal_fake_opencl_counts";
  } else {
    int v[3] = {-1, -1, -1};
    get(v);
    c = {v[0], v[1], v[2]};
  }
  dlclose(lib);
  return c;
}

// A buffer freed while a host function runs (its gate unset) is released
// only once the gate is set: releasing it before is undefined in OpenCL.
TEST_F(OpenclFake, BufferFreedWhileAHostFunctionRunsIsReleasedAfterItsGate) {
  start("gates");
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &a), XAL_SUCCESS) << last_error().message;
  std::promise<void> go;
  std::shared_future<void> wait = go.get_future().share();
  auto fn = [](void* user) { static_cast<std::shared_future<void>*>(user)->wait(); };
  ASSERT_EQ(t->stream_enqueue_host_func(stream, fn, &wait), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(fake_counts().unset, 1);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(fake_counts().bad_releases, 0);
  EXPECT_EQ(fake_counts().live, 1);  // held back
  go.set_value();
  // Destroying the stream waits for its host functions.
  EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS) << last_error().message;
  stream = nullptr;
  const FakeCounts after = fake_counts();
  EXPECT_EQ(after.unset, 0);
  EXPECT_EQ(after.live, 0);
  EXPECT_EQ(after.bad_releases, 0);
}

}  // namespace
}  // namespace xal::opencl::testing
