/* xal_transport.h: communicators that span processes.
 *
 * A library that moves bytes between processes (libxal_mpi with MPI) fills
 * an xal_comm_transport_t and calls xal_comm_create_transport with the
 * devices of the calling process. Every process calls it collectively with
 * the same transport kind; the result is one communicator per local device,
 * whose global rank is (sum of the ranks of the processes before this one) +
 * local index, and whose size is the sum over every process.
 *
 * Each collective then runs in three steps inside a host function queued on
 * the caller's stream: the local ranks meet in host memory, the local leader
 * (local index 0) calls the transport for the step between processes, and
 * the results go back to every local rank.
 *
 * Transport functions are called from stream worker threads, by one leader
 * thread per communicator at a time; two communicators of one process may
 * call concurrently. Each must return within `timeout_ms` (XAL_ERROR_TIMEOUT
 * then) and return XAL_ERROR_ABORTED soon after `abort` was called. On
 * failure they write a NUL-terminated reason into `message` (`message_size`
 * bytes). Byte counts, displacements and counts are per process.
 *
 * Versions: the table only grows at its end. xal reads struct_size bytes of
 * it (at least up to and including `release`) and treats entries beyond
 * struct_size as NULL, so a transport built against an older header keeps
 * working. */
#ifndef XAL_TRANSPORT_H
#define XAL_TRANSPORT_H

#include "xal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xal_comm_transport_t {
  size_t struct_size;
  void* user; /* passed back to every function */
  uint32_t process_rank;  /* this process, in [0, process_count) */
  uint32_t process_count; /* >= 1 */
  /* process_count entries: devices (ranks) of each process, each >= 1.
   * Copied by xal_comm_create_transport. */
  const uint32_t* ranks_per_process;

  /* recv[i] = op over processes of send[i], i < count. send may equal recv.
   * op is never XAL_OP_AVG (the core divides). */
  xal_status_t (*allreduce)(void* user, const void* send, void* recv,
                            size_t count, xal_dtype_t dtype, xal_op_t op,
                            uint32_t timeout_ms, char* message,
                            size_t message_size);
  /* buf (bytes) of process root_process is copied to every other's buf
   * (only read on root_process). */
  xal_status_t (*broadcast)(void* user, void* buf, size_t bytes,
                            uint32_t root_process, uint32_t timeout_ms,
                            char* message, size_t message_size);
  /* In place: process p's recv_bytes[p] bytes at recv + displs[p] go to
   * every process at the same place. */
  xal_status_t (*allgatherv)(void* user, void* recv, const size_t* recv_bytes,
                             const size_t* displs, uint32_t timeout_ms,
                             char* message, size_t message_size);
  /* send_bytes[q] bytes at send + send_displs[q] go to process q, which
   * receives them at recv + recv_displs[p] (recv_bytes[p] bytes from p). */
  xal_status_t (*alltoallv)(void* user, const void* send,
                            const size_t* send_bytes, const size_t* send_displs,
                            void* recv, const size_t* recv_bytes,
                            const size_t* recv_displs, uint32_t timeout_ms,
                            char* message, size_t message_size);
  /* Makes pending and later calls return XAL_ERROR_ABORTED. Any thread. */
  void (*abort)(void* user);
  /* Called once when the last communicator of the set is destroyed; may be
   * NULL. Not called when xal_comm_create_transport fails: the caller
   * keeps the transport then (and releases it itself). */
  void (*release)(void* user);

  /* Added after the first version: a transport built against an older
   * header has a smaller struct_size and lacks the entries below; xal then,
   * as when an entry is NULL, runs reduce and reduce_scatter as an
   * allreduce between processes. */

  /* On process root_process: recv[i] = op over processes of send[i],
   * i < count. recv is only written on root_process (it may be NULL
   * elsewhere). send may equal recv. op is never XAL_OP_AVG. */
  xal_status_t (*reduce)(void* user, const void* send, void* recv, size_t count,
                         xal_dtype_t dtype, xal_op_t op, uint32_t root_process,
                         uint32_t timeout_ms, char* message, size_t message_size);
  /* send holds one block per process, in process order, block p being
   * recv_counts[p] elements (process_count entries); recv
   * (recv_counts[process_rank] elements) = op over processes of this
   * process's block. send and recv do not overlap. op is never
   * XAL_OP_AVG. */
  xal_status_t (*reduce_scatter)(void* user, const void* send, void* recv,
                                 const size_t* recv_counts, xal_dtype_t dtype,
                                 xal_op_t op, uint32_t timeout_ms, char* message,
                                 size_t message_size);

  /* Added in ABI 1.1 (point-to-point and split): a transport built against
   * an older header lacks them; xal then, as when an entry is NULL, returns
   * XAL_ERROR_NOT_SUPPORTED with a message from xal_send, xal_recv, the
   * v-collectives and gather/scatter when a peer is in another process, and
   * from xal_comm_split / xal_comm_dup. Unlike the entries above, send and
   * recv may be called by several threads of one process at a time (each
   * local rank's stream, and one thread per message of a group), and a
   * process may have several sends and receives pending at once; each call
   * blocks until its message is complete, the timeout passes (TIMEOUT), or
   * abort was called (ABORTED). */

  /* bytes from this process to process `peer_process`; `tag` identifies the
   * pair of global ranks and the call's sequence (matching is by
   * (peer_process, tag)). A receive whose size differs from the matching
   * send's fails with XAL_ERROR_COLLECTIVE_MISMATCH (the send may succeed
   * or fail likewise). */
  xal_status_t (*send)(void* user, const void* buf, size_t bytes,
                       uint32_t peer_process, uint64_t tag, uint32_t timeout_ms,
                       char* message, size_t message_size);
  xal_status_t (*recv)(void* user, void* buf, size_t bytes,
                       uint32_t peer_process, uint64_t tag, uint32_t timeout_ms,
                       char* message, size_t message_size);
  /* Collective over every process: a child transport over the processes of
   * this process's `color` (ordered by key, then process rank); color < 0:
   * *out_child stays zeroed. The child is a complete table of its own
   * (process_rank and process_count within the child; ranks_per_process:
   * the parent's entries of the child's processes, in child order, valid
   * until the child's release) with its own abort and release, independent
   * of the parent. The caller owns it: xal hands it to
   * xal_comm_create_transport, or calls its release. */
  xal_status_t (*split)(void* user, int32_t color, int32_t key,
                        struct xal_comm_transport_t* out_child, char* message,
                        size_t message_size);
} xal_comm_transport_t;

/* Creates one communicator per local device over a transport; see above.
 * `out_comms` has room for `n`; each comm is owned by the caller
 * (xal_comm_destroy). On success the communicators own the transport
 * (`release` runs after the last is destroyed); on failure the caller keeps
 * it (`release` is not called). Thread-safe. */
XAL_API xal_status_t xal_comm_create_transport(
    const xal_device_t* devs, uint32_t n, const xal_comm_options_t* options,
    const xal_comm_transport_t* transport, xal_comm_t* out_comms);

/* Records a failure of a transport library's own entry point (operation,
 * e.g. "xal_comm_create_mpi") as the calling thread's last error, so that
 * xal_last_error reports it like libxal's. Returns `status` (a negative
 * xal_status_t; anything else gives XAL_ERROR_INVALID_ARGUMENT). The strings
 * are copied. Thread-safe. */
XAL_API xal_status_t xal_transport_set_error(const char* operation,
                                             xal_status_t status,
                                             const char* message);

#ifdef __cplusplus
}
#endif

#endif /* XAL_TRANSPORT_H */
