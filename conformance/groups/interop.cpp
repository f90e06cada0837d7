// Group "interop" (ABI 1.1): memory and streams a framework owns, imported
// with xal_mem_import and xal_stream_import, host registration and IPC
// handles. "The framework" is played by the backend's own table (the suite
// may call it directly): its memory and streams are unknown to xal until
// imported. A device without the capability reports the test unsupported.
#include <cstring>
#include <numeric>
#include <vector>

#include "conform.hpp"
#include "helpers.hpp"
#include "xal/xal_backend.h"

namespace {

// Memory and a stream made through the backend's table, as a framework
// makes them through the vendor API; released the same way.
class NativeObjects {
 public:
  explicit NativeObjects(xal_device_t dev) {
    void* native = nullptr;
    status_ = xal_handle_get_native(dev, &t_, &native);
    dev_ = static_cast<xal_bdevice_t*>(native);
  }
  ~NativeObjects() {
    if (stream_) t_->stream_destroy(stream_);
    for (xal_devptr_t p : allocs_) t_->mem_free(dev_, p);
  }
  NativeObjects(const NativeObjects&) = delete;
  NativeObjects& operator=(const NativeObjects&) = delete;
  xal_status_t status() const { return status_; }
  xal_status_t alloc(size_t bytes, xal_devptr_t* out) {
    const xal_status_t s = t_->mem_alloc(dev_, bytes, out);
    if (s == XAL_SUCCESS) allocs_.push_back(*out);
    return s;
  }
  xal_status_t make_stream() { return t_->stream_create(dev_, 0, &stream_); }
  uint64_t stream_handle() const { return reinterpret_cast<uintptr_t>(stream_); }
  // Reads device memory through the backend, on its own stream.
  xal_status_t read(void* dst, xal_devptr_t src, size_t bytes) {
    xal_status_t s = t_->memcpy_dtoh(stream_, dst, src, bytes);
    return s == XAL_SUCCESS ? t_->stream_synchronize(stream_) : s;
  }

 private:
  const xal_backend_table_t* t_ = nullptr;
  xal_bdevice_t* dev_ = nullptr;
  xal_bstream_t* stream_ = nullptr;
  std::vector<xal_devptr_t> allocs_;
  xal_status_t status_;
};

class Interop : public conform::DeviceTest {};

// Reports the test unsupported (from the test body) without the capability.
#define XAL_INTEROP_REQUIRE(cap, what) \
  if (!(props().capabilities & (cap))) XAL_CONFORM_UNSUPPORTED(what)

TEST_P(Interop, ImportedMemoryTakesCopiesAndStaysTheOwners) {
  XAL_INTEROP_REQUIRE(XAL_DEVICE_CAP_MEM_IMPORT, "no xal_mem_import");
  NativeObjects fw(dev());
  XAL_ASSERT_OK(fw.status());
  XAL_ASSERT_OK(fw.make_stream());
  const size_t n = 64 * 1024 + 3;
  xal_devptr_t native = 0, p = 0;
  XAL_ASSERT_OK(fw.alloc(n, &native));
  XAL_ASSERT_OK(xal_mem_import(dev(), native, n, 0, &p));
  conform::Stream s(dev());
  XAL_ASSERT_OK(s.status());
  std::vector<uint8_t> in(n), out(n);
  std::iota(in.begin(), in.end(), uint8_t{11});
  XAL_ASSERT_OK(xal_memcpy_htod(s.get(), p, in.data(), n));
  XAL_ASSERT_OK(xal_memset(s.get(), p + 7, 0xee, 100));
  XAL_ASSERT_OK(xal_stream_synchronize(s.get()));
  std::memset(in.data() + 7, 0xee, 100);
  XAL_ASSERT_OK(fw.read(out.data(), native, n));
  EXPECT_EQ(in, out) << "the framework does not read what xal wrote to its memory";
  XAL_EXPECT_STATUS(xal_memcpy_dtoh(s.get(), out.data(), p + 1, n), XAL_ERROR_OUT_OF_BOUNDS);
  XAL_ASSERT_OK(xal_mem_free(dev(), p));  // forgets the import only
  XAL_ASSERT_OK(fw.read(out.data(), native, n));
  EXPECT_EQ(in, out) << "xal_mem_free of an import changed the owner's memory";
}

TEST_P(Interop, ImportRefusesBadInput) {
  XAL_INTEROP_REQUIRE(XAL_DEVICE_CAP_MEM_IMPORT, "no xal_mem_import");
  xal_devptr_t p = 0;
  XAL_EXPECT_STATUS(xal_mem_import(dev(), 0, 64, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_import(dev(), 0x10000, 0, 0, &p), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_import(dev(), 0x10000, 64, 0x8000, &p), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_import(dev(), 0x10000, 64, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  // Memory xal allocated itself is already known: an overlap.
  conform::DeviceBuffer owned(dev(), 4096);
  XAL_ASSERT_OK(owned.status());
  XAL_EXPECT_STATUS(xal_mem_import(dev(), owned.ptr() + 256, 64, 0, &p),
                    XAL_ERROR_INVALID_ARGUMENT);
  // Host memory that is not the device's, without the host flag: refused
  // where the device can tell (a handle-based API, OpenCL's cl_mem or a
  // Level Zero object, must be given a live object, as the vendor's own
  // calls must; pointer-based devices check it).
  if (props().capabilities & XAL_DEVICE_CAP_HOST_POINTERS) {
    std::vector<uint8_t> host(4096);
    XAL_EXPECT_STATUS(xal_mem_import(dev(), reinterpret_cast<uintptr_t>(host.data()),
                                     host.size(), 0, &p),
                      XAL_ERROR_INVALID_ARGUMENT);
  }
  // The device still works.
  conform::Stream s(dev());
  XAL_ASSERT_OK(s.status());
  XAL_ASSERT_OK(xal_memset(s.get(), owned.ptr(), 1, 4096));
  XAL_ASSERT_OK(xal_stream_synchronize(s.get()));
}

TEST_P(Interop, ImportedStreamOrdersWorkAndStaysTheOwners) {
  XAL_INTEROP_REQUIRE(XAL_DEVICE_CAP_STREAM_IMPORT, "no xal_stream_import");
  NativeObjects fw(dev());
  XAL_ASSERT_OK(fw.status());
  XAL_ASSERT_OK(fw.make_stream());
  xal_stream_t s = nullptr;
  XAL_ASSERT_OK(xal_stream_import(dev(), fw.stream_handle(), 0, &s));
  conform::DeviceBuffer buf(dev(), 1 << 20);
  XAL_ASSERT_OK(buf.status());
  for (int i = 0; i < 8; ++i)
    XAL_ASSERT_OK(xal_memset(s, buf.ptr(), static_cast<uint8_t>(i), buf.bytes()));
  std::vector<uint8_t> out(buf.bytes());
  XAL_ASSERT_OK(xal_memcpy_dtoh(s, out.data(), buf.ptr(), buf.bytes()));
  XAL_ASSERT_OK(xal_stream_synchronize(s));
  EXPECT_EQ(out.front(), 7);
  EXPECT_EQ(out.back(), 7);
  XAL_ASSERT_OK(xal_stream_destroy(s));
  // The framework's stream is alive: it still runs its work.
  XAL_ASSERT_OK(fw.read(out.data(), buf.ptr(), 16));
  EXPECT_EQ(out[0], 7);
  xal_stream_t bad = nullptr;
  XAL_EXPECT_STATUS(xal_stream_import(dev(), 0, 0, &bad), XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_stream_import(dev(), fw.stream_handle(), 5, &bad),
                    XAL_ERROR_INVALID_ARGUMENT);
}

TEST_P(Interop, HostRegistration) {
  std::vector<uint8_t> host(256 * 1024, 3);
  XAL_ASSERT_OK(xal_host_register(host.data(), host.size(), 0));
  XAL_EXPECT_STATUS(xal_host_register(host.data() + 64, 64, 0), XAL_ERROR_INVALID_ARGUMENT);
  conform::DeviceBuffer buf(dev(), host.size());
  conform::Stream s(dev());
  XAL_ASSERT_OK(buf.status());
  XAL_ASSERT_OK(s.status());
  XAL_ASSERT_OK(xal_memcpy_htod(s.get(), buf.ptr(), host.data(), host.size()));
  XAL_ASSERT_OK(xal_memset(s.get(), buf.ptr(), 9, 4));
  XAL_ASSERT_OK(xal_memcpy_dtoh(s.get(), host.data(), buf.ptr(), host.size()));
  XAL_ASSERT_OK(xal_stream_synchronize(s.get()));
  EXPECT_EQ(host[0], 9);
  EXPECT_EQ(host[4], 3);
  XAL_ASSERT_OK(xal_host_unregister(host.data()));
  XAL_EXPECT_STATUS(xal_host_unregister(host.data()), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_P(Interop, IpcHandleOfAnAllocation) {
  XAL_INTEROP_REQUIRE(XAL_DEVICE_CAP_IPC, "no IPC handles");
  conform::DeviceBuffer buf(dev(), 8192);
  XAL_ASSERT_OK(buf.status());
  xal_ipc_handle_t h{};
  XAL_ASSERT_OK(xal_mem_get_ipc_handle(dev(), buf.ptr(), &h));
  // Not the start of an allocation; the exporting process itself.
  XAL_EXPECT_STATUS(xal_mem_get_ipc_handle(dev(), buf.ptr() + 256, &h),
                    XAL_ERROR_INVALID_ARGUMENT);
  xal_devptr_t p = 0;
  XAL_EXPECT_STATUS(xal_mem_open_ipc_handle(dev(), &h, 0, &p, nullptr),
                    XAL_ERROR_INVALID_ARGUMENT);
  xal_ipc_handle_t junk{};
  std::memset(junk.bytes, 0x5a, sizeof junk.bytes);
  XAL_EXPECT_STATUS(xal_mem_open_ipc_handle(dev(), &junk, 0, &p, nullptr),
                    XAL_ERROR_INVALID_ARGUMENT);
  XAL_EXPECT_STATUS(xal_mem_close_ipc_handle(dev(), buf.ptr()), XAL_ERROR_INVALID_ARGUMENT);
}

XAL_CONFORM_DEVICE_GROUP(interop, Interop);

// An allreduce in place on imported memory and imported streams, over every
// device set (homogeneous and mixed).
class InteropSet : public conform::DeviceSetTest {};

TEST_P(InteropSet, AllreduceInPlaceOnImportedMemoryAndStreams) {
  const auto& ds = devices();
  for (const auto* d : ds) {
    if (!(d->props.capabilities & XAL_DEVICE_CAP_MEM_IMPORT) ||
        !(d->props.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT))
      XAL_CONFORM_UNSUPPORTED("a device of the set cannot import memory and streams");
  }
  const size_t count = 4099;
  std::vector<std::unique_ptr<NativeObjects>> fw;
  std::vector<xal_devptr_t> natives, ptrs;
  std::vector<xal_stream_t> streams;
  std::vector<xal_device_t> handles;
  // Host inputs outlive the asynchronous copies (until the synchronize).
  std::vector<std::vector<int32_t>> inputs(ds.size(), std::vector<int32_t>(count));
  for (size_t r = 0; r < ds.size(); ++r) {
    fw.push_back(std::make_unique<NativeObjects>(ds[r]->handle));
    XAL_ASSERT_OK(fw.back()->status());
    XAL_ASSERT_OK(fw.back()->make_stream());
    xal_devptr_t native = 0, p = 0;
    XAL_ASSERT_OK(fw.back()->alloc(count * 4, &native));
    XAL_ASSERT_OK(xal_mem_import(ds[r]->handle, native, count * 4, 0, &p));
    xal_stream_t s = nullptr;
    XAL_ASSERT_OK(xal_stream_import(ds[r]->handle, fw.back()->stream_handle(), 0, &s));
    std::vector<int32_t>& v = inputs[r];
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<int32_t>(i % 1000) + static_cast<int32_t>(r);
    XAL_ASSERT_OK(xal_memcpy_htod(s, p, v.data(), count * 4));
    natives.push_back(native);
    ptrs.push_back(p);
    streams.push_back(s);
    handles.push_back(ds[r]->handle);
  }
  std::vector<xal_comm_t> comms(ds.size());
  XAL_ASSERT_OK(xal_comm_create(handles.data(), static_cast<uint32_t>(ds.size()), nullptr,
                                comms.data()));
  XAL_ASSERT_OK(xal_group_start());
  for (size_t r = 0; r < ds.size(); ++r)
    XAL_EXPECT_OK(xal_allreduce(comms[r], ptrs[r], ptrs[r], count, XAL_DTYPE_I32, XAL_OP_SUM,
                                streams[r]));
  XAL_ASSERT_OK(xal_group_end());
  const int32_t n = static_cast<int32_t>(ds.size());
  for (size_t r = 0; r < ds.size(); ++r) {
    XAL_ASSERT_OK(xal_stream_synchronize(streams[r]));
    std::vector<int32_t> out(count);
    XAL_ASSERT_OK(fw[r]->read(out.data(), natives[r], count * 4));
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(out[i], n * static_cast<int32_t>(i % 1000) + n * (n - 1) / 2)
          << "rank " << r << " element " << i;
  }
  for (size_t r = 0; r < ds.size(); ++r) {
    xal_comm_abort(comms[r]);
    XAL_ASSERT_OK(xal_comm_destroy(comms[r]));
    XAL_ASSERT_OK(xal_stream_destroy(streams[r]));
    XAL_ASSERT_OK(xal_mem_free(handles[r], ptrs[r]));
  }
}

XAL_CONFORM_SET_GROUP(interop, InteropSet);

}  // namespace
