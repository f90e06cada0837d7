// HostView: host memory of a Python object that speaks the buffer protocol
// (bytes, bytearray, memoryview, numpy arrays, ...), held exported for as
// long as the view lives: a copy queued on a stream keeps its HostView until
// the stream is synchronised, so the memory can neither go nor move.
#pragma once

#include "session.hpp"

namespace xalpy {

class HostView {
 public:
  // C-contiguous memory of `obj`; writable when `writable`. Raises
  // InvalidArgument when the object cannot give that.
  HostView(nb::handle obj, bool writable);
  ~HostView();
  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;

  void* data() const { return view_.buf; }
  size_t nbytes() const { return static_cast<size_t>(view_.len); }
  bool readonly() const { return view_.readonly != 0; }
  // Checks that [offset, offset + bytes) lies inside the view.
  void check_range(const char* operation, size_t offset, size_t bytes) const;

 private:
  Py_buffer view_{};
};

void bind_host_view(nb::module_& m);

}  // namespace xalpy
