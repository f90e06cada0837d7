// The CUDA backend through libxal's public ABI, on the simulated driver
// (SIMULATION ONLY). XAL_BACKENDS and XAL_CUDA_DRIVER come from CTest.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "watchdog.h"
#include "xal/xal.h"

namespace {

xal_error_info_t last_error() {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  xal_last_error(&info);
  return info;
}

bool find_backend(const char* name, xal_backend_info_t* out) {
  uint32_t count = 0;
  if (xal_backend_count(&count) != XAL_SUCCESS) return false;
  for (uint32_t i = 0; i < count; ++i) {
    out->struct_size = sizeof *out;
    if (xal_backend_get_info(i, out) == XAL_SUCCESS &&
        std::strcmp(out->name, name) == 0) {
      return true;
    }
  }
  return false;
}

// Appends the CUDA devices xal lists to `out`; the simulation has two.
void cuda_devices(std::vector<xal_device_t>* out) {
  uint32_t count = 0;
  ASSERT_EQ(xal_device_count(&count), XAL_SUCCESS);
  for (uint32_t i = 0; i < count; ++i) {
    xal_device_t d = nullptr;
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(xal_device_get(i, &d), XAL_SUCCESS);
    ASSERT_EQ(xal_device_get_properties(d, &p), XAL_SUCCESS);
    if (std::strcmp(p.backend, "cuda") == 0) out->push_back(d);
  }
  ASSERT_EQ(out->size(), 2u);
}

class CudaSimXal : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("XAL_CUDA_TEST_NO_DRIVER") != nullptr) {
      GTEST_SKIP() << "this process runs the missing-driver case";
    }
    unsetenv("XALSIM_CUDA_FAIL");
    ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS) << last_error().message;
    cuda_devices(&devices_);
  }
  void TearDown() override {
    unsetenv("XALSIM_CUDA_FAIL");
    if (!devices_.empty()) {
      EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
    }
  }
  std::vector<xal_device_t> devices_;
};

TEST_F(CudaSimXal, BackendIsListedAsSimulated) {
  xal_backend_info_t info{};
  ASSERT_TRUE(find_backend("cuda", &info));
  EXPECT_EQ(info.state, XAL_BACKEND_STATE_LOADED);
  EXPECT_EQ(info.device_count, 2u);
  EXPECT_TRUE(info.flags & XAL_BACKEND_FLAG_SIMULATED);
  EXPECT_STREQ(info.driver_version, "13.0");
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(xal_device_get_properties(devices_[1], &p), XAL_SUCCESS);
  EXPECT_NE(std::string(p.name).find("simulated"), std::string::npos);
  EXPECT_STREQ(p.pci_bus_id, "0000:11:00.0");
  EXPECT_TRUE(p.capabilities & XAL_DEVICE_CAP_SIMULATED);
}

TEST_F(CudaSimXal, CopiesThroughThePublicAbi) {
  const size_t n = (1 << 20) + 5;
  std::vector<uint8_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 13);
  xal_devptr_t a = 0, b = 0;
  ASSERT_EQ(xal_mem_alloc(devices_[0], n, &a), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(devices_[1], n, &b), XAL_SUCCESS);
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(devices_[0], 0, &s), XAL_SUCCESS);
  void* pinned = nullptr;
  ASSERT_EQ(xal_host_alloc(n, 0, &pinned), XAL_SUCCESS) << last_error().message;
  std::memcpy(pinned, in.data(), n);
  ASSERT_EQ(xal_memcpy_htod(s, a, pinned, n), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_peer(s, devices_[1], b, devices_[0], a, n), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(s, out.data(), a, n), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  std::fill(out.begin(), out.end(), 0);
  xal_stream_t s1 = nullptr;
  ASSERT_EQ(xal_stream_create(devices_[1], 0, &s1), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(s1, out.data(), b, n), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(s1), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_destroy(s1), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(devices_[0], a), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(devices_[1], b), XAL_SUCCESS);
  EXPECT_EQ(xal_host_free(pinned), XAL_SUCCESS);
}

TEST_F(CudaSimXal, DriverErrorsCarryTheCudaCode) {
  setenv("XALSIM_CUDA_FAIL", "cuMemAlloc=2", 1);
  xal_devptr_t p = 0;
  EXPECT_EQ(xal_mem_alloc(devices_[0], 4096, &p), XAL_ERROR_OUT_OF_MEMORY);
  const xal_error_info_t e = last_error();
  EXPECT_EQ(e.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(e.vendor_code, 2);
  EXPECT_STREQ(e.vendor_name, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(e.backend, "cuda");
}

TEST_F(CudaSimXal, StickyErrorUntilDeviceReset) {
  xal_stream_t s = nullptr;
  ASSERT_EQ(xal_stream_create(devices_[0], 0, &s), XAL_SUCCESS);
  setenv("XALSIM_CUDA_FAIL", "cuStreamSynchronize=700@1", 1);
  EXPECT_EQ(xal_stream_synchronize(s), XAL_ERROR_DEVICE_LOST);
  unsetenv("XALSIM_CUDA_FAIL");
  EXPECT_EQ(last_error().vendor_code, 700);
  xal_device_health_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(xal_device_get_health(devices_[0], &h), XAL_SUCCESS);
  EXPECT_NE(h.state, XAL_HEALTH_OK);
  xal_devptr_t p = 0;
  EXPECT_EQ(xal_mem_alloc(devices_[0], 256, &p), XAL_ERROR_DEVICE_LOST);
  ASSERT_EQ(xal_device_reset(devices_[0]), XAL_SUCCESS) << last_error().message;
  ASSERT_EQ(xal_device_get_health(devices_[0], &h), XAL_SUCCESS);
  EXPECT_EQ(h.state, XAL_HEALTH_OK);
  ASSERT_EQ(xal_mem_alloc(devices_[0], 256, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_mem_free(devices_[0], p), XAL_SUCCESS);
}

// A release that the driver refuses keeps xal's handle (or allocation) and
// the plugin's object, so that it can be retried: the retry succeeds, after
// a sticky error too (the context is gone, and the object with it), and the
// reset afterwards does not touch a released object (checked under ASan).
TEST_F(CudaSimXal, RefusedReleaseCanBeRetried) {
  xal_stream_t s = nullptr;
  xal_event_t e = nullptr;
  xal_devptr_t p = 0;
  xal_devptr_t q = 0;
  ASSERT_EQ(xal_stream_create(devices_[0], 0, &s), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(devices_[1], 0, &e), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(devices_[1], 4096, &p), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(devices_[1], 4096, &q), XAL_SUCCESS);

  setenv("XALSIM_CUDA_FAIL", "cuEventDestroy=1@1;cuMemFree=2@1", 1);
  EXPECT_EQ(xal_event_destroy(e), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_code, 1);
  EXPECT_EQ(xal_mem_free(devices_[1], p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(xal_event_destroy(e), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_mem_free(devices_[1], p), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_mem_free(devices_[1], p), XAL_ERROR_INVALID_ARGUMENT);

  // The stream's synchronize finds a sticky error: the destroy reports it,
  // and the retry releases the stream of the lost context.
  setenv("XALSIM_CUDA_FAIL", "cuStreamSynchronize=700@1", 1);
  EXPECT_EQ(xal_stream_destroy(s), XAL_ERROR_DEVICE_LOST);
  EXPECT_EQ(last_error().vendor_code, 700);
  unsetenv("XALSIM_CUDA_FAIL");
  EXPECT_EQ(xal_stream_destroy(s), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_stream_destroy(s), XAL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(xal_device_reset(devices_[0]), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_mem_free(devices_[1], q), XAL_SUCCESS) << last_error().message;
}

// With NCCL (cuda_simulation_xal_nccl_test: the simulated NCCL): a reset
// aborts the device's NCCL communicator first (ncclCommAbort while its
// context exists), so that it refuses work afterwards and its destroy does
// not hand NCCL a communicator of a context that is gone.
TEST_F(CudaSimXal, ResetAbortsTheNcclCommunicator) {
  if (std::getenv("XAL_CUDA_NCCL") == nullptr) GTEST_SKIP() << "needs XAL_CUDA_NCCL";
  xal_comm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(xal_comm_create(devices_.data(), 2, nullptr, comms), XAL_SUCCESS)
      << last_error().message;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms[0], &info), XAL_SUCCESS);
  ASSERT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE)) << info.description;
  ASSERT_EQ(xal_device_reset(devices_[0]), XAL_SUCCESS) << last_error().message;
  xal_status_t async = XAL_SUCCESS;
  ASSERT_EQ(xal_comm_get_async_error(comms[0], &async), XAL_SUCCESS);
  EXPECT_EQ(async, XAL_ERROR_ABORTED);
  // The core aborts the communicators with a rank on the reset device;
  // the other rank's is aborted with it (NCCL aborts one rank per
  // ncclCommAbort; CTest runs the simulated NCCL so, XALSIM_NCCL_ABORT=rank).
  async = XAL_SUCCESS;
  ASSERT_EQ(xal_comm_get_async_error(comms[1], &async), XAL_SUCCESS);
  EXPECT_EQ(async, XAL_ERROR_ABORTED);
  xal_stream_t s = nullptr;
  xal_devptr_t p = 0;
  ASSERT_EQ(xal_stream_create(devices_[0], 0, &s), XAL_SUCCESS);
  ASSERT_EQ(xal_mem_alloc(devices_[0], 64, &p), XAL_SUCCESS);
  EXPECT_EQ(xal_allreduce(comms[0], p, p, 4, XAL_DTYPE_F32, XAL_OP_SUM, s), XAL_ERROR_ABORTED);
  EXPECT_NE(std::string(last_error().message).find("aborted"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(xal_comm_destroy(comms[0]), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_comm_destroy(comms[1]), XAL_SUCCESS) << last_error().message;
}

using xal::cuda::test::Watchdog;

// Sets environment variables for one scope and puts back what was there.
class ScopedEnvs {
 public:
  explicit ScopedEnvs(std::vector<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old != nullptr, old != nullptr ? old : ""});
      setenv(name, value, 1);
    }
  }
  ~ScopedEnvs() {
    for (const Saved& s : saved_) {
      if (s.had) {
        setenv(s.name, s.value.c_str(), 1);
      } else {
        unsetenv(s.name);
      }
    }
  }
  ScopedEnvs(const ScopedEnvs&) = delete;
  ScopedEnvs& operator=(const ScopedEnvs&) = delete;

 private:
  struct Saved {
    const char* name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// XAL_CUDA_COLLECTIVES=peer on a driver whose streams cannot wait for xal's
// host function threads (no cuStreamWaitValue32): the plugin's collectives
// would run on the driver's callback thread, so its comm_create refuses
// (NOT_SUPPORTED) and the core takes its own path, which works.
TEST(CudaSimXalPeer, WithoutWaitValueTheCoreTakesOver) {
  if (std::getenv("XAL_CUDA_TEST_NO_DRIVER") != nullptr) {
    GTEST_SKIP() << "this process runs the missing-driver case";
  }
  const ScopedEnvs env({{"XAL_CUDA_COLLECTIVES", "peer"},
                        {"XALSIM_CUDA_HIDE", "cuStreamWaitValue32"}});
  ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS) << last_error().message;
  std::vector<xal_device_t> devices;
  cuda_devices(&devices);
  if (HasFatalFailure()) return;
  xal_comm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(xal_comm_create(devices.data(), 2, nullptr, comms), XAL_SUCCESS)
      << last_error().message;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms[0], &info), XAL_SUCCESS);
  EXPECT_NE(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE)) << info.description;
  {
    const Watchdog watchdog("an allreduce on the core's path", std::chrono::seconds(60));
    xal_stream_t streams[2] = {nullptr, nullptr};
    xal_devptr_t bufs[2] = {0, 0};
    std::vector<float> values[2] = {std::vector<float>(256, 1.5f), std::vector<float>(256, 2.0f)};
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(xal_stream_create(devices[r], 0, &streams[r]), XAL_SUCCESS);
      ASSERT_EQ(xal_mem_alloc(devices[r], 256 * sizeof(float), &bufs[r]), XAL_SUCCESS);
      ASSERT_EQ(xal_memcpy_htod(streams[r], bufs[r], values[r].data(), 256 * sizeof(float)),
                XAL_SUCCESS);
    }
    ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(xal_allreduce(comms[r], bufs[r], bufs[r], 256, XAL_DTYPE_F32, XAL_OP_SUM,
                              streams[r]),
                XAL_SUCCESS)
          << last_error().message;
    }
    ASSERT_EQ(xal_group_end(), XAL_SUCCESS) << last_error().message;
    for (int r = 0; r < 2; ++r) {
      std::vector<float> out(256, 0.0f);
      ASSERT_EQ(xal_memcpy_dtoh(streams[r], out.data(), bufs[r], 256 * sizeof(float)),
                XAL_SUCCESS);
      ASSERT_EQ(xal_stream_synchronize(streams[r]), XAL_SUCCESS) << last_error().message;
      EXPECT_EQ(out, std::vector<float>(256, 3.5f));
      EXPECT_EQ(xal_mem_free(devices[r], bufs[r]), XAL_SUCCESS);
      EXPECT_EQ(xal_stream_destroy(streams[r]), XAL_SUCCESS);
    }
  }
  EXPECT_EQ(xal_comm_destroy(comms[0]), XAL_SUCCESS);
  EXPECT_EQ(xal_comm_destroy(comms[1]), XAL_SUCCESS);
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

// A mock card beside the CUDA devices (the core's staged copies between
// backends), whose copies run at 2 MB/s: 1 MiB takes half a second.
class CudaSimXalWithMock : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef XAL_CUDA_TEST_BACKENDS
    GTEST_SKIP() << "needs the mock backend";
#else
    if (std::getenv("XAL_CUDA_TEST_NO_DRIVER") != nullptr) {
      GTEST_SKIP() << "this process runs the missing-driver case";
    }
    unsetenv("XALSIM_CUDA_FAIL");
    const char* old_devices = std::getenv("XAL_MOCK_DEVICES");
    const std::string saved = old_devices != nullptr ? old_devices : "";
    setenv("XAL_MOCK_DEVICES",
           R"([{"profile":"a100-40g","memory":"64MiB","bandwidth_gbps":0.002}])", 1);
    xal_init_options_t options{};
    options.struct_size = sizeof options;
    options.backends = XAL_CUDA_TEST_BACKENDS;
    options.validation = -1;
    const xal_status_t init = xal_init(&options);
    if (old_devices != nullptr) {
      setenv("XAL_MOCK_DEVICES", saved.c_str(), 1);
    } else {
      unsetenv("XAL_MOCK_DEVICES");
    }
    ASSERT_EQ(init, XAL_SUCCESS) << last_error().message;
    initialised_ = true;
    cuda_ = first_device_of("cuda");
    mock_ = first_device_of("mock");
    ASSERT_NE(cuda_, nullptr);
    ASSERT_NE(mock_, nullptr);
    in_.resize(kBytes);
    for (size_t i = 0; i < kBytes; ++i) in_[i] = static_cast<uint8_t>(i * 29 + 3);
    ASSERT_EQ(xal_mem_alloc(mock_, kBytes, &src_), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(xal_mem_alloc(cuda_, kBytes, &dst_), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(xal_stream_create(mock_, 0, &mock_stream_), XAL_SUCCESS);
    ASSERT_EQ(xal_event_create(mock_, 0, &filled_), XAL_SUCCESS);
#endif
  }
  void TearDown() override {
    if (initialised_) {
      EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
    }
  }

  // Queues on `stream` (of the CUDA device) a wait for the mock card's slow
  // fill of the source, then the staged copy to the CUDA device: the copy's
  // gate, a host function on the stream, lets a core thread make the core's
  // staging stream on the CUDA device (its first use) and copy.
  void queue_staged_copy(xal_stream_t stream) {
    ASSERT_EQ(xal_memcpy_htod(mock_stream_, src_, in_.data(), kBytes), XAL_SUCCESS)
        << last_error().message;
    ASSERT_EQ(xal_event_record(filled_, mock_stream_), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_wait_event(stream, filled_), XAL_SUCCESS) << last_error().message;
    ASSERT_EQ(xal_memcpy_peer(stream, cuda_, dst_, mock_, src_, kBytes), XAL_SUCCESS)
        << last_error().message;
  }

  // The CUDA device holds what the mock card was filled with.
  void expect_copied() {
    std::vector<uint8_t> out(kBytes, 0);
    xal_stream_t check = nullptr;
    ASSERT_EQ(xal_stream_create(cuda_, 0, &check), XAL_SUCCESS);
    ASSERT_EQ(xal_memcpy_dtoh(check, out.data(), dst_, kBytes), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_synchronize(check), XAL_SUCCESS);
    EXPECT_EQ(in_, out);
    EXPECT_EQ(xal_stream_destroy(check), XAL_SUCCESS);
  }

  // The first device of `backend`, or null.
  static xal_device_t first_device_of(const char* backend) {
    uint32_t count = 0;
    if (xal_device_count(&count) != XAL_SUCCESS) return nullptr;
    for (uint32_t i = 0; i < count; ++i) {
      xal_device_t d = nullptr;
      xal_device_properties_t p{};
      p.struct_size = sizeof p;
      if (xal_device_get(i, &d) == XAL_SUCCESS &&
          xal_device_get_properties(d, &p) == XAL_SUCCESS &&
          std::strcmp(p.backend, backend) == 0) {
        return d;
      }
    }
    return nullptr;
  }

  static constexpr size_t kBytes = size_t{1} << 20;
  bool initialised_ = false;
  xal_device_t cuda_ = nullptr;
  xal_device_t mock_ = nullptr;
  std::vector<uint8_t> in_;
  xal_devptr_t src_ = 0;
  xal_devptr_t dst_ = 0;
  xal_stream_t mock_stream_ = nullptr;
  xal_event_t filled_ = nullptr;
};

// The stream destroyed at once: the destroy waits for the stream without
// holding the device's lock, so that the copy's thread makes its staging
// stream there (it deadlocked), and the copy arrives.
TEST_F(CudaSimXalWithMock, DestroyingAStreamWithAStagedCopyQueued) {
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(cuda_, 0, &stream), XAL_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(queue_staged_copy(stream));
  {
    const Watchdog watchdog("xal_stream_destroy", std::chrono::seconds(30));
    EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS) << last_error().message;
  }
  expect_copied();
}

// An event recorded behind the copy and destroyed at once: the simulated
// driver's cuEventDestroy waits for the event's last record, which waits
// for the copy; the destroy does not hold the device's lock meanwhile.
TEST_F(CudaSimXalWithMock, DestroyingAnEventRecordedAfterAStagedCopy) {
  xal_stream_t stream = nullptr;
  xal_event_t copied = nullptr;
  ASSERT_EQ(xal_stream_create(cuda_, 0, &stream), XAL_SUCCESS);
  ASSERT_EQ(xal_event_create(cuda_, 0, &copied), XAL_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(queue_staged_copy(stream));
  ASSERT_EQ(xal_event_record(copied, stream), XAL_SUCCESS);
  {
    const Watchdog watchdog("xal_event_destroy", std::chrono::seconds(30));
    EXPECT_EQ(xal_event_destroy(copied), XAL_SUCCESS) << last_error().message;
  }
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(xal_stream_destroy(stream), XAL_SUCCESS);
  expect_copied();
}

// The same through a reset of the CUDA device (which destroys the stream),
// and staged copies to the device work afterwards (the staging stream the
// copy made while the reset released the device's objects went too, not
// left behind, dead, for the next copies).
TEST_F(CudaSimXalWithMock, ResettingTheDeviceWithAStagedCopyQueued) {
  xal_stream_t stream = nullptr;
  ASSERT_EQ(xal_stream_create(cuda_, 0, &stream), XAL_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(queue_staged_copy(stream));
  {
    const Watchdog watchdog("xal_device_reset", std::chrono::seconds(30));
    EXPECT_EQ(xal_device_reset(cuda_), XAL_SUCCESS) << last_error().message;
  }
  ASSERT_EQ(xal_mem_alloc(cuda_, kBytes, &dst_), XAL_SUCCESS) << last_error().message;
  for (size_t i = 0; i < kBytes; ++i) in_[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(xal_stream_create(cuda_, 0, &stream), XAL_SUCCESS);
  ASSERT_NO_FATAL_FAILURE(queue_staged_copy(stream));
  EXPECT_EQ(xal_stream_synchronize(stream), XAL_SUCCESS) << last_error().message;
  expect_copied();
}

// Run with XAL_CUDA_DRIVER=/nonexistent: the CUDA backend is listed as
// unavailable with the loader's reason and the other backends still load.
TEST(CudaXalNoDriver, UnavailableWithReasonOthersLoad) {
  if (std::getenv("XAL_CUDA_TEST_NO_DRIVER") == nullptr) {
    GTEST_SKIP() << "needs XAL_CUDA_TEST_NO_DRIVER and a missing driver";
  }
  ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS) << last_error().message;
  xal_backend_info_t cuda{};
  ASSERT_TRUE(find_backend("cuda", &cuda));
  EXPECT_EQ(cuda.state, XAL_BACKEND_STATE_UNAVAILABLE);
  EXPECT_EQ(cuda.status, XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(cuda.reason).find("cannot open shared object file"),
            std::string::npos)
      << cuda.reason;
  EXPECT_EQ(cuda.device_count, 0u);
  // Even without a driver, the listing says what the backend has run on.
  EXPECT_STREQ(cuda.note,
               "verified on an H200; multi-GPU paths on a simulated driver only");
  xal_backend_info_t mock{};
  if (find_backend("mock", &mock)) {
    EXPECT_EQ(mock.state, XAL_BACKEND_STATE_LOADED);
  }
  EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
}

}  // namespace
