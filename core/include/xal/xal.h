/*
 * xal.h -- the stable C ABI of xal, the heterogeneous accelerator
 * abstraction layer.
 *
 * Rules (docs/ABI.md has the full policy):
 *  - C99. Every function returns xal_status_t unless its comment says
 *    otherwise. XAL_SUCCESS is 0, errors are negative, XAL_NOT_READY (1) is
 *    the one positive non-error. Outputs come last and are named out_*.
 *  - Handles are pointers to incomplete structs. A NULL, destroyed or
 *    wrong-kind handle gives XAL_ERROR_INVALID_HANDLE, never a crash. Do
 *    not destroy an object while another thread's call on it is running.
 *  - Every struct that crosses the ABI starts with `size_t struct_size`,
 *    which the caller sets to sizeof(the struct it was compiled with).
 *    Structs only ever grow at the end.
 *  - Every function may be called from any thread. Work submitted to one
 *    stream runs in submission order.
 *  - On failure the calling thread's error detail (xal_last_error) is set:
 *    status, operation, backend, the vendor's own code and a message.
 */
#ifndef XAL_XAL_H_
#define XAL_XAL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(XAL_BUILDING_LIBRARY)
#define XAL_API __attribute__((visibility("default")))
#else
#define XAL_API
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                  */
/* ------------------------------------------------------------------------ */

#define XAL_ABI_VERSION_MAJOR 1
#define XAL_ABI_VERSION_MINOR 1
#define XAL_ABI_VERSION \
  ((uint32_t)((XAL_ABI_VERSION_MAJOR << 16) | XAL_ABI_VERSION_MINOR))
#define XAL_ABI_MAJOR(v) ((uint32_t)(v) >> 16)
#define XAL_ABI_MINOR(v) ((uint32_t)(v)&0xffffu)

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

typedef int32_t xal_status_t;

#define XAL_SUCCESS ((xal_status_t)0)
#define XAL_NOT_READY ((xal_status_t)1)
#define XAL_ERROR_INVALID_ARGUMENT ((xal_status_t)-1)
#define XAL_ERROR_INVALID_HANDLE ((xal_status_t)-2)
#define XAL_ERROR_NOT_SUPPORTED ((xal_status_t)-3)
#define XAL_ERROR_OUT_OF_MEMORY ((xal_status_t)-4)      /* device or quota */
#define XAL_ERROR_OUT_OF_HOST_MEMORY ((xal_status_t)-5)
#define XAL_ERROR_OUT_OF_BOUNDS ((xal_status_t)-6)      /* range outside a live
                                                           allocation */
#define XAL_ERROR_NOT_INITIALIZED ((xal_status_t)-7)
#define XAL_ERROR_BACKEND_UNAVAILABLE ((xal_status_t)-8)
#define XAL_ERROR_ABI_MISMATCH ((xal_status_t)-9)
#define XAL_ERROR_DEVICE_LOST ((xal_status_t)-10)       /* sticky until reset */
#define XAL_ERROR_HARDWARE ((xal_status_t)-11)          /* e.g. ECC */
#define XAL_ERROR_TIMEOUT ((xal_status_t)-12)
#define XAL_ERROR_ABORTED ((xal_status_t)-13)
#define XAL_ERROR_COLLECTIVE_MISMATCH ((xal_status_t)-14)
#define XAL_ERROR_BACKEND ((xal_status_t)-15)   /* vendor error, no better map */
#define XAL_ERROR_INTERNAL ((xal_status_t)-16)
/* One past the most negative status (how many statuses there are). The
 * metrics struct counts errors in a fixed XAL_METRICS_ERROR_SLOTS array. */
#define XAL_STATUS_COUNT 17

/* ------------------------------------------------------------------------ */
/* Handles and basic types                                                   */
/* ------------------------------------------------------------------------ */

typedef struct xal_device_s* xal_device_t;
typedef struct xal_stream_s* xal_stream_t;
typedef struct xal_event_s* xal_event_t;
typedef struct xal_module_s* xal_module_t;
typedef struct xal_kernel_s* xal_kernel_t;
typedef struct xal_comm_s* xal_comm_t;

/* A device address: 64 bits, opaque to the host. 0 is never a valid
 * allocation. */
typedef uint64_t xal_devptr_t;

typedef enum xal_dtype_e {
  XAL_DTYPE_I8 = 0,
  XAL_DTYPE_U8 = 1,
  XAL_DTYPE_I32 = 2,
  XAL_DTYPE_U32 = 3,
  XAL_DTYPE_I64 = 4,
  XAL_DTYPE_U64 = 5,
  XAL_DTYPE_F16 = 6,
  XAL_DTYPE_BF16 = 7,
  XAL_DTYPE_F32 = 8,
  XAL_DTYPE_F64 = 9,
  XAL_DTYPE_COUNT = 10
} xal_dtype_t;

typedef enum xal_op_e {
  XAL_OP_SUM = 0,
  XAL_OP_PROD = 1,
  XAL_OP_MIN = 2,
  XAL_OP_MAX = 3,
  XAL_OP_AVG = 4,
  XAL_OP_COUNT = 5
} xal_op_t;

/* ------------------------------------------------------------------------ */
/* Initialisation                                                            */
/* ------------------------------------------------------------------------ */

typedef struct xal_init_options_t {
  size_t struct_size;
  /* Backends to load: comma-separated names or absolute paths, as in
   * XAL_BACKENDS ("mock,cuda"); "fault:mock" loads the fault backend
   * wrapping mock. NULL: XAL_BACKENDS, else every plugin found. */
  const char* backends;
  /* Extra plugin folders, ':'-separated. NULL: XAL_BACKEND_PATH. */
  const char* backend_path;
  /* Device selector ("mock:0,1;cuda:*"). NULL: XAL_DEVICE_SELECTOR. */
  const char* device_selector;
  /* -1: XAL_VALIDATION (default on); 0: off; 1: on. */
  int32_t validation;
  uint32_t flags; /* reserved, 0 */
} xal_init_options_t;

/* Loads the backends and enumerates devices. `options` may be NULL.
 * A second call without xal_shutdown returns XAL_ERROR_INVALID_ARGUMENT.
 * A missing vendor never fails init: the backend is listed as UNAVAILABLE.
 * Thread-safe against itself; other calls must not race with it. */
XAL_API xal_status_t xal_init(const xal_init_options_t* options);

/* Releases every handle, allocation and backend. Handles become invalid.
 * Live communicators are aborted first: a collective still waiting for its
 * peers ends with XAL_ERROR_ABORTED instead of holding shutdown until its
 * timeout (synchronize the streams first to keep queued work's results).
 * A group left open is dropped. Returns XAL_ERROR_NOT_INITIALIZED when xal
 * is not initialised. */
XAL_API xal_status_t xal_shutdown(void);

/* Returns XAL_ABI_VERSION of the library (major<<16 | minor). Never fails. */
XAL_API uint32_t xal_abi_version(void);

/* ------------------------------------------------------------------------ */
/* Backends                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum xal_backend_state_e {
  XAL_BACKEND_STATE_LOADED = 0,      /* running, may have 0 devices */
  XAL_BACKEND_STATE_UNAVAILABLE = 1, /* no driver / no device */
  XAL_BACKEND_STATE_FAILED = 2       /* broken plugin, ABI mismatch, ... */
} xal_backend_state_t;

/* Backend flags. */
#define XAL_BACKEND_FLAG_SIMULATED 0x1u /* runs on a simulated device/driver */
#define XAL_BACKEND_FLAG_WRAPPER 0x2u   /* wraps another backend (fault) */

typedef struct xal_backend_info_t {
  size_t struct_size;
  char name[64];      /* "mock", "cuda", "fault(mock)" */
  char version[64];   /* the plugin's own version string */
  char path[1024];    /* file the plugin was loaded from */
  uint32_t state;     /* xal_backend_state_t */
  xal_status_t status;/* why it is not LOADED (XAL_SUCCESS when loaded) */
  char reason[1024];  /* dlerror text, missing symbol, vendor code, ... */
  uint32_t abi_version;   /* the ABI the plugin was built for */
  uint32_t device_count;  /* devices it exposes (after the selector) */
  uint32_t flags;         /* XAL_BACKEND_FLAG_* */
  char driver_version[64];/* vendor driver/runtime version, if known */
  /* Added after 1.0 (xal_backend_get_info accepts the 1.0 size and then
   * leaves it out): what the backend says of itself, e.g. "simulated
   * driver (...)", "no NCCL (libnccl.so.2): collectives on xal's own
   * path"; "" when it says nothing. */
  char note[256];
} xal_backend_info_t;

/* sizeof(xal_backend_info_t) in ABI 1.0 (through driver_version). */
#define XAL_BACKEND_INFO_SIZE_1_0 offsetof(xal_backend_info_t, note)

/* Number of backends considered by xal_init (loaded or not). */
XAL_API xal_status_t xal_backend_count(uint32_t* out_count);

/* Fills `out_info` for backend `index` (< xal_backend_count). */
XAL_API xal_status_t xal_backend_get_info(uint32_t index,
                                          xal_backend_info_t* out_info);

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum xal_device_kind_e {
  XAL_DEVICE_KIND_GPU = 0,
  XAL_DEVICE_KIND_CPU = 1,
  XAL_DEVICE_KIND_ACCELERATOR = 2,
  XAL_DEVICE_KIND_OTHER = 3
} xal_device_kind_t;

/* Capability flags of xal_device_properties_t.capabilities. */
#define XAL_DEVICE_CAP_PEER_COPY (1ull << 0)      /* native peer copies */
#define XAL_DEVICE_CAP_HOST_MEMORY (1ull << 1)    /* page-locked host memory */
#define XAL_DEVICE_CAP_KERNELS (1ull << 2)        /* modules and kernels */
#define XAL_DEVICE_CAP_COLLECTIVES (1ull << 3)    /* native collectives */
#define XAL_DEVICE_CAP_METRICS (1ull << 4)        /* backend sensors */
#define XAL_DEVICE_CAP_EVENT_TIMING (1ull << 5)   /* xal_event_elapsed_ms */
#define XAL_DEVICE_CAP_RESET (1ull << 6)          /* xal_device_reset */
#define XAL_DEVICE_CAP_SIMULATED (1ull << 7)      /* not real hardware */
#define XAL_DEVICE_CAP_PARTITION (1ull << 8)      /* a partition of a card */
/* ABI 1.1 */
#define XAL_DEVICE_CAP_MEM_IMPORT (1ull << 9)     /* xal_mem_import */
#define XAL_DEVICE_CAP_STREAM_IMPORT (1ull << 10) /* xal_stream_import */
#define XAL_DEVICE_CAP_IPC (1ull << 11)           /* xal_mem_*_ipc_handle */
#define XAL_DEVICE_CAP_HOST_POINTERS (1ull << 12) /* XAL_MEM_IMPORT_HOST */

typedef struct xal_device_properties_t {
  size_t struct_size;
  char name[256];
  char vendor[64];
  char backend[64];       /* name of the backend that runs it */
  uint32_t kind;          /* xal_device_kind_t */
  uint32_t index;         /* global device index (xal_device_get) */
  uint32_t backend_index; /* index within its backend */
  int32_t parent_index;   /* parent card of a partition, else -1 */
  uint8_t uuid[16];
  char pci_bus_id[32];    /* "0000:65:00.0", or "" if none */
  uint64_t memory_bytes;  /* physical memory of the card */
  uint32_t compute_units; /* SMs, CUs, EUs/Xe cores, AI cores, ... */
  uint32_t core_clock_mhz;
  uint32_t memory_clock_mhz;
  uint32_t memory_bus_width_bits;
  double peak_memory_bandwidth_gbps; /* GB/s (1e9 bytes per second) */
  uint64_t capabilities;             /* XAL_DEVICE_CAP_* */
  uint64_t max_allocation_bytes;     /* largest single allocation */
} xal_device_properties_t;

/* Number of devices (after XAL_DEVICE_SELECTOR). */
XAL_API xal_status_t xal_device_count(uint32_t* out_count);

/* The device at global `index`. The handle lives until xal_shutdown. */
XAL_API xal_status_t xal_device_get(uint32_t index, xal_device_t* out_device);

XAL_API xal_status_t xal_device_get_properties(
    xal_device_t device, xal_device_properties_t* out_properties);

/* Waits for all work on every stream of `device`. */
XAL_API xal_status_t xal_device_synchronize(xal_device_t device);

/* Clears a sticky error (DEVICE_LOST, HARDWARE, a sticky vendor error).
 * Every allocation, stream and event of the device is invalidated, as a
 * vendor reset does; the device handle stays valid. Communicators with a
 * rank on the device are aborted first (xal_comm_abort: their calls give
 * ABORTED; destroy them and create new ones). */
XAL_API xal_status_t xal_device_reset(xal_device_t device);

typedef enum xal_health_state_e {
  XAL_HEALTH_OK = 0,
  XAL_HEALTH_DEGRADED = 1,  /* works, but reports errors (ECC corrected) */
  XAL_HEALTH_ERROR = 2,     /* a sticky error: reset needed */
  XAL_HEALTH_LOST = 3       /* device lost: reset needed */
} xal_health_state_t;

typedef struct xal_device_health_t {
  size_t struct_size;
  uint32_t state;            /* xal_health_state_t */
  xal_status_t sticky_status;/* the sticky error, XAL_SUCCESS if none */
  int64_t vendor_code;       /* vendor code of the sticky error */
  char message[256];
} xal_device_health_t;

XAL_API xal_status_t xal_device_get_health(xal_device_t device,
                                           xal_device_health_t* out_health);

/* Metrics. `valid` says which fields were filled (XAL_METRIC_*). */
#define XAL_METRIC_UTILIZATION (1ull << 0)
#define XAL_METRIC_MEMORY_USED (1ull << 1)
#define XAL_METRIC_MEMORY_TOTAL (1ull << 2)
#define XAL_METRIC_MEMORY_LIMIT (1ull << 3)
#define XAL_METRIC_TEMPERATURE (1ull << 4)
#define XAL_METRIC_POWER (1ull << 5)
#define XAL_METRIC_ENERGY (1ull << 6)
#define XAL_METRIC_SM_CLOCK (1ull << 7)
#define XAL_METRIC_MEMORY_CLOCK (1ull << 8)
#define XAL_METRIC_ECC_CORRECTED (1ull << 9)
#define XAL_METRIC_ECC_UNCORRECTED (1ull << 10)
#define XAL_METRIC_PCIE_REPLAYS (1ull << 11)
#define XAL_METRIC_HEALTH (1ull << 12)
#define XAL_METRIC_XAL_COUNTERS (1ull << 13) /* the xal_* counters below */
#define XAL_METRIC_LAST_XID (1ull << 14)
/* job_memory_used_bytes and job_processes (XAL_QUOTA_LEDGER is on). */
#define XAL_METRIC_JOB_MEMORY (1ull << 15)
#define XAL_METRIC_SIMULATED (1ull << 63) /* sensors come from a model */

typedef struct xal_device_metrics_t {
  size_t struct_size;
  uint64_t valid;
  double utilization_percent;
  uint64_t memory_used_bytes;
  uint64_t memory_total_bytes;
  uint64_t memory_limit_bytes; /* 0: no limit */
  double temperature_c;
  double power_w;
  double energy_j;             /* since xal_init */
  uint32_t sm_clock_mhz;
  uint32_t memory_clock_mhz;
  uint64_t ecc_corrected;
  uint64_t ecc_uncorrected;
  uint64_t pcie_replays;
  uint32_t health;             /* xal_health_state_t */
  uint32_t last_xid;
  /* xal's own counters, since xal_init */
  uint64_t xal_bytes_htod;
  uint64_t xal_bytes_dtoh;
  uint64_t xal_bytes_dtod;
  uint64_t xal_bytes_peer;
  uint64_t xal_collective_calls;
  uint64_t xal_collective_bytes;
  uint64_t xal_alloc_bytes_current;
  uint64_t xal_alloc_bytes_peak;
  uint64_t xal_alloc_count_current;
  uint64_t xal_faults_injected;
  /* Indexed by -status, for the statuses of ABI 1.0 (XAL_SUCCESS through
   * XAL_ERROR_INTERNAL). Its capacity is fixed: a status added later is
   * not counted here (docs/ABI.md), so the fields below never move. */
#define XAL_METRICS_ERROR_SLOTS 17
  uint64_t xal_errors[XAL_METRICS_ERROR_SLOTS];
  /* Added after 1.0 (a caller built with the 1.0 struct gets the fields
   * above). With the shared quota ledger (XAL_QUOTA_LEDGER): the card's
   * memory held through xal by every live process of the job, this one
   * included, and how many processes hold an entry. */
  uint64_t job_memory_used_bytes;
  uint32_t job_processes;
  uint32_t reserved0;
} xal_device_metrics_t;

/* sizeof(xal_device_metrics_t) in ABI 1.0 (through xal_errors). */
#define XAL_DEVICE_METRICS_SIZE_1_0 \
  offsetof(xal_device_metrics_t, job_memory_used_bytes)

XAL_API xal_status_t xal_device_get_metrics(xal_device_t device,
                                            xal_device_metrics_t* out_metrics);

/* One process of the job on a card, from the shared quota ledger. */
typedef struct xal_job_process_t {
  size_t struct_size;    /* sizeof(xal_job_process_t), set by the caller */
  int32_t pid;
  uint32_t is_self;      /* 1 for the calling process */
  uint64_t memory_bytes; /* device memory it holds through xal */
  uint64_t limit_bytes;  /* the limit it set, 0: none */
  /* ABI 1.1, job usage: what the process did on the device through xal,
   * as it last published it (about every 100 ms). */
  uint64_t busy_ns;             /* device time of its work */
  double utilization_percent;   /* of its last window of about 1 s */
  uint64_t bytes_copied;        /* htod, dtoh, dtod and peer together */
  uint64_t collective_calls;
  uint64_t collective_bytes;
  uint64_t allocations;         /* live allocations */
  uint64_t errors;              /* failed calls on the device */
} xal_job_process_t;

/* sizeof(xal_job_process_t) before the job usage fields (through
 * limit_bytes); xal_device_get_job_processes accepts it. */
#define XAL_JOB_PROCESS_SIZE_MEMORY offsetof(xal_job_process_t, busy_ns)

/* The live processes of the job (XAL_QUOTA_LEDGER) that hold memory or a
 * limit on `device`, as nvidia-smi lists a card's processes. Writes up to
 * `capacity` entries to out_processes (an array whose stride is
 * out_processes[0].struct_size; may be NULL when capacity is 0) and the
 * number of processes, which may exceed capacity, to *out_count. Entries of
 * dead processes are reclaimed first. NOT_SUPPORTED when the ledger is off
 * for the device. Thread-safe. */
XAL_API xal_status_t xal_device_get_job_processes(xal_device_t device, uint32_t capacity,
                                                  xal_job_process_t* out_processes,
                                                  uint32_t* out_count);

/* ABI 1.1: one row of a job's shared ledger, as xal_ledger_read gives it:
 * a device's job-wide figures (pid 0) or one live process's. */
typedef struct xal_ledger_row_t {
  size_t struct_size;          /* sizeof(xal_ledger_row_t), set by the caller */
  uint8_t uuid[16];            /* the card's or partition's uuid */
  char device_name[64];        /* its name, as the job's first process saw it */
  int32_t pid;                 /* 0: the job's row for the device */
  uint32_t compute_percent;    /* the partition's compute share, 0: none */
  uint32_t processes;          /* job row: live processes; else 1 */
  uint32_t reserved0;
  uint64_t memory_bytes;       /* held through xal */
  uint64_t limit_bytes;        /* job row: the limit in force; 0: none */
  uint64_t busy_ns;            /* device time; job row: every process that
                                * drew from the share, ended ones too */
  double utilization_percent;  /* of the last window of about 1 s */
  uint64_t bytes_copied;       /* job row: sums of its live processes */
  uint64_t collective_calls;
  uint64_t collective_bytes;
  uint64_t allocations;
  uint64_t errors;
} xal_ledger_row_t;

/* Reads the shared ledger `name` (XAL_QUOTA_LEDGER of a job of the calling
 * user, /dev/shm/xal-ledger-<uid>-<name>) without joining it: for each
 * device with a live process of the job, its job row, then one row per
 * process. Entries of dead processes are reclaimed first. Writes up to
 * `capacity` rows (stride out_rows[0].struct_size; out_rows may be NULL
 * when capacity is 0) and the number of rows, which may exceed capacity, to
 * *out_count. Needs no xal_init. INVALID_ARGUMENT for a bad name, a ledger
 * that does not exist, of another user or open to others; ABI_MISMATCH for
 * a ledger of another layout (a newer or older xal). Thread-safe. */
XAL_API xal_status_t xal_ledger_read(const char* name, uint32_t capacity,
                                     xal_ledger_row_t* out_rows, uint32_t* out_count);

/* Partitions: one card split into virtual devices (as MIG or HAMi do), each
 * with its own memory quota, streams, counters and compute share. They are
 * listed after the physical devices (xal_device_count counts them; their
 * global indices start at the count of physical devices), with
 * XAL_DEVICE_CAP_PARTITION and parent_index set. The card itself stays
 * listed but refuses allocations and streams while it is partitioned.
 * XAL_PARTITIONS partitions cards at xal_init (docs/TELEMETRY.md). */
typedef struct xal_partition_desc_t {
  size_t struct_size;        /* sizeof(xal_partition_desc_t) */
  uint64_t memory_bytes;     /* its memory quota, > 0 */
  uint32_t compute_percent;  /* 1..100 of the card's time; 0: an equal part
                              * of what the other descriptors leave */
} xal_partition_desc_t;

/* Splits `parent` into `n` partitions described by `descs` (an array whose
 * stride is descs[0].struct_size) and writes their handles to
 * out_partitions[n] (may be NULL). The card must be a whole card with no
 * allocation and no stream; the sizes must fit its memory and the shares
 * add up to at most 100. Handles live until xal_device_unpartition or
 * xal_shutdown. Serialised against itself; not to be raced with other calls
 * that take device handles or indices. */
XAL_API xal_status_t xal_device_partition(xal_device_t parent, uint32_t n,
                                          const xal_partition_desc_t* descs,
                                          xal_device_t* out_partitions);

/* Undoes xal_device_partition (or XAL_PARTITIONS) on `parent`, only when its
 * partitions hold no allocation, stream, event or module; their handles
 * become invalid and partitions listed after them move down. Same
 * thread-safety as xal_device_partition. */
XAL_API xal_status_t xal_device_unpartition(xal_device_t parent);

/* The compute share of `device` in percent: a partition's share, 100 for a
 * whole card. Thread-safe. */
XAL_API xal_status_t xal_device_get_compute_share(xal_device_t device,
                                                  uint32_t* out_percent);

/* The problems xal_init found in XAL_PARTITIONS, one per line ("" when
 * none), copied into out_text[size] (truncated, always terminated when
 * size > 0); *out_length (may be NULL) gets the full length. Thread-safe. */
XAL_API xal_status_t xal_partition_config_errors(char* out_text, size_t size,
                                                 size_t* out_length);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/* Sets this process's memory quota on `device` (0 removes it). Fails with
 * XAL_ERROR_OUT_OF_MEMORY if more than `bytes` is already allocated. */
XAL_API xal_status_t xal_device_set_memory_limit(xal_device_t device,
                                                 uint64_t bytes);

/* Free and total memory. With a quota, total is the quota and free is the
 * quota less what is allocated (never more than the card has free). */
XAL_API xal_status_t xal_mem_get_info(xal_device_t device, uint64_t* out_free,
                                      uint64_t* out_total);

/* Allocates `bytes` (> 0) of device memory, aligned to at least 256 bytes.
 * The caller owns the allocation; free it with xal_mem_free. */
XAL_API xal_status_t xal_mem_alloc(xal_device_t device, size_t bytes,
                                   xal_devptr_t* out_ptr);

/* Frees an allocation of `device`. Work still queued that uses it must be
 * finished (synchronise first). A double free or a pointer of another device
 * gives XAL_ERROR_INVALID_ARGUMENT (with validation on). */
XAL_API xal_status_t xal_mem_free(xal_device_t device, xal_devptr_t ptr);

#define XAL_HOST_ALLOC_DEFAULT 0u
#define XAL_HOST_ALLOC_WRITE_COMBINED 0x1u

/* Page-locked host memory usable by every loaded backend for fast copies.
 * The caller owns it; free with xal_host_free. */
XAL_API xal_status_t xal_host_alloc(size_t bytes, uint32_t flags,
                                    void** out_ptr);
XAL_API xal_status_t xal_host_free(void* ptr);

/* ------------------------------------------------------------------------ */
/* Streams and copies                                                        */
/* ------------------------------------------------------------------------ */

#define XAL_STREAM_DEFAULT 0u
#define XAL_STREAM_NON_BLOCKING 0x1u

/* Creates an in-order queue of work on `device`. Caller owns it. */
XAL_API xal_status_t xal_stream_create(xal_device_t device, uint32_t flags,
                                       xal_stream_t* out_stream);
/* Waits for the stream's work, then releases it. */
XAL_API xal_status_t xal_stream_destroy(xal_stream_t stream);
XAL_API xal_status_t xal_stream_synchronize(xal_stream_t stream);
/* XAL_SUCCESS when all work is done, XAL_NOT_READY otherwise. */
XAL_API xal_status_t xal_stream_query(xal_stream_t stream);

/* Copies are ordered on `stream` and asynchronous to the host: host buffers
 * must stay valid and unchanged until the stream has run the copy.
 * A copy of 0 bytes is a no-op that succeeds. */
XAL_API xal_status_t xal_memcpy_htod(xal_stream_t stream, xal_devptr_t dst,
                                     const void* src, size_t bytes);
XAL_API xal_status_t xal_memcpy_dtoh(xal_stream_t stream, void* dst,
                                     xal_devptr_t src, size_t bytes);
/* Both pointers on the stream's device. */
XAL_API xal_status_t xal_memcpy_dtod(xal_stream_t stream, xal_devptr_t dst,
                                     xal_devptr_t src, size_t bytes);
/* Between any two devices, of one backend or of two. `stream` belongs to
 * either device. Across backends the core stages through page-locked host
 * memory in pipelined chunks. */
XAL_API xal_status_t xal_memcpy_peer(xal_stream_t stream, xal_device_t dst_device,
                                     xal_devptr_t dst, xal_device_t src_device,
                                     xal_devptr_t src, size_t bytes);
/* Sets `bytes` bytes at `dst` to `value`. */
XAL_API xal_status_t xal_memset(xal_stream_t stream, xal_devptr_t dst,
                                uint8_t value, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

#define XAL_EVENT_DEFAULT 0u
#define XAL_EVENT_DISABLE_TIMING 0x1u

XAL_API xal_status_t xal_event_create(xal_device_t device, uint32_t flags,
                                      xal_event_t* out_event);
XAL_API xal_status_t xal_event_destroy(xal_event_t event);
/* Captures the work submitted to `stream` so far (stream of the event's
 * device). */
XAL_API xal_status_t xal_event_record(xal_event_t event, xal_stream_t stream);
/* Later work on `stream` waits for `event`; any two devices. */
XAL_API xal_status_t xal_stream_wait_event(xal_stream_t stream,
                                           xal_event_t event);
XAL_API xal_status_t xal_event_synchronize(xal_event_t event);
/* XAL_SUCCESS when complete (or never recorded), XAL_NOT_READY otherwise. */
XAL_API xal_status_t xal_event_query(xal_event_t event);
/* Milliseconds between two completed events of one device. */
XAL_API xal_status_t xal_event_elapsed_ms(xal_event_t start, xal_event_t end,
                                          float* out_ms);

/* ------------------------------------------------------------------------ */
/* Modules and kernels                                                       */
/* ------------------------------------------------------------------------ */

typedef enum xal_module_format_e {
  XAL_MODULE_FORMAT_PTX = 0,
  XAL_MODULE_FORMAT_CUBIN = 1,
  XAL_MODULE_FORMAT_FATBIN = 2,
  XAL_MODULE_FORMAT_HSACO = 3,
  XAL_MODULE_FORMAT_SPIRV = 4,
  XAL_MODULE_FORMAT_OPENCL_C = 5,
  XAL_MODULE_FORMAT_NATIVE = 6 /* backend-defined (the mock's built-ins) */
} xal_module_format_t;

/* Loads a code image. Build/JIT logs of a failure are in the message. */
XAL_API xal_status_t xal_module_load(xal_device_t device, uint32_t format,
                                     const void* image, size_t bytes,
                                     xal_module_t* out_module);
XAL_API xal_status_t xal_module_unload(xal_module_t module);
/* The kernel lives as long as its module. */
XAL_API xal_status_t xal_kernel_get(xal_module_t module, const char* name,
                                    xal_kernel_t* out_kernel);

typedef struct xal_launch_config_t {
  size_t struct_size;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_memory_bytes;
  /* Sizes of each argument in bytes; required by backends that cannot
   * introspect kernels (OpenCL), optional elsewhere. NULL if unknown. */
  const size_t* arg_sizes;
} xal_launch_config_t;

/* `args[i]` points to the value of argument i, as cuLaunchKernel. xal
 * checks the handles and the configuration; like the vendors' launches, it
 * does not check the device memory the kernel's arguments point to. */
XAL_API xal_status_t xal_kernel_launch(xal_stream_t stream, xal_kernel_t kernel,
                                       const xal_launch_config_t* config,
                                       void** args, size_t arg_count);

/* ------------------------------------------------------------------------ */
/* Collectives                                                               */
/* ------------------------------------------------------------------------ */

typedef struct xal_comm_options_t {
  size_t struct_size;
  uint32_t timeout_ms; /* 0: XAL_COMM_TIMEOUT_MS, else the default */
  uint32_t flags;      /* reserved, 0 */
} xal_comm_options_t;

typedef enum xal_comm_path_e {
  XAL_COMM_PATH_NATIVE = 0,       /* one backend's own library */
  XAL_COMM_PATH_HIERARCHICAL = 1, /* mixed backends, through host memory */
  XAL_COMM_PATH_MPI = 2           /* across processes */
} xal_comm_path_t;

typedef struct xal_comm_info_t {
  size_t struct_size;
  uint32_t rank;
  uint32_t size;
  xal_device_t device;
  uint32_t path; /* xal_comm_path_t */
  uint32_t timeout_ms;
  char description[256];
} xal_comm_info_t;

/* Creates one communicator per device; rank i runs on devs[i].
 * `out_comms` has room for `n`. Each comm is owned by the caller. */
XAL_API xal_status_t xal_comm_create(const xal_device_t* devs, uint32_t n,
                                     const xal_comm_options_t* options,
                                     xal_comm_t* out_comms);
XAL_API xal_status_t xal_comm_destroy(xal_comm_t comm);
/* Unblocks every pending call of the communicator with XAL_ERROR_ABORTED. */
XAL_API xal_status_t xal_comm_abort(xal_comm_t comm);
/* The first asynchronous error of the communicator (XAL_SUCCESS if none). */
XAL_API xal_status_t xal_comm_get_async_error(xal_comm_t comm,
                                              xal_status_t* out_error);
XAL_API xal_status_t xal_comm_get_info(xal_comm_t comm,
                                       xal_comm_info_t* out_info);

/* Between start and end, collectives are only queued, so that one thread can
 * issue a collective for every rank. Calls nest. Per thread. */
XAL_API xal_status_t xal_group_start(void);
XAL_API xal_status_t xal_group_end(void);

XAL_API xal_status_t xal_allreduce(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t count,
                                   xal_dtype_t dtype, xal_op_t op,
                                   xal_stream_t stream);
XAL_API xal_status_t xal_broadcast(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t count,
                                   xal_dtype_t dtype, uint32_t root,
                                   xal_stream_t stream);
XAL_API xal_status_t xal_reduce(xal_comm_t comm, xal_devptr_t send,
                                xal_devptr_t recv, size_t count,
                                xal_dtype_t dtype, xal_op_t op, uint32_t root,
                                xal_stream_t stream);
/* recv holds size * send_count elements. */
XAL_API xal_status_t xal_allgather(xal_comm_t comm, xal_devptr_t send,
                                   xal_devptr_t recv, size_t send_count,
                                   xal_dtype_t dtype, xal_stream_t stream);
/* send holds size * recv_count elements. */
XAL_API xal_status_t xal_reduce_scatter(xal_comm_t comm, xal_devptr_t send,
                                        xal_devptr_t recv, size_t recv_count,
                                        xal_dtype_t dtype, xal_op_t op,
                                        xal_stream_t stream);
/* send and recv hold size * count elements; block j goes to rank j. */
XAL_API xal_status_t xal_alltoall(xal_comm_t comm, xal_devptr_t send,
                                  xal_devptr_t recv, size_t count,
                                  xal_dtype_t dtype, xal_stream_t stream);

/* --- ABI 1.1: point-to-point, v-collectives, split (docs/COLLECTIVES.md,
 * "Point-to-point and v-collectives"). Like the collectives above: queued
 * on `stream` (a stream of the communicator's device), asynchronous to the
 * caller, failures after queuing reported on the stream's next synchronize
 * and by xal_comm_get_async_error. Buffers stay the caller's and must stay
 * valid until the stream has passed the call. A communicator is used by one
 * thread at a time; inside xal_group_start/end one thread may drive every
 * rank. Counts and displacements are in elements of `dtype`. */

/* Point-to-point: `count` elements to/from rank `peer` of the communicator.
 * Inside xal_group_start/end a rank may post many sends and receives at
 * once without deadlock (NCCL's grouped semantics). The k-th send of rank
 * a to rank b pairs with the k-th receive of b from a; a send and its
 * receive must agree on count and dtype (else both fail with
 * XAL_ERROR_COLLECTIVE_MISMATCH). peer may be the rank itself. */
XAL_API xal_status_t xal_send(xal_comm_t comm, xal_devptr_t send, size_t count,
                              xal_dtype_t dtype, uint32_t peer,
                              xal_stream_t stream);
XAL_API xal_status_t xal_recv(xal_comm_t comm, xal_devptr_t recv, size_t count,
                              xal_dtype_t dtype, uint32_t peer,
                              xal_stream_t stream);

#define XAL_COMM_SPLIT_NOCOLOR (-1)
/* ncclCommSplit semantics: collective over the parent's ranks; ranks of one
 * color form a child, ordered by key then parent rank; color < 0
 * (XAL_COMM_SPLIT_NOCOLOR) -> *out_comm = NULL. From one thread driving
 * several ranks: inside a group, out_comm valid after xal_group_end.
 * `options` NULL: the parent's timeout. The child is owned by the caller
 * (xal_comm_destroy) and independent of the parent. */
XAL_API xal_status_t xal_comm_split(xal_comm_t comm, int32_t color,
                                    int32_t key,
                                    const xal_comm_options_t* options,
                                    xal_comm_t* out_comm);
/* = split with one color, key = rank */
XAL_API xal_status_t xal_comm_dup(xal_comm_t comm, xal_comm_t* out_comm);

/* recv holds displs[i] + recv_counts[i] elements of rank i's send for every
 * i (recv_counts and displs: size entries each; recv_counts[rank] ==
 * send_count). */
XAL_API xal_status_t xal_allgatherv(xal_comm_t comm, xal_devptr_t send,
                                    size_t send_count, xal_devptr_t recv,
                                    const size_t* recv_counts,
                                    const size_t* displs, xal_dtype_t dtype,
                                    xal_stream_t stream);
/* send holds sum(recv_counts) elements, block i (recv_counts[i] elements, in
 * rank order) reduced into rank i's recv */
XAL_API xal_status_t xal_reduce_scatterv(xal_comm_t comm, xal_devptr_t send,
                                         xal_devptr_t recv,
                                         const size_t* recv_counts,
                                         xal_dtype_t dtype, xal_op_t op,
                                         xal_stream_t stream);
/* counts and displacements in elements, size entries each (MPI_Alltoallv) */
XAL_API xal_status_t xal_alltoallv(xal_comm_t comm, xal_devptr_t send,
                                   const size_t* send_counts,
                                   const size_t* send_displs,
                                   xal_devptr_t recv, const size_t* recv_counts,
                                   const size_t* recv_displs, xal_dtype_t dtype,
                                   xal_stream_t stream);
/* recv (size * send_count elements) only used on root */
XAL_API xal_status_t xal_gather(xal_comm_t comm, xal_devptr_t send,
                                xal_devptr_t recv, size_t send_count,
                                xal_dtype_t dtype, uint32_t root,
                                xal_stream_t stream);
/* send (size * recv_count elements) only read on root */
XAL_API xal_status_t xal_scatter(xal_comm_t comm, xal_devptr_t send,
                                 xal_devptr_t recv, size_t recv_count,
                                 xal_dtype_t dtype, uint32_t root,
                                 xal_stream_t stream);

/* ------------------------------------------------------------------------ */
/* Interop (ABI 1.1): memory, streams and host memory that a framework       */
/* owns, and device memory shared between the processes of one host          */
/* (docs/ABI.md, "Ownership of imported objects")                            */
/* ------------------------------------------------------------------------ */

/* `native` is a host pointer (devices with XAL_DEVICE_CAP_HOST_POINTERS,
 * whose memory is host memory: the mock), not a vendor device pointer. */
#define XAL_MEM_IMPORT_HOST 0x1u

/* Wraps `bytes` (> 0) of memory the caller allocated through the vendor's
 * API on `device` -- a CUdeviceptr, hipDeviceptr_t, Level Zero device or
 * shared pointer, cl_mem, a mock device address, or with
 * XAL_MEM_IMPORT_HOST a host pointer -- as a device pointer that copies,
 * memset, kernels and collectives accept, with bounds checked against
 * `bytes`. xal does not own the memory: xal_mem_free forgets the import and
 * leaves the memory to its owner, who must keep it alive until then.
 * Imported memory does not count against quotas. A range that overlaps a
 * live allocation or import of the device gives INVALID_ARGUMENT; memory
 * the backend can tell is not the device's gives INVALID_ARGUMENT;
 * NOT_SUPPORTED without XAL_DEVICE_CAP_MEM_IMPORT. Thread-safe. */
XAL_API xal_status_t xal_mem_import(xal_device_t device, uint64_t native,
                                    size_t bytes, uint32_t flags,
                                    xal_devptr_t* out_ptr);

/* Registers `bytes` of caller-owned host memory with every loaded backend
 * (page-locked where the vendor can: cuMemHostRegister, hipHostRegister,
 * ...), so that copies and staged collectives use it directly. The memory
 * stays the caller's; unregister it before freeing it. A range that
 * overlaps a registered range or xal_host_alloc memory gives
 * INVALID_ARGUMENT. `flags` is 0. Thread-safe. */
XAL_API xal_status_t xal_host_register(void* ptr, size_t bytes,
                                       uint32_t flags);
/* Undoes xal_host_register(ptr, ...); INVALID_ARGUMENT for a pointer that
 * does not start a registered range. Thread-safe. */
XAL_API xal_status_t xal_host_unregister(void* ptr);

/* Adopts a native stream (CUstream, hipStream_t, a Level Zero immediate
 * command list, a cl_command_queue; on the mock the native handle of one
 * of its streams, xal_handle_get_native) of `device`, so that xal's copies
 * and collectives are ordered with the framework's work on it. The caller
 * owns the returned handle; xal_stream_destroy releases xal's wrapper and
 * leaves the native stream alive. `flags` is 0. NOT_SUPPORTED without
 * XAL_DEVICE_CAP_STREAM_IMPORT. Thread-safe. */
XAL_API xal_status_t xal_stream_import(xal_device_t device, uint64_t native,
                                       uint32_t flags,
                                       xal_stream_t* out_stream);

#define XAL_IPC_HANDLE_SIZE 128
/* Names device memory for another process of the same host. Opaque; copy
 * it as bytes (a pipe, a file, a store). */
typedef struct xal_ipc_handle_t {
  uint8_t bytes[XAL_IPC_HANDLE_SIZE];
} xal_ipc_handle_t;

/* Writes a handle for the allocation that starts at `ptr` (made by
 * xal_mem_alloc on `device`; not imported or opened memory). The memory
 * stays this process's: freeing it, or this process ending, ends what the
 * handle names. NOT_SUPPORTED without XAL_DEVICE_CAP_IPC. Thread-safe. */
XAL_API xal_status_t xal_mem_get_ipc_handle(xal_device_t device,
                                            xal_devptr_t ptr,
                                            xal_ipc_handle_t* out_handle);
/* Maps the memory a handle names on `device` (of the handle's backend) and
 * writes its address and size (out_bytes may be NULL). A handle that is
 * not one, of another backend or host, of this very process, or whose
 * exporter has ended gives INVALID_ARGUMENT with the reason. Close it with
 * xal_mem_close_ipc_handle (xal_mem_free refuses it). `flags` is 0.
 * Thread-safe. */
XAL_API xal_status_t xal_mem_open_ipc_handle(xal_device_t device,
                                             const xal_ipc_handle_t* handle,
                                             uint32_t flags,
                                             xal_devptr_t* out_ptr,
                                             size_t* out_bytes);
/* Unmaps memory opened by xal_mem_open_ipc_handle. Thread-safe. */
XAL_API xal_status_t xal_mem_close_ipc_handle(xal_device_t device,
                                              xal_devptr_t ptr);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct xal_error_info_t {
  size_t struct_size;
  xal_status_t status;   /* XAL_SUCCESS if the thread has no error yet */
  char operation[64];    /* "xal_mem_alloc" */
  char backend[64];      /* "mock", "cuda", "" for the core */
  int64_t vendor_code;   /* e.g. 700 for CUDA_ERROR_ILLEGAL_ADDRESS, 0 if none */
  char vendor_name[64];  /* e.g. "CUDA_ERROR_ILLEGAL_ADDRESS" */
  char message[1024];
} xal_error_info_t;

/* Copies the calling thread's last error detail. Detail stays until the next
 * failing call on the thread. Returns XAL_ERROR_INVALID_ARGUMENT only when
 * out_info is NULL or too small. Works before xal_init. */
XAL_API xal_status_t xal_last_error(xal_error_info_t* out_info);

/* A stable name ("XAL_ERROR_OUT_OF_MEMORY"); "XAL_STATUS_UNKNOWN" for values
 * outside the list. Never NULL. */
XAL_API const char* xal_status_name(xal_status_t status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XAL_XAL_H_ */
