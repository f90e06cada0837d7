// Host functions of the CUDA backend on the simulated driver (SIMULATION
// ONLY), with the driver running the host functions of a context one at a
// time (XALSIM_CUDA_SERIAL_HOST_FUNCS=1, as the real driver may): xal runs
// them on a thread of their stream, so that they may wait for each other.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "plugin_fixture.h"

namespace xal::cuda::test {
namespace {

using Clock = std::chrono::steady_clock;

// Two host functions on two streams: `waiter` (running first) waits, up to
// `limit`, for `setter` to run.
struct Pair {
  std::atomic<bool> started{false};
  std::atomic<bool> set{false};
  std::atomic<bool> waited_out{false};
  std::chrono::milliseconds limit{5000};
};

void waiter(void* user) {
  auto* p = static_cast<Pair*>(user);
  p->started = true;
  const auto end = Clock::now() + p->limit;
  while (!p->set.load()) {
    if (Clock::now() > end) {
      p->waited_out = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void setter(void* user) { static_cast<Pair*>(user)->set = true; }

// A backend instance of its own (made with the environment of the test).
class Instance {
 public:
  explicit Instance(const xal_backend_table_t* t) : table(t) {
    status = init_instance(table, &backend);
    if (status == XAL_SUCCESS) {
      table->device_get(backend, 0, &dev);
      table->stream_create(dev, 0, &a);
      table->stream_create(dev, 0, &b);
    }
  }
  ~Instance() {
    if (backend != nullptr) table->shutdown(backend);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Queues the waiter on a, then the setter on b; true when both ran and
  // the waiter saw the setter.
  bool waiter_sees_setter(std::chrono::milliseconds limit) {
    Pair pair;
    pair.limit = limit;
    EXPECT_EQ(table->stream_enqueue_host_func(a, waiter, &pair), XAL_SUCCESS);
    // The setter is queued once the waiter runs (and holds the driver's
    // host function thread when the driver serializes them).
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (!pair.started && Clock::now() < end) std::this_thread::yield();
    EXPECT_TRUE(pair.started);
    EXPECT_EQ(table->stream_enqueue_host_func(b, setter, &pair), XAL_SUCCESS);
    EXPECT_EQ(table->stream_synchronize(a), XAL_SUCCESS);
    EXPECT_EQ(table->stream_synchronize(b), XAL_SUCCESS);
    return pair.set && !pair.waited_out;
  }

  const xal_backend_table_t* table;
  xal_status_t status = XAL_ERROR_INTERNAL;
  xal_backend_t* backend = nullptr;
  xal_bdevice_t* dev = nullptr;
  xal_bstream_t* a = nullptr;
  xal_bstream_t* b = nullptr;
};

TEST(CudaSimHostFuncs, WaitForEachOtherWhenTheDriverSerializesThem) {
  ScopedEnv serial("XALSIM_CUDA_SERIAL_HOST_FUNCS", "1");
  Instance xal(plugin_table());
  ASSERT_EQ(xal.status, XAL_SUCCESS) << last_error().message;
  EXPECT_TRUE(xal.waiter_sees_setter(std::chrono::seconds(10)));
  // And the other way round, many times.
  for (int i = 0; i < 50; ++i) {
    std::swap(xal.a, xal.b);
    ASSERT_TRUE(xal.waiter_sees_setter(std::chrono::seconds(10))) << "round " << i;
  }
}

TEST(CudaSimHostFuncs, StraightToTheSerializingDriverTheyCannot) {
  // What the runner avoids: the setter waits behind the waiter.
  ScopedEnv serial("XALSIM_CUDA_SERIAL_HOST_FUNCS", "1");
  ScopedEnv mode("XAL_CUDA_HOST_FUNCS", "driver");
  Instance xal(plugin_table());
  ASSERT_EQ(xal.status, XAL_SUCCESS) << last_error().message;
  EXPECT_FALSE(xal.waiter_sees_setter(std::chrono::milliseconds(300)));
}

TEST(CudaSimHostFuncs, WithoutStreamMemoryWaitsTheDriverRunsThem) {
  // A driver without cuStreamWaitValue32: host functions go to the driver
  // (a warning is logged), in order, and run.
  ScopedEnv hide("XALSIM_CUDA_HIDE", "cuStreamWaitValue32");
  Instance xal(plugin_table());
  ASSERT_EQ(xal.status, XAL_SUCCESS) << last_error().message;
  EXPECT_TRUE(xal.waiter_sees_setter(std::chrono::seconds(10)));
}

TEST(CudaSimHostFuncs, UnknownModeIsRefused) {
  ScopedEnv mode("XAL_CUDA_HOST_FUNCS", "fast");
  EXPECT_EQ(xaltest::init_expecting_failure(plugin_table()), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("XAL_CUDA_HOST_FUNCS 'fast'"), std::string::npos)
      << last_error().message;
}

// Stream order both ways: the host function sees the copy queued before it,
// and the copy queued after it sees what it wrote.
struct Relay {
  std::vector<uint32_t>* in = nullptr;
  std::vector<uint32_t>* out = nullptr;
};

void add_one(void* user) {
  auto* r = static_cast<Relay*>(user);
  for (size_t i = 0; i < r->in->size(); ++i) (*r->out)[i] = (*r->in)[i] + 1;
}

TEST_F(CudaSim, HostFunctionKeepsStreamOrder) {
  ScopedEnv serial("XALSIM_CUDA_SERIAL_HOST_FUNCS", "1");
  const size_t n = 1 << 16;
  const size_t bytes = n * sizeof(uint32_t);
  const xal_devptr_t dev_in = alloc(dev0_, bytes);
  const xal_devptr_t dev_out = alloc(dev0_, bytes);
  std::vector<uint32_t> src(n), staged(n, 0), result(n, 0), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 7);
  Relay relay{&staged, &result};
  for (int round = 0; round < 20; ++round) {
    ASSERT_EQ(table_->memcpy_htod(stream0_, dev_in, src.data(), bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtoh(stream0_, staged.data(), dev_in, bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, add_one, &relay), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_htod(stream0_, dev_out, result.data(), bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->memcpy_dtoh(stream0_, back.data(), dev_out, bytes), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    for (size_t i = 0; i < n; i += 997) ASSERT_EQ(back[i], src[i] + 1) << i;
    for (auto& v : src) ++v;
  }
  EXPECT_EQ(table_->mem_free(dev0_, dev_in), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, dev_out), XAL_SUCCESS);
}

struct Order {
  std::vector<int> seen;
  int next = 0;
};

void note_order(void* user) {
  auto* o = static_cast<Order*>(user);
  o->seen.push_back(o->next++);
}

TEST_F(CudaSim, ManyHostFunctionsRunOnceEachInOrder) {
  Order o0, o1;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o0), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_enqueue_host_func(stream1_, note_order, &o1), XAL_SUCCESS);
  }
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  ASSERT_EQ(o0.seen.size(), 2000u);
  ASSERT_EQ(o1.seen.size(), 2000u);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(o0.seen[static_cast<size_t>(i)], i);
}

TEST_F(CudaSim, FailedLaunchDoesNotRunTheFunction) {
  Order o;
  setenv("XALSIM_CUDA_FAIL", "cuLaunchHostFunc=1", 1);
  EXPECT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o),
            XAL_ERROR_INVALID_ARGUMENT);
  unsetenv("XALSIM_CUDA_FAIL");
  EXPECT_EQ(last_error().vendor_name, "CUDA_ERROR_INVALID_VALUE");
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(o.seen, std::vector<int>{0});
}

TEST_F(CudaSim, FailedStreamWaitStillRunsTheFunctionInOrder) {
  Order o;
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  // The function is queued when the wait fails: it runs on the driver's
  // thread instead, still before the work queued after it.
  setenv("XALSIM_CUDA_FAIL", "cuStreamWaitValue32=1@1", 1);
  EXPECT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o), XAL_SUCCESS);
  unsetenv("XALSIM_CUDA_FAIL");
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, note_order, &o), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(o.seen, (std::vector<int>{0, 1, 2}));
}

TEST_F(CudaSim, DestroyingAStreamAfterItsHostFunctions) {
  for (int i = 0; i < 20; ++i) {
    xal_bstream_t* s = nullptr;
    ASSERT_EQ(table_->stream_create(dev1_, 0, &s), XAL_SUCCESS);
    Order o;
    for (int k = 0; k < 5; ++k)
      ASSERT_EQ(table_->stream_enqueue_host_func(s, note_order, &o), XAL_SUCCESS);
    ASSERT_EQ(table_->stream_destroy(s), XAL_SUCCESS);
    EXPECT_EQ(o.seen.size(), 5u);
  }
}

// A reset while a host function runs and another waits behind it: the
// reset does not wait for them, the running one finishes on its thread, the
// one the stream never reached runs when the stale stream is released (its
// argument is its own to free), and the stale stream's destroy returns once
// both have.
struct Held {
  std::atomic<bool> running{false};
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
};

void hold(void* user) {
  auto* h = static_cast<Held*>(user);
  h->running = true;
  while (!h->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  h->ran.fetch_add(1);
}

void count_held(void* user) { static_cast<Held*>(user)->ran.fetch_add(1); }

TEST_F(CudaSim, ResetWhileAHostFunctionRuns) {
  Held h;
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, hold, &h), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, count_held, &h), XAL_SUCCESS);
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (!h.running && Clock::now() < end) std::this_thread::yield();
  ASSERT_TRUE(h.running);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS);
  // The device works again: a new stream runs host functions.
  xal_bstream_t* fresh = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &fresh), XAL_SUCCESS);
  Held other;
  other.release = true;
  ASSERT_EQ(table_->stream_enqueue_host_func(fresh, hold, &other), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(fresh), XAL_SUCCESS);
  EXPECT_EQ(other.ran.load(), 1);
  EXPECT_EQ(table_->stream_destroy(fresh), XAL_SUCCESS);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    h.release = true;
  });
  table_->stream_destroy(stream0_);  // stale: its status is the reset's business
  stream0_ = stream_ = nullptr;
  releaser.join();
  EXPECT_EQ(h.ran.load(), 2);  // the running one finished, then the other ran
}

// The simulated driver's calls, straight from the library the plugin opened
// (XAL_CUDA_DRIVER), for what only the driver shows.
struct RawDriver {
  CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*release)(CUdevice) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned int) = nullptr;
  CUresult (*launch_host_func)(CUstream, CUhostFn, void*) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned int) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_query)(CUevent) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;

  bool complete() const {
    return retain && release && set_current && stream_create && launch_host_func &&
           event_create && event_record && event_query && mem_alloc;
  }
};

RawDriver raw_driver() {
  RawDriver r;
  void* sim = dlopen(std::getenv("XAL_CUDA_DRIVER"), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (sim == nullptr) return r;
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);
  auto get = reinterpret_cast<GetProc>(dlsym(sim, "cuGetProcAddress_v2"));
  auto find = [get](const char* name, auto* out) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (get != nullptr && get(name, &fn, 12000, 0, &status) == CUDA_SUCCESS) {
      *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(fn);
    }
  };
  find("cuDevicePrimaryCtxRetain", &r.retain);
  find("cuDevicePrimaryCtxRelease", &r.release);
  find("cuCtxSetCurrent", &r.set_current);
  find("cuStreamCreate", &r.stream_create);
  find("cuLaunchHostFunc", &r.launch_host_func);
  find("cuEventCreate", &r.event_create);
  find("cuEventRecord", &r.event_record);
  find("cuEventQuery", &r.event_query);
  find("cuMemAlloc", &r.mem_alloc);
  dlclose(sim);
  return r;
}

// As the real driver ("the function will not be called in the event of an
// error in the CUDA context", cuLaunchHostFunc), the simulation calls no
// host function queued behind a sticky error; the rest of the stream still
// runs (an event recorded behind it completes, seen from another context).
TEST(CudaSimHostFuncs, TheDriverCallsNoHostFunctionAfterAStickyError) {
  Instance xal(plugin_table());  // the driver initialised, contexts retained
  ASSERT_EQ(xal.status, XAL_SUCCESS) << last_error().message;
  const RawDriver raw = raw_driver();
  ASSERT_TRUE(raw.complete());
  CUcontext c0 = nullptr, c1 = nullptr;
  ASSERT_EQ(raw.retain(&c0, 0), CUDA_SUCCESS);
  ASSERT_EQ(raw.retain(&c1, 1), CUDA_SUCCESS);
  ASSERT_EQ(raw.set_current(c0), CUDA_SUCCESS);
  CUstream s = nullptr;
  CUevent e = nullptr;
  ASSERT_EQ(raw.stream_create(&s, 0), CUDA_SUCCESS);
  ASSERT_EQ(raw.event_create(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  Held h;
  ASSERT_EQ(raw.launch_host_func(s, hold, &h), CUDA_SUCCESS);
  ASSERT_EQ(raw.launch_host_func(s, count_held, &h), CUDA_SUCCESS);
  ASSERT_EQ(raw.event_record(e, s), CUDA_SUCCESS);
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (!h.running && Clock::now() < end) std::this_thread::yield();
  ASSERT_TRUE(h.running);
  {
    ScopedEnv fail("XALSIM_CUDA_FAIL", "cuMemAlloc=700");
    CUdeviceptr p = 0;
    EXPECT_EQ(raw.mem_alloc(&p, 256), CUDA_ERROR_ILLEGAL_ADDRESS);
  }
  h.release = true;
  ASSERT_EQ(raw.set_current(c1), CUDA_SUCCESS);
  CUresult q = CUDA_ERROR_NOT_READY;
  while ((q = raw.event_query(e)) == CUDA_ERROR_NOT_READY && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(q, CUDA_SUCCESS);
  EXPECT_EQ(h.ran.load(), 1);  // the held one; the one behind it not called
  EXPECT_EQ(raw.set_current(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(raw.release(0), CUDA_SUCCESS);
  EXPECT_EQ(raw.release(1), CUDA_SUCCESS);
  // The instance's shutdown releases the last reference to the contexts,
  // which resets them: the sticky error goes with it.
}

// Host functions the driver does not call after a sticky error still run,
// once each and in order, when their stream is released (their argument is
// theirs to free: the core's cross-backend waits, staged copies' gates,
// compute-share completions), on xal's threads or given straight to the
// driver (XAL_CUDA_HOST_FUNCS).
void sticky_error_then_release(const char* mode) {
  ScopedEnv env("XAL_CUDA_HOST_FUNCS", mode);
  Instance xal(plugin_table());
  ASSERT_EQ(xal.status, XAL_SUCCESS) << last_error().message;
  const xal_backend_table_t* t = xal.table;
  Held h;
  Order order;
  ASSERT_EQ(t->stream_enqueue_host_func(xal.a, hold, &h), XAL_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(t->stream_enqueue_host_func(xal.a, note_order, &order), XAL_SUCCESS);
  }
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (!h.running && Clock::now() < end) std::this_thread::yield();
  ASSERT_TRUE(h.running);
  {
    ScopedEnv fail("XALSIM_CUDA_FAIL", "cuMemAlloc=700");
    xal_devptr_t p = 0;
    EXPECT_EQ(t->mem_alloc(xal.dev, 256, &p), XAL_ERROR_DEVICE_LOST);
  }
  h.release = true;
  while (h.ran.load() == 0 && Clock::now() < end) std::this_thread::yield();
  ASSERT_EQ(h.ran.load(), 1);
  EXPECT_EQ(t->stream_destroy(xal.a), XAL_SUCCESS) << last_error().message;
  xal.a = nullptr;
  EXPECT_EQ(order.seen, (std::vector<int>{0, 1, 2}));
}

TEST(CudaSimHostFuncs, AfterAStickyErrorTheyRunWhenTheStreamIsReleased) {
  sticky_error_then_release("thread");
}

TEST(CudaSimHostFuncs, AfterAStickyErrorTheDriversRunWhenTheStreamIsReleased) {
  sticky_error_then_release("driver");
}

}  // namespace
}  // namespace xal::cuda::test
