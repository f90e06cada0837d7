// Helpers of the conformance groups: status assertions that show
// xal_last_error, "unsupported" skips, RAII owners of xal objects and byte
// patterns.
#pragma once

#include <gtest/gtest.h>
#include <xal/xal.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace conform {

// Skip messages that start with this are reported as "unsupported".
inline constexpr const char* kUnsupported = "unsupported: ";

// "XAL_ERROR_X (op, backend, vendor code): message" for the calling
// thread's last error. Not thread-safe across threads (per-thread detail).
std::string describe(xal_status_t status);

// The calling thread's last error detail.
xal_error_info_t last_error();

// Byte patterns: a deterministic pseudo-random sequence per seed.
void fill_pattern(std::span<uint8_t> bytes, uint64_t seed);
// Describes the first difference of two equal-sized spans, or nullopt.
std::optional<std::string> first_mismatch(std::span<const uint8_t> actual,
                                          std::span<const uint8_t> expected);

// Owners; each records the status of its creating call in status().
class DeviceBuffer {
 public:
  DeviceBuffer(xal_device_t device, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  xal_status_t status() const { return status_; }
  xal_devptr_t ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // Frees now; returns the xal_mem_free status (SUCCESS if nothing held).
  xal_status_t release();

 private:
  xal_device_t device_;
  size_t bytes_;
  xal_devptr_t ptr_ = 0;
  xal_status_t status_;
};

// Page-locked host memory from xal_host_alloc.
class HostBuffer {
 public:
  explicit HostBuffer(size_t bytes);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  xal_status_t status() const { return status_; }
  uint8_t* data() const { return static_cast<uint8_t*>(ptr_); }
  size_t size() const { return bytes_; }
  std::span<uint8_t> span() const { return {data(), bytes_}; }

 private:
  size_t bytes_;
  void* ptr_ = nullptr;
  xal_status_t status_;
};

class Stream {
 public:
  explicit Stream(xal_device_t device, uint32_t flags = XAL_STREAM_DEFAULT);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  xal_status_t status() const { return status_; }
  xal_stream_t get() const { return stream_; }
  // Destroys now and returns the status.
  xal_status_t release();

 private:
  xal_stream_t stream_ = nullptr;
  xal_status_t status_;
};

class Event {
 public:
  explicit Event(xal_device_t device, uint32_t flags = XAL_EVENT_DEFAULT);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  xal_status_t status() const { return status_; }
  xal_event_t get() const { return event_; }
  xal_status_t release();

 private:
  xal_event_t event_ = nullptr;
  xal_status_t status_;
};

// Copies a pattern to `device` and back through a fresh stream and checks
// it: proof that the device still works. Returns an empty string on
// success, else what went wrong.
std::string round_trip(xal_device_t device, size_t bytes = 4096);

// Human-readable byte size for messages ("1 MiB + 7").
std::string size_label(size_t bytes);

}  // namespace conform

// Asserts that `expr` returns XAL_SUCCESS; shows the last error otherwise.
#define XAL_ASSERT_OK(expr)                                             \
  do {                                                                  \
    const xal_status_t xal_s_ = (expr);                                 \
    ASSERT_TRUE(xal_s_ == XAL_SUCCESS)                                  \
        << #expr << " returned " << conform::describe(xal_s_);          \
  } while (0)

#define XAL_EXPECT_OK(expr)                                             \
  do {                                                                  \
    const xal_status_t xal_s_ = (expr);                                 \
    EXPECT_TRUE(xal_s_ == XAL_SUCCESS)                                  \
        << #expr << " returned " << conform::describe(xal_s_);          \
  } while (0)

// Like XAL_ASSERT_OK, but XAL_ERROR_NOT_SUPPORTED reports the test as
// unsupported instead of failed.
#define XAL_ASSERT_OK_OR_UNSUPPORTED(expr)                              \
  do {                                                                  \
    const xal_status_t xal_s_ = (expr);                                 \
    if (xal_s_ == XAL_ERROR_NOT_SUPPORTED) {                            \
      GTEST_SKIP() << conform::kUnsupported << #expr << ": "            \
                   << conform::describe(xal_s_);                        \
    }                                                                   \
    ASSERT_TRUE(xal_s_ == XAL_SUCCESS)                                  \
        << #expr << " returned " << conform::describe(xal_s_);          \
  } while (0)

// Checks that `expr` fails with exactly `expected` and leaves a non-empty
// message in xal_last_error.
#define XAL_EXPECT_STATUS(expr, expected)                               \
  do {                                                                  \
    const xal_status_t xal_s_ = (expr);                                 \
    EXPECT_TRUE(xal_s_ == (expected))                                   \
        << #expr << " returned " << conform::describe(xal_s_)           \
        << ", expected " << xal_status_name(expected);                  \
    if (xal_s_ == (expected) && xal_s_ < 0) {                           \
      const xal_error_info_t xal_e_ = conform::last_error();            \
      EXPECT_EQ(xal_e_.status, (expected))                              \
          << #expr << ": xal_last_error has another status";            \
      EXPECT_STRNE(xal_e_.message, "")                                  \
          << #expr << ": xal_last_error has no message";                \
    }                                                                   \
  } while (0)

// Reports the running test as unsupported.
#define XAL_CONFORM_UNSUPPORTED(why) \
  GTEST_SKIP() << conform::kUnsupported << why
