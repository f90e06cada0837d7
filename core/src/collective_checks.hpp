// Argument checks of the collective and point-to-point entry points
// (api_collective.cpp, api_p2p.cpp, api_vcollective.cpp): handles, stream,
// dtype, op, root or peer, and buffer ranges through the registry. Each
// failure sets the calling thread's error detail. Thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

#include "runtime.hpp"

namespace xal::core {

// The value of an enum parameter as the caller passed it, without loading
// it as the enum type (a C caller may pass any 32-bit value).
template <class E>
uint32_t raw_value(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Checks the communicator, the stream, the dtype and (optionally) the op;
// notes the handles for a group (note_group_call).
xal_status_t check_call(xal_comm_t comm, xal_stream_t stream, const xal_dtype_t& dtype,
                        const xal_op_t* op, CommObj** out_c, StreamObj** out_s);

// Checks `elements` elements at `ptr` on the communicator's device.
xal_status_t check_buffer(CommObj* c, xal_devptr_t ptr, size_t elements, xal_dtype_t dtype,
                          const char* what);

// Counts a call in the device's metrics.
void note_call(CommObj* c, size_t bytes);

// `root` (or a peer, `what`) is a rank of the communicator.
xal_status_t root_check(CommObj* c, uint32_t root);

// The status of a collective of `c` queued on `s`; counted (`bytes`, the
// metrics) and traced (XAL_TRACE) only when it was queued.
xal_status_t queued(CommObj* c, size_t bytes, StreamObj* s, xal_status_t st, const char* name,
                    size_t count, xal_dtype_t dtype, int32_t op = -1);

// count * size, saturating at SIZE_MAX.
size_t scaled(size_t count, uint32_t size);

}  // namespace xal::core
