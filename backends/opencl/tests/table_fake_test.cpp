// Streams and events against the fake OpenCL library (testing/fake_opencl.cpp):
// failed commands and concurrent submission, which a real driver does not
// produce on demand.
#include "table_harness.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
  // Every command fails. Each failure is reported once, by the next call
  // that reports one, and then cleared.
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
  expect_out_of_resources(t->stream_query(stream), "stream_query");
  EXPECT_EQ(t->stream_query(stream), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
  expect_out_of_resources(t->stream_synchronize(stream), "stream_synchronize");
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
  expect_out_of_resources(t->device_synchronize(dev), "device_synchronize");
  // The event reports its own marker's status, each time.
  expect_out_of_resources(t->event_query(ev), "event_query");
  // clWaitForEvents says only CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
  expect_out_of_resources(t->event_synchronize(ev), "event_synchronize");
  EXPECT_NE(last_error().message.find("event_synchronize: CL_OUT_OF_RESOURCES"),
            std::string::npos)
      << last_error().message;

  // Reported once; the stream is kept, and the retry destroys it.
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
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
// releases made while a user event was unset, releases waiting for a user
// event (knob release_waits)}.
struct FakeCounts {
  int unset = -1, live = -1, bad_releases = -1, waiting = -1;
};

// The fake library's own symbol `name` (it is already loaded by the
// plugin: this only finds it), or NULL after a test failure.
void* fake_symbol(const char* name) {
  void* lib = dlopen(XAL_FAKE_OPENCL, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    ADD_FAILURE() << dlerror();
    return nullptr;
  }
  void* sym = dlsym(lib, name);
  if (sym == nullptr) ADD_FAILURE() << "no " << name << " in the fake library";
  dlclose(lib);
  return sym;
}

FakeCounts fake_counts() {
  FakeCounts c;
  auto get = reinterpret_cast<void (*)(int*)>(fake_symbol("xal_fake_opencl_counts"));
  if (get != nullptr) {
    int v[4] = {-1, -1, -1, -1};
    get(v);
    c = {v[0], v[1], v[2], v[3]};
  }
  return c;
}

// Sets a knob of the fake (see testing/fake_opencl.cpp).
void fake_set(const char* knob, int n) {
  auto set = reinterpret_cast<bool (*)(const char*, int)>(fake_symbol("xal_fake_opencl_set"));
  if (set != nullptr) {
    EXPECT_TRUE(set(knob, n)) << knob;
  }
}

// Polls `done` until it holds or 10 s have passed; returns whether it held.
template <typename F>
bool eventually(F&& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void noop(void*) {}

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

// A command that failed is reported although later commands succeeded
// (a kernel failing with CL_OUT_OF_RESOURCES, then a read that works), by
// each call that reports a stream's failures.
TEST_F(OpenclFake, FailedCommandIsReportedAfterLaterCommandsSucceed) {
  start("gates");
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &a), XAL_SUCCESS) << last_error().message;
  xal_bevent_t* ev = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &ev), XAL_SUCCESS);
  std::vector<char> host(64);
  auto fail_then_read = [&] {
    fake_set("fail_commands", 1);
    ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(t->memcpy_dtoh(stream, host.data(), a, host.size()), XAL_SUCCESS)
        << last_error().message;
  };
  fail_then_read();
  expect_out_of_resources(t->stream_synchronize(stream), "stream_synchronize");
  fail_then_read();
  expect_out_of_resources(t->stream_query(stream), "stream_query");
  fail_then_read();
  expect_out_of_resources(t->device_synchronize(dev), "device_synchronize");
  fail_then_read();
  const xal_status_t st = t->stream_destroy(stream);
  expect_out_of_resources(st, "stream_destroy");
  if (st != XAL_SUCCESS) {
    EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS);
  }
  stream = nullptr;
  EXPECT_EQ(t->event_destroy(ev), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
}

// A failure is reported to one call and then cleared: the calls after it,
// stream_destroy included, succeed.
TEST_F(OpenclFake, FailureIsReportedOnceThenCleared) {
  start("gates");
  xal_bevent_t* ev = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &ev), XAL_SUCCESS);
  fake_set("fail_commands", 1);
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
  expect_out_of_resources(t->stream_synchronize(stream), "stream_synchronize");
  EXPECT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(t->stream_query(stream), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(t->device_synchronize(dev), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS) << last_error().message;
  stream = nullptr;
  EXPECT_EQ(t->event_destroy(ev), XAL_SUCCESS);
}

// Once the host function is handed to the marker's callback it will run
// (and the core's `user` is its own): a flush that fails after that is not
// the call's error but the stream's, reported by its next synchronize.
TEST_F(OpenclFake, HostFuncIsCommittedDespiteAFailingFlush) {
  start("gates");
  fake_set("fail_flushes", 1);
  std::promise<void> ran;
  auto fn = [](void* user) { static_cast<std::promise<void>*>(user)->set_value(); };
  EXPECT_EQ(t->stream_enqueue_host_func(stream, fn, &ran), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  expect_out_of_resources(t->stream_synchronize(stream), "stream_synchronize");
  EXPECT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
}

// A mem_free whose clReleaseMemObject fails has not freed: the address
// stays usable and the retry frees it.
TEST_F(OpenclFake, FailedMemFreeKeepsTheAllocationForARetry) {
  start("gates");
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &a), XAL_SUCCESS) << last_error().message;
  fake_set("fail_releases", 1);
  expect_out_of_resources(t->mem_free(dev, a), "mem_free");
  std::vector<char> host(64);
  EXPECT_EQ(t->memcpy_htod(stream, a, host.data(), host.size()), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(fake_counts().live, 0);
}

// A host function that waits until the test opens it.
// The fake's clFinish does not wait for gates: the test waits for `done`
// (and the destructor does, so that fn never outlives its Blocker).
struct Blocker {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::atomic<bool> done{false};
  static void fn(void* user) {
    auto* self = static_cast<Blocker*>(user);
    self->opened.wait();
    self->done.store(true);
  }
  ~Blocker() { eventually([this] { return done.load(); }); }
};

// No gate is created while a buffer is being released, neither by mem_free
// nor when a gate opens and releases what was held back: the fake's release
// waits (a second at most) for a user event to be created meanwhile, which
// would count it as a release while a gate is unset (the new gate's host
// function holds it unset until the test opens it).
TEST_F(OpenclFake, NoGateIsCreatedWhileABufferIsReleased) {
  start("gates");
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &a), XAL_SUCCESS) << last_error().message;
  fake_set("release_waits", 1);
  xal_status_t freed = XAL_ERROR_BACKEND;
  std::thread freer([&] { freed = t->mem_free(dev, a); });
  EXPECT_TRUE(eventually([] { return fake_counts().waiting == 1; }));
  Blocker first;
  EXPECT_EQ(t->stream_enqueue_host_func(stream, Blocker::fn, &first), XAL_SUCCESS)
      << last_error().message;
  freer.join();
  EXPECT_EQ(freed, XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(fake_counts().bad_releases, 0) << "mem_free";
  first.open.set_value();
  EXPECT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
  EXPECT_TRUE(eventually([&] { return first.done.load(); }));

  // A buffer freed while a host function runs is released when its gate
  // opens, on the stream's host thread.
  xal_devptr_t b = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &b), XAL_SUCCESS) << last_error().message;
  Blocker second, third;
  ASSERT_EQ(t->stream_enqueue_host_func(stream, Blocker::fn, &second), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(t->mem_free(dev, b), XAL_SUCCESS) << last_error().message;  // held back
  fake_set("release_waits", 1);
  second.open.set_value();
  EXPECT_TRUE(eventually([] { return fake_counts().waiting == 1; }));
  EXPECT_EQ(t->stream_enqueue_host_func(stream, Blocker::fn, &third), XAL_SUCCESS)
      << last_error().message;
  EXPECT_TRUE(eventually([] { return fake_counts().waiting == 0; }));
  const FakeCounts after = fake_counts();
  EXPECT_EQ(after.bad_releases, 0) << "held-back release";
  EXPECT_EQ(after.live, 0);
  third.open.set_value();
  EXPECT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
  EXPECT_TRUE(eventually([&] { return second.done.load() && third.done.load(); }));
}

// What a submission enqueued before one of its commands failed to enqueue
// still runs: stream_query says NOT_READY until it is done.
TEST_F(OpenclFake, PartlyEnqueuedSubmissionIsPendingWork) {
  start("gates");
  xal_devptr_t a = 0;
  ASSERT_EQ(t->mem_alloc(dev, 4096, &a), XAL_SUCCESS) << last_error().message;
  fake_set("hold_commands", 1);  // commands run until a synchronize
  auto expect_pending_until_synchronized = [&](xal_status_t st, const char* what) {
    EXPECT_EQ(st, XAL_ERROR_OUT_OF_HOST_MEMORY) << what;
    EXPECT_EQ(last_error().vendor_code, CL_OUT_OF_HOST_MEMORY) << what;
    EXPECT_EQ(t->stream_query(stream), XAL_NOT_READY) << what;
    EXPECT_EQ(t->stream_synchronize(stream), XAL_SUCCESS) << what << ": "
                                                          << last_error().message;
    EXPECT_EQ(t->stream_query(stream), XAL_SUCCESS) << what;
  };
  // An overlapping copy split into pieces of 256 bytes; the second fails.
  fake_set("fail_enqueue", 2);
  expect_pending_until_synchronized(t->memcpy_dtod(stream, a + 256, a, 1024), "pieces");
  // Staged through a temporary buffer (64 pieces would be too many); the
  // copy out of it fails.
  fake_set("fail_enqueue", 2);
  expect_pending_until_synchronized(t->memcpy_dtod(stream, a + 16, a, 1024), "staged");
  // A host function whose barrier fails after its marker.
  fake_set("fail_enqueue", 2);
  expect_pending_until_synchronized(t->stream_enqueue_host_func(stream, noop, nullptr),
                                    "host func");
  fake_set("hold_commands", 0);
  EXPECT_EQ(t->mem_free(dev, a), XAL_SUCCESS);
}

// A stream whose clFinish fails is destroyed all the same. When its host
// function's marker completes later, after shutdown even, the callback
// finds the stream's host thread stopped: fn is not run (the core may have
// freed what it uses) and only the gate is opened.
TEST_F(OpenclFake, HostFuncReachedAfterShutdownOnlyOpensItsGate) {
  start("gates");
  fake_set("hold_commands", 1);
  fake_set("defer_callbacks", 1);
  static std::atomic<int> runs{0};
  runs = 0;
  auto fn = [](void*) { runs.fetch_add(1); };
  ASSERT_EQ(t->stream_enqueue_host_func(stream, fn, nullptr), XAL_SUCCESS)
      << last_error().message;
  EXPECT_EQ(fake_counts().unset, 1);
  fake_set("fail_finishes", 1000);
  EXPECT_EQ(t->stream_destroy(stream), XAL_SUCCESS) << last_error().message;
  stream = nullptr;
  EXPECT_EQ(instance.stop(), XAL_SUCCESS) << last_error().message;
  fake_set("complete_all", 0);  // the marker completes: its callback runs
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(fake_counts().unset, 0);
}

// Across platforms a stream waits for an event through a user event that
// the event's callback opens. The callback may run after shutdown: it
// touches only what it shares with the instance.
TEST_F(OpenclFake, CrossPlatformWaitBridgeOpensItsGateEvenAfterShutdown) {
  start("two_platforms");
  xal_bdevice_t* dev1 = nullptr;
  ASSERT_EQ(t->device_get(instance.get(), 1, &dev1), XAL_SUCCESS) << last_error().message;
  xal_bstream_t* stream1 = nullptr;
  ASSERT_EQ(t->stream_create(dev1, 0, &stream1), XAL_SUCCESS) << last_error().message;
  xal_bevent_t* ev = nullptr;
  ASSERT_EQ(t->event_create(dev, 0, &ev), XAL_SUCCESS);
  ASSERT_EQ(t->event_record(ev, stream), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(t->stream_wait_event(stream1, ev), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(fake_counts().unset, 0);  // the event was complete: opened at once
  EXPECT_EQ(t->stream_synchronize(stream1), XAL_SUCCESS) << last_error().message;

  fake_set("defer_callbacks", 1);
  EXPECT_EQ(t->stream_wait_event(stream1, ev), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(fake_counts().unset, 1);
  EXPECT_EQ(t->event_destroy(ev), XAL_SUCCESS);
  fake_set("fail_finishes", 1000);  // shutdown does not reach the callback
  EXPECT_EQ(instance.stop(), XAL_SUCCESS) << last_error().message;
  stream = nullptr;
  fake_set("complete_all", 0);
  EXPECT_EQ(fake_counts().unset, 0);
}

}  // namespace
}  // namespace xal::opencl::testing
