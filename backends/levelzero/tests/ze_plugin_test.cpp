// The Level Zero backend through its plugin table, on the simulated
// loader: devices and sub-devices, memory, copies, fill, streams, events
// with kernel timestamps, host memory, peer copies (direct and staged),
// SPIR-V modules and Sysman metrics.
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "plugin_fixture.h"

namespace xal::levelzero::testing {
namespace {

// A simulated SPIR-V image: the magic word, then the simulator's text.
std::vector<uint8_t> spirv(const std::string& text) {
  std::vector<uint8_t> image(4 + text.size());
  const uint32_t magic = 0x07230203;
  std::memcpy(image.data(), &magic, 4);
  std::memcpy(image.data() + 4, text.data(), text.size());
  return image;
}

TEST_F(ZePlugin, DescribesItselfAsSimulated) {
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table_->describe(backend_, &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "levelzero");
  EXPECT_TRUE(d.flags & XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_NE(std::string(d.note).find("simulated driver"), std::string::npos) << d.note;
  EXPECT_EQ(std::string(d.note).rfind(
                "verified on a simulated loader only, not yet on Intel hardware", 0),
            0u)
      << d.note;
  // The same words in the table, for xal-info when init fails.
  EXPECT_STREQ(table_->support_note,
               "verified on a simulated loader only, not yet on Intel hardware");
  EXPECT_NE(std::string(d.driver_version).find("Level Zero 1.7"), std::string::npos)
      << d.driver_version;
  uint32_t count = 0;
  ASSERT_EQ(table_->device_count(backend_, &count), XAL_SUCCESS);
  EXPECT_EQ(count, 2u);
  // oneCCL has no C API: the core's collectives serve these devices.
  EXPECT_EQ(table_->comm_create, nullptr);
}

TEST_F(ZePlugin, DeviceProperties) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(table_->device_get_properties(dev1_, &p), XAL_SUCCESS);
  EXPECT_NE(std::string(p.name).find("Max 1550"), std::string::npos) << p.name;
  EXPECT_STREQ(p.vendor, "Intel");
  EXPECT_EQ(p.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_GPU));
  EXPECT_STREQ(p.pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(p.uuid[0], 0xB0);
  EXPECT_EQ(p.uuid[15], 1);
  EXPECT_EQ(p.memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(p.max_allocation_bytes, uint64_t{1} << 30);
  EXPECT_EQ(p.compute_units, 512u);
  EXPECT_EQ(p.core_clock_mhz, 1600u);
  EXPECT_EQ(p.memory_clock_mhz, 3200u);
  EXPECT_EQ(p.memory_bus_width_bits, 8192u);
  EXPECT_NEAR(p.peak_memory_bandwidth_gbps, 3276.8, 1e-6);
  const uint64_t want = XAL_DEVICE_CAP_SIMULATED | XAL_DEVICE_CAP_EVENT_TIMING |
                        XAL_DEVICE_CAP_RESET | XAL_DEVICE_CAP_PEER_COPY |
                        XAL_DEVICE_CAP_KERNELS | XAL_DEVICE_CAP_HOST_MEMORY |
                        XAL_DEVICE_CAP_METRICS;
  EXPECT_EQ(p.capabilities & want, want);
  EXPECT_EQ(p.capabilities & XAL_DEVICE_CAP_PARTITION, 0u);
}

TEST(ZeSubDevices, ListedAsTheirOwnDevicesWhenAsked) {
  setenv("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH, 1);
  setenv("XALSIM_ZE_DEVICES", "2", 1);
  setenv("XALSIM_ZE_SUBDEVICES", "2", 1);
  setenv("XAL_LEVELZERO_SUBDEVICES", "1", 1);
  xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
  xal_backend_t* backend = nullptr;
  const xal_backend_table_t* table = plugin_table();
  ASSERT_EQ(table->init(&args, &backend), XAL_SUCCESS) << last_error().message;
  uint32_t count = 0;
  ASSERT_EQ(table->device_count(backend, &count), XAL_SUCCESS);
  EXPECT_EQ(count, 4u);
  for (uint32_t i = 0; i < count; ++i) {
    xal_bdevice_t* device = nullptr;
    ASSERT_EQ(table->device_get(backend, i, &device), XAL_SUCCESS);
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(table->device_get_properties(device, &p), XAL_SUCCESS);
    EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_PARTITION);
    EXPECT_NE(std::string(p.name).find("tile"), std::string::npos);
    // Each tile works on its own.
    xal_devptr_t ptr = 0;
    ASSERT_EQ(table->mem_alloc(device, 256, &ptr), XAL_SUCCESS);
    EXPECT_EQ(table->mem_free(device, ptr), XAL_SUCCESS);
  }
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
  unsetenv("XAL_LEVELZERO_SUBDEVICES");
  setenv("XALSIM_ZE_SUBDEVICES", "0", 1);
}

TEST_F(ZePlugin, MemoryInfoFollowsAllocations) {
  uint64_t free0 = 0, total = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free0, &total), XAL_SUCCESS);
  EXPECT_EQ(total, uint64_t{1} << 30);
  xal_devptr_t ptr = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 1 << 20, &ptr), XAL_SUCCESS);
  EXPECT_EQ(ptr % 256, 0u);
  uint64_t free1 = 0;
  ASSERT_EQ(table_->mem_get_info(dev0_, &free1, &total), XAL_SUCCESS);
  EXPECT_EQ(free0 - free1, uint64_t{1} << 20);
  ASSERT_EQ(table_->mem_free(dev0_, ptr), XAL_SUCCESS);
  // A second free, or a pointer of another device, is refused.
  EXPECT_EQ(table_->mem_free(dev0_, ptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("not an allocation"), std::string::npos);
  EXPECT_EQ(table_->mem_alloc(dev0_, size_t{2} << 30, &ptr), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(last_error().vendor_code, 0x70000003);
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
}

TEST_F(ZePlugin, CopiesAllDirectionsOddSizesAndOffsets) {
  for (size_t size : {size_t{1}, size_t{3}, size_t{4093}, size_t{65537}}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{7}}) {
      expect_copy_round_trip(size, offset, 13, 5);
    }
  }
}

TEST_F(ZePlugin, FillWritesEveryByteOfTheRangeOnly) {
  expect_memset_range(1000, 5, 995, 0xCD);
}

TEST_F(ZePlugin, StreamsWithoutInOrderFlagStillOrderWork) {
  setenv("XALSIM_ZE_NO_IN_ORDER", "1", 1);
  xal_bstream_t* stream = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &stream), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  std::vector<uint8_t> out(64);
  ASSERT_EQ(table_->memset(stream, a, 9, 64), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream, out.data(), a, 64), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(64, 9));
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(stream), XAL_SUCCESS);
}

TEST_F(ZePlugin, EventsWithKernelTimestamps) {
  xal_bevent_t* start = nullptr;
  xal_bevent_t* end = nullptr;
  xal_bevent_t* untimed = nullptr;
  xal_bevent_t* never = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &start), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &end), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, XAL_EVENT_DISABLE_TIMING, &untimed), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &never), XAL_SUCCESS);
  EXPECT_EQ(table_->event_query(never), XAL_SUCCESS);  // never recorded
  xal_bstream_t* other = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &other), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(start, stream_), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 1 << 16, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 1, 1 << 16), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(end, stream_), XAL_SUCCESS);
  // A stream of another device waits on it: the simulator refuses that
  // unless the event's pool is visible to every device.
  ASSERT_EQ(table_->stream_wait_event(other, end), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(table_->event_synchronize(end), XAL_SUCCESS);
  EXPECT_EQ(table_->event_query(end), XAL_SUCCESS);
  // Query says SUCCESS once the stream is synchronised (before that it may
  // still be finishing its own bookkeeping: NOT_READY is also correct).
  const xal_status_t busy = table_->stream_query(stream_);
  EXPECT_TRUE(busy == XAL_SUCCESS || busy == XAL_NOT_READY) << busy;
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_query(stream_), XAL_SUCCESS);
  float ms = -1.0f;
  ASSERT_EQ(table_->event_elapsed_ms(start, end, &ms), XAL_SUCCESS) << last_error().message;
  EXPECT_GE(ms, 0.0f);
  ASSERT_EQ(table_->event_record(untimed, stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_elapsed_ms(start, untimed, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->event_elapsed_ms(start, never, &ms), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->event_record(start, other), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  for (xal_bevent_t* e : {start, end, untimed, never}) {
    EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  }
  EXPECT_EQ(table_->stream_destroy(other), XAL_SUCCESS);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_SUCCESS);
}

// device_synchronize fences the device's streams one after the other: a
// stream that another thread destroys meanwhile stays alive until then.
TEST_F(ZePlugin, DeviceSynchronizeOutlivesStreamsDestroyedMeanwhile) {
  auto* hold = simulator_hook<void(int)>("xalsim_ze_hold_host_waits");
  auto* wait_for_held = simulator_hook<void(int)>("xalsim_ze_wait_for_held_waits");
  ASSERT_NE(hold, nullptr);
  ASSERT_NE(wait_for_held, nullptr);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  // Several rounds: the streams are fenced in no set order, and those
  // fenced after the busy one are destroyed under the synchronize.
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    std::vector<xal_bstream_t*> idle(15, nullptr);
    for (xal_bstream_t*& stream : idle) {
      ASSERT_EQ(table_->stream_create(dev0_, 0, &stream), XAL_SUCCESS);
    }
    // The busy stream has work, so its fence waits on the host; the others
    // have none.
    xal_bstream_t* busy = nullptr;
    ASSERT_EQ(table_->stream_create(dev0_, 0, &busy), XAL_SUCCESS);
    ASSERT_EQ(table_->memset(busy, a, static_cast<uint8_t>(round), 64), XAL_SUCCESS);
    hold(1);
    xal_status_t synchronized = XAL_ERROR_INTERNAL;
    std::thread synchronizer([&] { synchronized = table_->device_synchronize(dev0_); });
    wait_for_held(1);  // the synchronizer waits in the busy stream's fence
    for (xal_bstream_t* stream : idle) EXPECT_EQ(table_->stream_destroy(stream), XAL_SUCCESS);
    hold(0);
    synchronizer.join();
    EXPECT_EQ(synchronized, XAL_SUCCESS) << last_error().message;
    EXPECT_EQ(table_->stream_destroy(busy), XAL_SUCCESS);
  }
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

// Above maxMemAllocSize the allocation asks for relaxed limits (the
// simulator refuses it otherwise, as Intel's driver does).
TEST_F(ZePlugin, AllocationBeyondMaxMemAllocSizeUsesRelaxedLimits) {
  xaltest::ScopedEnv limit("XALSIM_ZE_MAX_ALLOC", "1048576");
  restart();
  if (HasFatalFailure()) return;
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(table_->device_get_properties(dev0_, &p), XAL_SUCCESS);
  EXPECT_EQ(p.max_allocation_bytes, 1048576u);
  constexpr size_t kBytes = 3u << 20;
  xal_devptr_t big = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, kBytes, &big), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(table_->memset(stream_, big, 0x42, kBytes), XAL_SUCCESS);
  uint8_t last = 0;
  ASSERT_EQ(table_->memcpy_dtoh(stream_, &last, big + kBytes - 1, 1), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(last, 0x42);
  EXPECT_EQ(table_->mem_free(dev0_, big), XAL_SUCCESS);
}

TEST_F(ZePlugin, HostMemory) {
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 4096, XAL_HOST_ALLOC_WRITE_COMBINED, &host),
            XAL_SUCCESS);
  std::memset(host, 0x3C, 4096);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev1_, 4096, &a), XAL_SUCCESS);
  xal_bstream_t* stream = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &stream), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_htod(stream, a, host, 4096), XAL_SUCCESS);
  std::vector<uint8_t> out(4096);
  ASSERT_EQ(table_->memcpy_dtoh(stream, out.data(), a, 4096), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0x3C));
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table_->mem_free(dev1_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(stream), XAL_SUCCESS);
}

class ZePeer : public ZePlugin, public ::testing::WithParamInterface<bool> {};

TEST_P(ZePeer, CopyBetweenDevicesBothWays) {
  if (!GetParam()) setenv("XALSIM_ZE_NO_PEER", "1", 1);  // staged through host
  constexpr size_t kBytes = 10007;
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, kBytes, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->mem_alloc(dev1_, kBytes, &b), XAL_SUCCESS);
  std::vector<uint8_t> in(kBytes), out(kBytes, 0);
  std::iota(in.begin(), in.end(), uint8_t{3});
  ASSERT_EQ(table_->memcpy_htod(stream_, a, in.data(), kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream_, dev1_, b, dev0_, a, kBytes), XAL_SUCCESS)
      << last_error().message;
  ASSERT_EQ(table_->memset(stream_, a, 0, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_peer(stream_, dev0_, a, dev1_, b, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, kBytes), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev1_, b), XAL_SUCCESS);
  unsetenv("XALSIM_ZE_NO_PEER");
}

INSTANTIATE_TEST_SUITE_P(DirectAndStaged, ZePeer, ::testing::Values(true, false));

// A wait queued on an event's record that has not run yet when the event
// is recorded again still waits for that earlier record, not the new one
// (which here comes after work that depends on the waiting stream).
TEST_F(ZePlugin, WaitQueuedBeforeAReRecordWaitsForTheEarlierRecord) {
  xaltest::ScopedEnv timeout("XAL_LEVELZERO_SYNC_TIMEOUT_MS", "3000");
  restart();
  if (HasFatalFailure()) return;
  auto* host_waiting = simulator_hook<int()>("xalsim_ze_host_waiting");
  auto* signal_every_event = simulator_hook<void()>("xalsim_ze_signal_every_event");
  ASSERT_NE(host_waiting, nullptr);
  ASSERT_NE(signal_every_event, nullptr);
  const auto image = spirv("kernel wait_u32\n");
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev1_, XAL_MODULE_FORMAT_SPIRV, image.data(), image.size(),
                                &module),
            XAL_SUCCESS);
  xal_bkernel_t* wait_u32 = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "wait_u32", &wait_u32), XAL_SUCCESS);
  void* host = nullptr;
  ASSERT_EQ(table_->host_alloc(backend_, 64, 0, &host), XAL_SUCCESS);
  auto* flag = static_cast<uint32_t*>(host);
  __atomic_store_n(flag, 0u, __ATOMIC_RELEASE);
  xal_bstream_t* a = stream_;
  xal_bstream_t* b = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &b), XAL_SUCCESS);
  xal_bevent_t* e = nullptr;
  xal_bevent_t* f = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &e), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev1_, 0, &f), XAL_SUCCESS);
  // E's first record, done.
  ASSERT_EQ(table_->event_record(e, a), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(e), XAL_SUCCESS);
  // B runs once the flag is set: then it waits on E's first record and
  // records F.
  uint64_t address = reinterpret_cast<uintptr_t>(flag);
  uint32_t value = 1;
  void* args[] = {&address, &value};
  const size_t sizes[] = {8, 4};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {1, 1, 1}, 0, sizes};
  ASSERT_EQ(table_->kernel_launch(b, wait_u32, &config, args, 2), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(b, e), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(f, b), XAL_SUCCESS);
  // A waits on F, then records E again.
  ASSERT_EQ(table_->stream_wait_event(a, f), XAL_SUCCESS);
  std::atomic<bool> returned{false};
  xal_status_t recorded = XAL_ERROR_INTERNAL;
  std::thread recorder([&] {
    recorded = table_->event_record(e, a);
    returned = true;
  });
  // The flag is set once the record returned or waits on the host (for B).
  while (!returned && host_waiting() == 0) std::this_thread::yield();
  __atomic_store_n(flag, value, __ATOMIC_RELEASE);
  recorder.join();
  EXPECT_EQ(recorded, XAL_SUCCESS) << last_error().message;
  const xal_status_t done_a = table_->stream_synchronize(a);
  EXPECT_EQ(done_a, XAL_SUCCESS) << last_error().message;
  if (done_a != XAL_SUCCESS) signal_every_event();  // lets the stuck lists end
  EXPECT_EQ(table_->stream_synchronize(b), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(b), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(f), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
  EXPECT_EQ(table_->host_free(backend_, host), XAL_SUCCESS);
}

// Streams held behind a host flag: block(stream) queues a wait_u32 kernel
// that runs until open() sets the flag (done at the latest on tear-down,
// so that no list stays stuck when a check fails). Host waits give up
// after 2 s (XAL_LEVELZERO_SYNC_TIMEOUT_MS): a wait that would hang fails.
class ZeGated : public ZePlugin {
 protected:
  void SetUp() override {
    ZePlugin::SetUp();
    if (HasFatalFailure()) return;
    setenv("XAL_LEVELZERO_SYNC_TIMEOUT_MS", "2000", 1);
    restart();
    if (HasFatalFailure()) return;
    const auto image = spirv("kernel wait_u32\n");
    for (xal_bdevice_t* device : {dev0_, dev1_}) {
      xal_bmodule_t*& module = device == dev0_ ? module0_ : module1_;
      ASSERT_EQ(table_->module_load(device, XAL_MODULE_FORMAT_SPIRV, image.data(),
                                    image.size(), &module),
                XAL_SUCCESS);
      ASSERT_EQ(table_->kernel_get(module, "wait_u32", device == dev0_ ? &kernel0_ : &kernel1_),
                XAL_SUCCESS);
    }
    ASSERT_EQ(table_->host_alloc(backend_, 64, 0, &host_), XAL_SUCCESS);
    __atomic_store_n(flag(), 0u, __ATOMIC_RELEASE);
  }
  void TearDown() override {
    unsetenv("XAL_LEVELZERO_SYNC_TIMEOUT_MS");
    if (host_ != nullptr) open();
    ZePlugin::TearDown();
  }
  uint32_t* flag() const { return static_cast<uint32_t*>(host_); }
  // Queues the wait for the flag on `stream` (of dev0_ or dev1_).
  xal_status_t block(xal_bstream_t* stream, xal_bdevice_t* device) {
    uint64_t address = reinterpret_cast<uintptr_t>(flag());
    uint32_t value = 1;
    void* args[] = {&address, &value};
    const size_t sizes[] = {8, 4};
    xal_launch_config_t config{sizeof config, {1, 1, 1}, {1, 1, 1}, 0, sizes};
    return table_->kernel_launch(stream, device == dev0_ ? kernel0_ : kernel1_, &config,
                                 args, 2);
  }
  void open() { __atomic_store_n(flag(), 1u, __ATOMIC_RELEASE); }

  xal_bmodule_t* module0_ = nullptr;
  xal_bmodule_t* module1_ = nullptr;
  xal_bkernel_t* kernel0_ = nullptr;
  xal_bkernel_t* kernel1_ = nullptr;
  void* host_ = nullptr;
};

// Re-recording an event that a stream waits on, where that stream waits
// for work the host queues only after the record returns, must not wait
// on the host for that stream (it never returned with the default
// timeout): the new record takes a fresh native event.
TEST_F(ZeGated, AReRecordNeverWaitsForAStreamThatWaitsOnTheEvent) {
  if (HasFatalFailure()) return;
  xal_bstream_t* b = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &b), XAL_SUCCESS);
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &e), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(e, stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_synchronize(e), XAL_SUCCESS);
  ASSERT_EQ(block(b, dev1_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(b, e), XAL_SUCCESS);
  EXPECT_EQ(table_->event_record(e, stream_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->event_synchronize(e), XAL_SUCCESS) << last_error().message;
  open();
  EXPECT_EQ(table_->stream_synchronize(b), XAL_SUCCESS) << last_error().message;
  // Once both are done, a synchronize of the device releases the native
  // event of the earlier record (the live events are back to what they were
  // before `e`: stream events and e's own).
  auto* live_objects = simulator_hook<int(int)>("xalsim_ze_live_objects");
  ASSERT_NE(live_objects, nullptr);
  const int before = live_objects(2);
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_SUCCESS);
  EXPECT_EQ(live_objects(2), before - 1);
  EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(live_objects(2), before - 2);
  EXPECT_EQ(table_->stream_destroy(b), XAL_SUCCESS);
}

// Destroying an event whose record is still queued, and that another
// stream's queued wait refers to (as xal_shutdown does, events before
// streams), keeps the native event until the device is done with it: the
// simulator's strict mode counts any destroy of an event still in use.
TEST_F(ZeGated, ADestroyedEventStaysUntilTheDeviceIsDoneWithIt) {
  if (HasFatalFailure()) return;
  xaltest::ScopedEnv strict("XALSIM_ZE_STRICT_EVENTS", "1");
  auto* misuses = simulator_hook<int()>("xalsim_ze_event_misuses");
  auto* live_objects = simulator_hook<int(int)>("xalsim_ze_live_objects");
  ASSERT_NE(misuses, nullptr);
  ASSERT_NE(live_objects, nullptr);
  const int misused = misuses();
  const int events = live_objects(2);
  xal_bstream_t* b = nullptr;
  ASSERT_EQ(table_->stream_create(dev1_, 0, &b), XAL_SUCCESS);
  xal_bevent_t* e = nullptr;
  ASSERT_EQ(table_->event_create(dev0_, 0, &e), XAL_SUCCESS);
  ASSERT_EQ(block(stream_, dev0_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(e, stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(b, e), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(misuses(), misused);
  open();
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->stream_destroy(b), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(misuses(), misused);
  // Gone once the device is done with it (b's stream event went with b).
  EXPECT_EQ(live_objects(2), events);
  // A re-recorded event destroyed while its earlier record is still waited
  // on: the same holds for both of its native events.
  ASSERT_EQ(table_->stream_create(dev1_, 0, &b), XAL_SUCCESS);
  ASSERT_EQ(table_->event_create(dev0_, 0, &e), XAL_SUCCESS);
  __atomic_store_n(flag(), 0u, __ATOMIC_RELEASE);
  ASSERT_EQ(block(stream_, dev0_), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(e, stream_), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_wait_event(b, e), XAL_SUCCESS);
  ASSERT_EQ(table_->event_record(e, stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->event_destroy(e), XAL_SUCCESS);
  open();
  EXPECT_EQ(table_->device_synchronize(dev1_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->device_synchronize(dev0_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->stream_destroy(b), XAL_SUCCESS);
  EXPECT_EQ(misuses(), misused);
  EXPECT_EQ(live_objects(2), events);
}

// Unloading a module waits for the launches of its kernels still queued
// (xal_device_reset unloads modules before it destroys streams): the
// simulator's strict mode counts a kernel or module destroyed under one.
TEST_F(ZeGated, ModuleUnloadWaitsForItsQueuedLaunches) {
  if (HasFatalFailure()) return;
  xaltest::ScopedEnv strict("XALSIM_ZE_STRICT_EVENTS", "1");
  auto* misuses = simulator_hook<int()>("xalsim_ze_event_misuses");
  auto* host_waiting = simulator_hook<int()>("xalsim_ze_host_waiting");
  ASSERT_NE(misuses, nullptr);
  ASSERT_NE(host_waiting, nullptr);
  const int misused = misuses();
  ASSERT_EQ(block(stream_, dev0_), XAL_SUCCESS);
  std::atomic<bool> returned{false};
  xal_status_t unloaded = XAL_ERROR_INTERNAL;
  std::thread unloader([&] {
    unloaded = table_->module_unload(module0_);
    returned = true;
  });
  // The launch runs once the unload returned or waits for the stream.
  while (!returned && host_waiting() == 0) std::this_thread::yield();
  open();
  unloader.join();
  module0_ = nullptr;
  EXPECT_EQ(unloaded, XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(misuses(), misused);
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
}

TEST_F(ZePlugin, SpirvModuleLoadAndLaunch) {
  const auto image = spirv("kernel fill_u32\nkernel other\n");
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, image.data(), image.size(),
                                &module),
            XAL_SUCCESS)
      << last_error().message;
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  xal_bkernel_t* absent = nullptr;
  EXPECT_EQ(table_->kernel_get(module, "absent", &absent), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME");
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 100 * sizeof(uint32_t), &a), XAL_SUCCESS);
  uint32_t value = 0xFACE;
  uint64_t n = 100;
  void* args[] = {&a, &value, &n};
  const size_t sizes[] = {8, 4, 8};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {100, 1, 1}, 0, sizes};
  ASSERT_EQ(table_->kernel_launch(stream_, kernel, &config, args, 3), XAL_SUCCESS)
      << last_error().message;
  std::vector<uint32_t> out(100);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, 100 * sizeof(uint32_t)), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint32_t>(100, 0xFACE));
  xal_launch_config_t no_sizes{sizeof no_sizes, {1, 1, 1}, {1, 1, 1}, 0, nullptr};
  EXPECT_EQ(table_->kernel_launch(stream_, kernel, &no_sizes, args, 3),
            XAL_ERROR_INVALID_ARGUMENT);
  xal_launch_config_t huge{sizeof huge, {1, 1, 1}, {2048, 1, 1}, 0, sizes};
  EXPECT_EQ(table_->kernel_launch(stream_, kernel, &huge, args, 3), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION");
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_HSACO, image.data(), image.size(),
                                &module),
            XAL_ERROR_NOT_SUPPORTED);
}

TEST_F(ZePlugin, SpirvBuildFailureCarriesTheBuildLog) {
  const auto image = spirv("kernel k\nerror: line 3: undeclared identifier 'acc'\n");
  xal_bmodule_t* module = nullptr;
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, image.data(), image.size(),
                                &module),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 0x70000004);
  EXPECT_EQ(last_error().vendor_name, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE");
  EXPECT_NE(last_error().message.find("undeclared identifier 'acc'"), std::string::npos)
      << last_error().message;
  const char junk[] = "not spir-v at all";
  EXPECT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, junk, sizeof junk, &module),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("bad magic number"), std::string::npos)
      << last_error().message;
  // The device still works afterwards.
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

TEST_F(ZePlugin, SysmanMetrics) {
  xal_device_metrics_t first{};
  first.struct_size = sizeof first;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &first), XAL_SUCCESS);
  const uint64_t want = XAL_METRIC_HEALTH | XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_MEMORY_USED |
                        XAL_METRIC_TEMPERATURE | XAL_METRIC_ECC_CORRECTED |
                        XAL_METRIC_ECC_UNCORRECTED | XAL_METRIC_SM_CLOCK |
                        XAL_METRIC_MEMORY_CLOCK | XAL_METRIC_ENERGY;
  EXPECT_EQ(first.valid & want, want);
  EXPECT_EQ(first.health, static_cast<uint32_t>(XAL_HEALTH_OK));
  EXPECT_EQ(first.memory_total_bytes, uint64_t{1} << 30);
  EXPECT_DOUBLE_EQ(first.temperature_c, 52.5);
  EXPECT_EQ(first.ecc_corrected, 3u);
  EXPECT_EQ(first.ecc_uncorrected, 0u);
  EXPECT_EQ(first.sm_clock_mhz, 1600u);
  EXPECT_EQ(first.memory_clock_mhz, 3200u);
  // Rates need two samples.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  xal_device_metrics_t second{};
  second.struct_size = sizeof second;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &second), XAL_SUCCESS);
  ASSERT_TRUE(second.valid & XAL_METRIC_POWER);
  ASSERT_TRUE(second.valid & XAL_METRIC_UTILIZATION);
  EXPECT_NEAR(second.power_w, 100.0, 1e-9);
  EXPECT_NEAR(second.utilization_percent, 50.0, 1.0);
  EXPECT_GT(second.energy_j, 0.0);
}

TEST_F(ZePlugin, FailingSysmanLeavesOutWhatItCannotRead) {
  setenv("XALSIM_ZE_FAIL",
         "zesDeviceEnumMemoryModules=0x78000003;zesTemperatureGetState=0x70010000;"
         "zesRasGetState=0x7ffffffe",
         1);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &m), XAL_SUCCESS);
  EXPECT_TRUE(m.valid & XAL_METRIC_HEALTH);
  EXPECT_TRUE(m.valid & XAL_METRIC_SM_CLOCK);
  EXPECT_FALSE(m.valid & XAL_METRIC_MEMORY_TOTAL);
  EXPECT_FALSE(m.valid & XAL_METRIC_TEMPERATURE);
  EXPECT_FALSE(m.valid & XAL_METRIC_ECC_CORRECTED);
  setenv("XALSIM_ZE_FAIL", "zesDeviceGetState=0x7ffffffe;zesDeviceEnumFrequencyDomains=1", 1);
  xal_device_metrics_t n{};
  n.struct_size = sizeof n;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &n), XAL_SUCCESS);
  EXPECT_FALSE(n.valid & XAL_METRIC_SM_CLOCK);
  EXPECT_EQ(n.health, static_cast<uint32_t>(XAL_HEALTH_OK));
}

// Level Zero sizes local memory per __local argument only: a launch asking
// for dynamic shared memory is refused, not run without it.
TEST_F(ZePlugin, DynamicSharedMemoryIsNotSupported) {
  const auto image = spirv("kernel fill_u32\n");
  xal_bmodule_t* module = nullptr;
  ASSERT_EQ(table_->module_load(dev0_, XAL_MODULE_FORMAT_SPIRV, image.data(), image.size(),
                                &module),
            XAL_SUCCESS);
  xal_bkernel_t* kernel = nullptr;
  ASSERT_EQ(table_->kernel_get(module, "fill_u32", &kernel), XAL_SUCCESS);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 64, &a), XAL_SUCCESS);
  uint32_t value = 7;
  uint64_t n = 16;
  void* args[] = {&a, &value, &n};
  const size_t sizes[] = {8, 4, 8};
  xal_launch_config_t config{sizeof config, {1, 1, 1}, {16, 1, 1}, 1024, sizes};
  EXPECT_EQ(table_->kernel_launch(stream_, kernel, &config, args, 3), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("shared memory"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
  EXPECT_EQ(table_->module_unload(module), XAL_SUCCESS);
}

// Energy counts from init: the simulated counter, like a card's, runs from
// long before (the host clock's start), and a program that reads metrics
// only once still gets the energy used since init, not 0.
TEST_F(ZePlugin, EnergyCountsFromInit) {
  const auto before = std::chrono::steady_clock::now();
  restart();
  if (HasFatalFailure()) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev1_, &m), XAL_SUCCESS);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  ASSERT_TRUE(m.valid & XAL_METRIC_ENERGY);
  EXPECT_GT(m.energy_j, 0.0);
  EXPECT_LE(m.energy_j, 100.0 * seconds + 1e-3);  // the simulated card draws 100 W
}

// A driver older than Level Zero 1.7 may accept the in-order flag and
// ignore it (the simulator then runs commands between barriers in reverse
// order): the streams order their work with barriers instead.
TEST_F(ZePlugin, ADriverOlderThan17OrdersStreamsWithBarriers) {
  xaltest::ScopedEnv version("XALSIM_ZE_API_VERSION", "1.6");
  restart();
  if (HasFatalFailure()) return;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table_->describe(backend_, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.driver_version).find("Level Zero 1.6"), std::string::npos)
      << d.driver_version;
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 4096, &a), XAL_SUCCESS);
  std::vector<uint8_t> out(4096, 0);
  ASSERT_EQ(table_->memset(stream_, a, 9, 4096), XAL_SUCCESS);
  ASSERT_EQ(table_->memcpy_dtoh(stream_, out.data(), a, 4096), XAL_SUCCESS);
  ASSERT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 9));
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

// ECC counts are the RAS hardware error categories only: engine resets,
// programming errors and driver errors are left out.
TEST_F(ZePlugin, EccCountsHardwareErrorsOnly) {
  xaltest::ScopedEnv soft("XALSIM_ZE_RAS_SOFT", "1");
  restart();
  if (HasFatalFailure()) return;
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(table_->device_get_metrics(dev0_, &m), XAL_SUCCESS);
  ASSERT_TRUE(m.valid & XAL_METRIC_ECC_CORRECTED);
  ASSERT_TRUE(m.valid & XAL_METRIC_ECC_UNCORRECTED);
  EXPECT_EQ(m.ecc_corrected, 3u);  // the simulated cache errors
  EXPECT_EQ(m.ecc_uncorrected, 0u);
}

// Elapsed time with timers whose tick is not a whole number of ns: a
// 19.2 MHz timer (52.083 ns) and a 2.5 GHz one (0.4 ns). The simulator's
// clock is fixed for each record.
TEST_F(ZePlugin, ElapsedTimeOfTimersOfAnyRate) {
  auto* set_clock = simulator_hook<void(uint64_t)>("xalsim_ze_set_clock_ns");
  ASSERT_NE(set_clock, nullptr);
  struct Case {
    const char* hz;
    uint64_t ns;
  };
  for (const Case& c : {Case{"19200000", 1000000000}, Case{"2500000000", 1000000}}) {
    SCOPED_TRACE(c.hz);
    xaltest::ScopedEnv rate("XALSIM_ZE_TIMER_HZ", c.hz);
    restart();
    if (HasFatalFailure()) return;
    xal_bevent_t* start = nullptr;
    xal_bevent_t* end = nullptr;
    ASSERT_EQ(table_->event_create(dev0_, 0, &start), XAL_SUCCESS);
    ASSERT_EQ(table_->event_create(dev0_, 0, &end), XAL_SUCCESS);
    set_clock(1000);
    ASSERT_EQ(table_->event_record(start, stream_), XAL_SUCCESS);
    ASSERT_EQ(table_->event_synchronize(start), XAL_SUCCESS);
    set_clock(1000 + c.ns);
    ASSERT_EQ(table_->event_record(end, stream_), XAL_SUCCESS);
    ASSERT_EQ(table_->event_synchronize(end), XAL_SUCCESS);
    set_clock(0);
    float ms = -1.0f;
    ASSERT_EQ(table_->event_elapsed_ms(start, end, &ms), XAL_SUCCESS) << last_error().message;
    const double want = static_cast<double>(c.ns) / 1e6;
    EXPECT_NEAR(ms, want, want * 1e-5);
    EXPECT_EQ(table_->event_destroy(start), XAL_SUCCESS);
    EXPECT_EQ(table_->event_destroy(end), XAL_SUCCESS);
  }
}

// A sync timeout too large for 64-bit ns means forever (UINT64_MAX).
// 2^58 ms times 10^6 wraps to exactly 0 ns: waits would give up at once.
TEST_F(ZePlugin, HugeSyncTimeoutWaitsForever) {
  xaltest::ScopedEnv timeout("XAL_LEVELZERO_SYNC_TIMEOUT_MS", "288230376151711744");
  restart();
  if (HasFatalFailure()) return;
  auto* last_wait_timeout = simulator_hook<uint64_t()>("xalsim_ze_last_wait_timeout");
  ASSERT_NE(last_wait_timeout, nullptr);
  xal_devptr_t a = 0;
  ASSERT_EQ(table_->mem_alloc(dev0_, 1 << 20, &a), XAL_SUCCESS);
  ASSERT_EQ(table_->memset(stream_, a, 1, 1 << 20), XAL_SUCCESS);
  const xal_status_t synchronized = table_->stream_synchronize(stream_);
  EXPECT_EQ(last_wait_timeout(), UINT64_MAX);
  EXPECT_EQ(synchronized, XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(table_->stream_synchronize(stream_), XAL_SUCCESS);
  EXPECT_EQ(table_->mem_free(dev0_, a), XAL_SUCCESS);
}

// zeInit asks for GPU drivers only; a loader that lists an NPU driver all
// the same (XALSIM_ZE_NPU=2, listed first) has it left out: no NPU device,
// and host memory in the GPU driver's context (the simulated NPU driver has
// none).
TEST(ZeNpu, OnlyGpuDriversAndDevicesServe) {
  for (const char* mode : {"1", "2"}) {
    SCOPED_TRACE(mode);
    xaltest::ScopedEnv library("XAL_LEVELZERO_LIBRARY", XAL_ZE_SIM_PATH);
    xaltest::ScopedEnv devices("XALSIM_ZE_DEVICES", "2");
    xaltest::ScopedEnv npu("XALSIM_ZE_NPU", mode);
    const xal_backend_table_t* table = plugin_table();
    xal_backend_init_args_t args{sizeof args, test_services(), nullptr};
    xal_backend_t* backend = nullptr;
    ASSERT_EQ(table->init(&args, &backend), XAL_SUCCESS) << last_error().message;
    uint32_t count = 0;
    ASSERT_EQ(table->device_count(backend, &count), XAL_SUCCESS);
    EXPECT_EQ(count, 2u);
    for (uint32_t i = 0; i < count; ++i) {
      xal_bdevice_t* device = nullptr;
      ASSERT_EQ(table->device_get(backend, i, &device), XAL_SUCCESS);
      xal_device_properties_t p{};
      p.struct_size = sizeof p;
      ASSERT_EQ(table->device_get_properties(device, &p), XAL_SUCCESS);
      EXPECT_EQ(p.kind, static_cast<uint32_t>(XAL_DEVICE_KIND_GPU)) << p.name;
    }
    void* host = nullptr;
    EXPECT_EQ(table->host_alloc(backend, 4096, 0, &host), XAL_SUCCESS) << last_error().message;
    if (host != nullptr) {
      EXPECT_EQ(table->host_free(backend, host), XAL_SUCCESS);
    }
    xal_backend_describe_t d{};
    d.struct_size = sizeof d;
    ASSERT_EQ(table->describe(backend, &d), XAL_SUCCESS);
    // Asked for GPU drivers only, the loader lists no NPU driver; one that
    // lists it all the same has it skipped.
    const bool listed = std::string(mode) == "2";
    EXPECT_EQ(std::string(d.note).find("driver 0 skipped: no GPU devices") != std::string::npos,
              listed)
        << d.note;
    EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
  }
}

}  // namespace
}  // namespace xal::levelzero::testing
