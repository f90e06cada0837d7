// Group "copies": host to device, device to host, device to device, peer
// (same backend and across backends) and memset, for sizes 0, 1, 3, 4095,
// 1 MiB + 7 and 64 MiB at offsets inside allocations. Every byte of the
// allocation is checked, so writes outside the range are caught too.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"

namespace {

using conform::Suite;
constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kGuard = 512;  // bytes after the range that must not change

std::vector<size_t> sizes() { return {0, 1, 3, 4095, kMiB + 7, 64 * kMiB}; }

std::vector<size_t> offsets(size_t size) {
  if (size >= 64 * kMiB) {
    return Suite::get().quick() ? std::vector<size_t>{3} : std::vector<size_t>{0, 3};
  }
  return Suite::get().quick() ? std::vector<size_t>{0, 257}
                              : std::vector<size_t>{0, 3, 257};
}

std::string where(size_t size, size_t offset) {
  return "size " + conform::size_label(size) + ", offset " + std::to_string(offset);
}

// Writes `bytes` to `dst` on `stream` and waits.
std::string upload(xal_stream_t stream, xal_devptr_t dst,
                   const std::vector<uint8_t>& bytes) {
  xal_status_t s = xal_memcpy_htod(stream, dst, bytes.data(), bytes.size());
  if (s == XAL_SUCCESS) s = xal_stream_synchronize(stream);
  return s == XAL_SUCCESS ? "" : "upload: " + conform::describe(s);
}

std::string download(xal_stream_t stream, std::vector<uint8_t>& out,
                     xal_devptr_t src) {
  xal_status_t s = xal_memcpy_dtoh(stream, out.data(), src, out.size());
  if (s == XAL_SUCCESS) s = xal_stream_synchronize(stream);
  return s == XAL_SUCCESS ? "" : "download: " + conform::describe(s);
}

class Copies : public conform::DeviceTest {};

TEST_P(Copies, HostToDeviceToHost) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  for (size_t size : sizes()) {
    for (size_t offset : offsets(size)) {
      SCOPED_TRACE(where(size, offset));
      conform::DeviceBuffer buf(dev(), offset + size + kGuard);
      XAL_ASSERT_OK(buf.status());
      std::vector<uint8_t> expected(buf.bytes());
      conform::fill_pattern(expected, 1000 + size);
      ASSERT_EQ(upload(stream.get(), buf.ptr(), expected), "");
      std::vector<uint8_t> data(size);
      conform::fill_pattern(data, 7 + size + offset);
      XAL_ASSERT_OK(xal_memcpy_htod(stream.get(), buf.ptr() + offset, data.data(), size));
      XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
      if (size > 0) std::memcpy(expected.data() + offset, data.data(), size);
      std::vector<uint8_t> whole(buf.bytes());
      ASSERT_EQ(download(stream.get(), whole, buf.ptr()), "");
      auto diff = conform::first_mismatch(whole, expected);
      ASSERT_FALSE(diff) << "htod: " << *diff;
      // dtoh of just the range, into a host buffer with guards.
      std::vector<uint8_t> part(size + 2 * kGuard, 0xEE);
      XAL_ASSERT_OK(xal_memcpy_dtoh(stream.get(), part.data() + kGuard,
                                    buf.ptr() + offset, size));
      XAL_ASSERT_OK(xal_stream_synchronize(stream.get()));
      std::vector<uint8_t> want(size + 2 * kGuard, 0xEE);
      if (size > 0) std::memcpy(want.data() + kGuard, data.data(), size);
      diff = conform::first_mismatch(part, want);
      ASSERT_FALSE(diff) << "dtoh: " << *diff;
    }
  }
}

TEST_P(Copies, DeviceToDevice) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  for (size_t size : sizes()) {
    for (size_t offset : offsets(size)) {
      SCOPED_TRACE(where(size, offset));
      const size_t src_offset = (offset * 7) % 509;
      conform::DeviceBuffer src(dev(), src_offset + size + kGuard);
      conform::DeviceBuffer dst(dev(), offset + size + kGuard);
      XAL_ASSERT_OK(src.status());
      XAL_ASSERT_OK(dst.status());
      std::vector<uint8_t> src_bytes(src.bytes()), expected(dst.bytes());
      conform::fill_pattern(src_bytes, 31 + size);
      conform::fill_pattern(expected, 37 + size);
      ASSERT_EQ(upload(stream.get(), src.ptr(), src_bytes), "");
      ASSERT_EQ(upload(stream.get(), dst.ptr(), expected), "");
      XAL_ASSERT_OK(xal_memcpy_dtod(stream.get(), dst.ptr() + offset,
                                    src.ptr() + src_offset, size));
      if (size > 0) {
        std::memcpy(expected.data() + offset, src_bytes.data() + src_offset, size);
      }
      std::vector<uint8_t> whole(dst.bytes());
      ASSERT_EQ(download(stream.get(), whole, dst.ptr()), "");
      const auto diff = conform::first_mismatch(whole, expected);
      ASSERT_FALSE(diff) << "dtod: " << *diff;
    }
  }
}

TEST_P(Copies, Memset) {
  conform::Stream stream(dev());
  XAL_ASSERT_OK(stream.status());
  for (size_t size : sizes()) {
    for (size_t offset : offsets(size)) {
      SCOPED_TRACE(where(size, offset));
      conform::DeviceBuffer buf(dev(), offset + size + kGuard);
      XAL_ASSERT_OK(buf.status());
      std::vector<uint8_t> expected(buf.bytes());
      conform::fill_pattern(expected, 53 + size);
      ASSERT_EQ(upload(stream.get(), buf.ptr(), expected), "");
      const uint8_t value = static_cast<uint8_t>(0xA5 ^ size);
      XAL_ASSERT_OK(xal_memset(stream.get(), buf.ptr() + offset, value, size));
      if (size > 0) std::memset(expected.data() + offset, value, size);
      std::vector<uint8_t> whole(buf.bytes());
      ASSERT_EQ(download(stream.get(), whole, buf.ptr()), "");
      const auto diff = conform::first_mismatch(whole, expected);
      ASSERT_FALSE(diff) << "memset: " << *diff;
    }
  }
}

XAL_CONFORM_DEVICE_GROUP(copies, Copies);

// Peer copies from first() to second(), on a stream of either device.
class PeerCopies : public conform::PairTest {};

TEST_P(PeerCopies, AllSizes) {
  conform::Stream on_src(first().handle), on_dst(second().handle);
  XAL_ASSERT_OK(on_src.status());
  XAL_ASSERT_OK(on_dst.status());
  bool use_src_stream = true;
  for (size_t size : sizes()) {
    for (size_t offset : offsets(size)) {
      SCOPED_TRACE(where(size, offset) +
                   (use_src_stream ? ", source's stream" : ", destination's stream"));
      const size_t src_offset = (offset * 5) % 251;
      conform::DeviceBuffer src(first().handle, src_offset + size + kGuard);
      conform::DeviceBuffer dst(second().handle, offset + size + kGuard);
      XAL_ASSERT_OK(src.status());
      XAL_ASSERT_OK(dst.status());
      std::vector<uint8_t> src_bytes(src.bytes()), expected(dst.bytes());
      conform::fill_pattern(src_bytes, 71 + size);
      conform::fill_pattern(expected, 73 + size);
      ASSERT_EQ(upload(on_src.get(), src.ptr(), src_bytes), "");
      ASSERT_EQ(upload(on_dst.get(), dst.ptr(), expected), "");
      xal_stream_t stream = use_src_stream ? on_src.get() : on_dst.get();
      XAL_ASSERT_OK(xal_memcpy_peer(stream, second().handle, dst.ptr() + offset,
                                    first().handle, src.ptr() + src_offset, size));
      XAL_ASSERT_OK(xal_stream_synchronize(stream));
      if (size > 0) {
        std::memcpy(expected.data() + offset, src_bytes.data() + src_offset, size);
      }
      std::vector<uint8_t> whole(dst.bytes());
      ASSERT_EQ(download(on_dst.get(), whole, dst.ptr()), "");
      const auto diff = conform::first_mismatch(whole, expected);
      ASSERT_FALSE(diff) << "peer copy: " << *diff;
      use_src_stream = !use_src_stream;
    }
  }
}

XAL_CONFORM_PAIR_GROUP(copies, PeerCopies);

}  // namespace

namespace {

// A buffer travels around a set of devices (homogeneous and mixed) with peer
// copies queued back to back, each on the next device's stream after an
// event wait, and comes back unchanged.
class RingCopies : public conform::DeviceSetTest {};

TEST_P(RingCopies, AroundTheSet) {
  const size_t bytes = 8 * kMiB + 13;
  const auto& set = devices();
  std::vector<conform::DeviceBuffer> buffers;
  std::vector<std::unique_ptr<conform::Stream>> streams;
  std::vector<std::unique_ptr<conform::Event>> events;
  for (const auto* d : set) {
    buffers.emplace_back(d->handle, bytes);
    XAL_ASSERT_OK(buffers.back().status());
    streams.push_back(std::make_unique<conform::Stream>(d->handle));
    XAL_ASSERT_OK(streams.back()->status());
    events.push_back(std::make_unique<conform::Event>(d->handle));
    XAL_ASSERT_OK(events.back()->status());
  }
  std::vector<uint8_t> pattern(bytes), out(bytes);
  conform::fill_pattern(pattern, 4242);
  XAL_ASSERT_OK(xal_memcpy_htod(streams[0]->get(), buffers[0].ptr(), pattern.data(), bytes));
  XAL_ASSERT_OK(xal_event_record(events[0]->get(), streams[0]->get()));
  const size_t n = set.size();
  for (size_t hop = 1; hop <= n; ++hop) {
    const size_t from = hop - 1, to = hop % n;
    xal_stream_t stream = streams[to]->get();
    XAL_ASSERT_OK(xal_stream_wait_event(stream, events[from]->get()));
    XAL_ASSERT_OK(xal_memcpy_peer(stream, set[to]->handle, buffers[to].ptr(),
                                  set[from]->handle, buffers[from].ptr(), bytes));
    if (hop < n) XAL_ASSERT_OK(xal_event_record(events[to]->get(), stream));
  }
  XAL_ASSERT_OK(xal_memcpy_dtoh(streams[0]->get(), out.data(), buffers[0].ptr(), bytes));
  XAL_ASSERT_OK(xal_stream_synchronize(streams[0]->get()));
  const auto diff = conform::first_mismatch(out, pattern);
  EXPECT_FALSE(diff) << "after a ring of " << n << " peer copies: " << *diff;
}

XAL_CONFORM_SET_GROUP(copies, RingCopies);

}  // namespace
