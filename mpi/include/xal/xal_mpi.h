/* xal_mpi.h: communicators across processes over MPI (libxal_mpi).
 *
 * Link with -lxal_mpi -lxal and MPI. MPI must be initialised with at least
 * MPI_THREAD_SERIALIZED: the step between processes runs on xal's stream
 * worker threads. Under MPI_THREAD_MULTIPLE libxal_mpi calls MPI freely;
 * under MPI_THREAD_SERIALIZED it serialises its own MPI calls with a
 * process-wide mutex, and the application must not call MPI itself while
 * collectives of these communicators are in flight (synchronise their
 * streams first). */
#ifndef XAL_MPI_H
#define XAL_MPI_H

#include <mpi.h>

#include <xal/xal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over `comm`: every process calls it with its own devices (n >=
 * 1, each listed once). Makes one communicator per local device, ordered by
 * (MPI rank in comm, local index): local device i of MPI rank p has global
 * rank (devices of ranks < p) + i; the size is the sum over every process.
 * xal_comm_get_info reports XAL_COMM_PATH_MPI. `out_comms` has room for n;
 * each comm is owned by the caller (xal_comm_destroy, before MPI_Finalize).
 *
 * Every collective of xal.h works on them, ordered on the caller's stream;
 * the local ranks meet in host memory and one leader per process exchanges
 * with MPI's non-blocking collectives. xal_send/xal_recv (and the
 * v-collectives, gather, scatter) to a rank of another process are
 * MPI_Isend / matched-probe receives on libxal_mpi's own communicator;
 * xal_comm_split/xal_comm_dup use MPI_Comm_split (every local rank of a
 * process must choose the same color). Timeout (options->timeout_ms, else
 * XAL_COMM_TIMEOUT_MS, else 300 s): a process that does not arrive gives
 * XAL_ERROR_TIMEOUT on the others (the async error, and every later call),
 * never a hang; xal_comm_abort gives XAL_ERROR_ABORTED. Both break the
 * communicator for good. Creation itself waits at most the timeout.
 *
 * Errors: XAL_ERROR_NOT_INITIALIZED (MPI or xal not initialised),
 * XAL_ERROR_NOT_SUPPORTED (MPI thread level below SERIALIZED),
 * XAL_ERROR_INVALID_ARGUMENT (MPI_COMM_NULL, n = 0, a device listed twice,
 * or bad arguments on another process), XAL_ERROR_INVALID_HANDLE,
 * XAL_ERROR_TIMEOUT. Thread-safe as MPI's thread level allows. */
__attribute__((visibility("default"))) xal_status_t xal_comm_create_mpi(
    MPI_Comm comm, const xal_device_t* local_devices, uint32_t n,
    const xal_comm_options_t* options, xal_comm_t* out_comms);

#ifdef __cplusplus
}
#endif

#endif /* XAL_MPI_H */
