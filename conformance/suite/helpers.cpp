// Helpers of the conformance groups (see helpers.hpp).
#include "helpers.hpp"

#include <cstdio>
#include <cstring>
#include <utility>

namespace conform {

xal_error_info_t last_error() {
  xal_error_info_t info{};
  info.struct_size = sizeof(info);
  if (xal_last_error(&info) != XAL_SUCCESS) info.status = XAL_ERROR_INTERNAL;
  return info;
}

std::string describe(xal_status_t status) {
  std::string text = xal_status_name(status);
  if (status == XAL_SUCCESS || status == XAL_NOT_READY) return text;
  const xal_error_info_t info = last_error();
  if (info.status != status) return text + " (no matching error detail)";
  text += " (";
  text += info.operation[0] != '\0' ? info.operation : "?";
  if (info.backend[0] != '\0') text += std::string(", backend ") + info.backend;
  if (info.vendor_code != 0) {
    text += ", vendor code " + std::to_string(info.vendor_code);
    if (info.vendor_name[0] != '\0') text += std::string(" ") + info.vendor_name;
  }
  text += "): ";
  text += info.message;
  return text;
}

void fill_pattern(std::span<uint8_t> bytes, uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  const size_t words = bytes.size() / 8;
  uint8_t* out = bytes.data();
  for (size_t w = 0; w <= words; ++w) {
    // splitmix64, eight bytes at a time
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const size_t left = bytes.size() - w * 8;
    if (left == 0) break;
    std::memcpy(out + w * 8, &z, left < 8 ? left : 8);
  }
}

std::optional<std::string> first_mismatch(std::span<const uint8_t> actual,
                                          std::span<const uint8_t> expected) {
  if (actual.size() != expected.size()) {
    return "sizes differ: " + std::to_string(actual.size()) + " vs " +
           std::to_string(expected.size());
  }
  if (actual.empty() ||
      std::memcmp(actual.data(), expected.data(), actual.size()) == 0) {
    return std::nullopt;
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i]) {
      size_t count = 0;
      for (size_t j = i; j < actual.size(); ++j) count += actual[j] != expected[j];
      char text[160];
      std::snprintf(text, sizeof(text),
                    "byte %zu is 0x%02x, expected 0x%02x (%zu of %zu bytes "
                    "differ)",
                    i, actual[i], expected[i], count, actual.size());
      return std::string(text);
    }
  }
  return std::nullopt;
}

DeviceBuffer::DeviceBuffer(xal_device_t device, size_t bytes)
    : device_(device), bytes_(bytes),
      status_(xal_mem_alloc(device, bytes, &ptr_)) {
  if (status_ != XAL_SUCCESS) ptr_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(other.device_), bytes_(other.bytes_),
      ptr_(std::exchange(other.ptr_, 0)), status_(other.status_) {}

DeviceBuffer::~DeviceBuffer() { release(); }

xal_status_t DeviceBuffer::release() {
  if (ptr_ == 0) return XAL_SUCCESS;
  const xal_status_t s = xal_mem_free(device_, ptr_);
  ptr_ = 0;
  return s;
}

HostBuffer::HostBuffer(size_t bytes)
    : bytes_(bytes), status_(xal_host_alloc(bytes, XAL_HOST_ALLOC_DEFAULT, &ptr_)) {
  if (status_ != XAL_SUCCESS) ptr_ = nullptr;
}

HostBuffer::~HostBuffer() {
  if (ptr_ != nullptr) xal_host_free(ptr_);
}

Stream::Stream(xal_device_t device, uint32_t flags)
    : status_(xal_stream_create(device, flags, &stream_)) {
  if (status_ != XAL_SUCCESS) stream_ = nullptr;
}

Stream::~Stream() { release(); }

xal_status_t Stream::release() {
  if (stream_ == nullptr) return XAL_SUCCESS;
  const xal_status_t s = xal_stream_destroy(stream_);
  stream_ = nullptr;
  return s;
}

Event::Event(xal_device_t device, uint32_t flags)
    : status_(xal_event_create(device, flags, &event_)) {
  if (status_ != XAL_SUCCESS) event_ = nullptr;
}

Event::~Event() { release(); }

xal_status_t Event::release() {
  if (event_ == nullptr) return XAL_SUCCESS;
  const xal_status_t s = xal_event_destroy(event_);
  event_ = nullptr;
  return s;
}

std::string round_trip(xal_device_t device, size_t bytes) {
  DeviceBuffer buffer(device, bytes);
  if (buffer.status() != XAL_SUCCESS) {
    return "xal_mem_alloc: " + describe(buffer.status());
  }
  Stream stream(device);
  if (stream.status() != XAL_SUCCESS) {
    return "xal_stream_create: " + describe(stream.status());
  }
  std::vector<uint8_t> in(bytes), out(bytes, 0);
  fill_pattern(in, bytes);
  xal_status_t s = xal_memcpy_htod(stream.get(), buffer.ptr(), in.data(), bytes);
  if (s != XAL_SUCCESS) return "xal_memcpy_htod: " + describe(s);
  s = xal_memcpy_dtoh(stream.get(), out.data(), buffer.ptr(), bytes);
  if (s != XAL_SUCCESS) return "xal_memcpy_dtoh: " + describe(s);
  s = xal_stream_synchronize(stream.get());
  if (s != XAL_SUCCESS) return "xal_stream_synchronize: " + describe(s);
  if (auto diff = first_mismatch(out, in)) return "round trip: " + *diff;
  return {};
}

std::string size_label(size_t bytes) {
  constexpr size_t kMiB = 1024 * 1024;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes > kMiB) {
    return std::to_string(bytes / kMiB) + " MiB + " + std::to_string(bytes % kMiB);
  }
  return std::to_string(bytes) + " B";
}

}  // namespace conform
