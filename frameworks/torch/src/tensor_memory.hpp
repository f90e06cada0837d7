// How one call's tensors reach the group's xal device, and where the call
// runs. Three ways, chosen per tensor:
//   - a CPU tensor on a device that imports host pointers (the mock, whose
//     memory is host memory): imported in place, zero copy;
//   - a CPU tensor on a device that cannot (a CUDA, HIP or Level Zero card):
//     staged, i.e. copied into device memory before the call and, for the
//     call's outputs, back after it;
//   - a tensor on the group's card itself (a CUDA tensor of the card the
//     rank runs on): its storage imported with xal_mem_import, and the call
//     queued on torch's current stream imported with xal_stream_import, so
//     that it runs after the work torch queued before it.
// A tensor on any other device (a CUDA tensor when the group runs on the
// mock, an XPU tensor, ...) is copied to the CPU first (staged_on_cpu) and
// back after the call.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Stream.h>

#include <optional>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace xal::torch_backend {

// The group's xal device and what it can do, read once.
struct GroupDevice {
  xal_device_t dev = nullptr;
  bool host_pointers = false;  // imports host memory (XAL_MEM_IMPORT_HOST)
  bool imports = false;        // imports device memory and streams
  std::string backend;         // "mock", "cuda", "hip", ...
  uint32_t backend_index = 0;  // its index within the backend
  static GroupDevice of(xal_device_t dev);
};

// Where one call's tensors live, decided in the caller's thread (torch's
// current stream is the calling thread's).
struct CallPlace {
  // The call's tensors are memory of the group's card (device pointers).
  bool device_memory = false;
  // torch's current stream of the tensors' device at the call (none for
  // CPU tensors); the worker makes it current while it runs the call.
  std::optional<c10::Stream> torch_stream;
  // Its native handle (cudaStream_t, hipStream_t), for xal_stream_import.
  uint64_t native_stream = 0;
};

// The place of a call over `tensors` on `dev`: device memory when the
// non-CPU tensors are on the card `dev` is (CUDA tensors of the card's index
// when dev's backend is "cuda" or "hip" -- a ROCm torch calls its devices
// "cuda" too -- and dev imports memory and streams), else host memory (the
// other tensors are staged through the CPU). Throws c10::Error naming `op` when the tensors
// are on two different cards.
CallPlace place_of(const GroupDevice& dev, const std::vector<at::Tensor>& tensors,
                   const char* op);

// `t` as the worker hands it to xal: itself when contiguous and on the CPU
// or (device_memory) on the group's card; else a contiguous copy (on the
// CPU for a tensor of another device). write_back copies a copy back.
at::Tensor dense_for(const at::Tensor& t, const CallPlace& place);
void write_back(at::Tensor& t, const at::Tensor& w);

// The device addresses of one call's tensors (made by dense_for), as above.
// `inputs` are read by the call, `outputs` written (a tensor may be both).
// Ranges that overlap (a view inside another tensor) are handled once.
// Staged inputs are copied in on `stream` by the constructor; copy_out
// copies staged outputs back after the call. The destructor frees staging
// and forgets imports. Used by one thread.
class TensorMemory {
 public:
  TensorMemory(const GroupDevice& dev, xal_stream_t stream, const CallPlace& place,
               const std::vector<const at::Tensor*>& inputs,
               const std::vector<const at::Tensor*>& outputs, const char* op_name);
  ~TensorMemory();
  TensorMemory(const TensorMemory&) = delete;
  TensorMemory& operator=(const TensorMemory&) = delete;

  // The device address of t.data_ptr() (t was passed to the constructor);
  // 0 for an empty tensor.
  xal_devptr_t ptr(const at::Tensor& t) const;
  // After the call's work on the stream: copies the staged outputs back to
  // their tensors and waits for it. Throws (throw_xal) on failure.
  void copy_out();
  // How many bytes this call staged (tests and benchmarks).
  size_t staged_bytes() const;

 private:
  enum class How { kImportHost, kImportDevice, kStaged };
  struct Range {
    uintptr_t begin, end;
    bool output;
    xal_devptr_t dev = 0;
    How how = How::kImportHost;
  };
  void release();

  xal_device_t dev_;
  xal_stream_t stream_;
  std::string op_;
  std::vector<Range> ranges_;
};

}  // namespace xal::torch_backend
