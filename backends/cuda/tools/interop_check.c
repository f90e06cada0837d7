/* interop_check.c -- xal-cuda-interopcheck: ABI 1.1 interop on the CUDA
 * devices, as a framework uses it (tools/gpu-check.sh, step interop).
 *
 *   xal-cuda-interopcheck [--count N]
 *
 * "The framework" allocates with cuMemAlloc and creates its streams with
 * cuStreamCreate in each device's primary context (as the CUDA runtime
 * does); xal imports both (xal_mem_import, xal_stream_import) and runs, on
 * the imported streams and in place on the imported memory, a device copy,
 * a memset, a host copy and an allreduce over every CUDA device (one rank
 * on one GPU); the framework synchronizes its own streams and reads the
 * results with cuMemcpyDtoH. Then: xal_stream_destroy leaves the CUstream
 * working, xal_mem_free leaves the memory, bad inputs get their statuses,
 * and IPC across two processes (interop_ipc.c). A JSON report on stdout,
 * each check on stderr; exit 0 when every check passed, 1 when one failed,
 * 2 when nothing could be checked (bad option, no driver, no CUDA device).
 *
 * Only xal.h and the driver API (dlopen, interop_driver.c); N is the
 * number of floats per device (default 4M: 16 MiB). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "interop_check.h"

typedef struct rank_t {
  xal_device_t dev;
  CUdevice cu;
  CUcontext ctx;         /* its primary context, retained by the framework */
  CUdeviceptr buf, aux;  /* the framework's memory */
  CUstream cs;           /* the framework's stream */
  xal_devptr_t pbuf, paux;
  xal_stream_t s;        /* xal's wrapper of cs */
  float* contribution;   /* what this rank puts into the allreduce */
} rank_t;

static icheck_driver_t drv;
static rank_t ranks[ICHECK_MAX_DEVICES];
static unsigned nranks;
static size_t count = (size_t)4 << 20;

#define HEAD 64 /* elements xal writes from the host before the allreduce */

static float original(size_t i, unsigned r) { return (float)((i % 251) + r + 1); }

static int cu_ok(const char* name, CUresult r) {
  return icheck_record(name, r == CUDA_SUCCESS, "%s", icheck_cu_name(&drv, r));
}

/* The framework makes rank r's device current, as cudaSetDevice does. */
static CUresult use(unsigned r) { return drv.set_current(ranks[r].ctx); }

/* The CUDA ordinal of an xal device: by PCI bus id, else by position. */
static CUdevice ordinal_of(const char* bus, unsigned position) {
  int n = 0, i;
  if (drv.device_count(&n) == CUDA_SUCCESS) {
    for (i = 0; i < n && bus[0]; ++i) {
      CUdevice d;
      char id[32] = "";
      if (drv.device_get(&d, i) == CUDA_SUCCESS &&
          drv.pci_bus_id(id, (int)sizeof id, d) == CUDA_SUCCESS && strcasecmp(id, bus) == 0)
        return d;
    }
  }
  return (CUdevice)position;
}

static int find_devices(int* simulated) {
  uint32_t n = 0, i;
  if (xal_device_count(&n) != XAL_SUCCESS) return 0;
  for (i = 0; i < n && nranks < ICHECK_MAX_DEVICES; ++i) {
    xal_device_t d;
    xal_device_properties_t p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    if (xal_device_get(i, &d) != XAL_SUCCESS || xal_device_get_properties(d, &p) != XAL_SUCCESS ||
        strcmp(p.backend, "cuda") != 0)
      continue;
    ranks[nranks].dev = d;
    ranks[nranks].cu = ordinal_of(p.pci_bus_id, nranks);
    *simulated |= (p.capabilities & XAL_DEVICE_CAP_SIMULATED) != 0;
    icheck_record("device: interop capabilities",
                  (p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT) &&
                      (p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT),
                  "%s (CUDA device %d): MEM_IMPORT %d, STREAM_IMPORT %d, IPC %d", p.name,
                  (int)ranks[nranks].cu, (p.capabilities & XAL_DEVICE_CAP_MEM_IMPORT) != 0,
                  (p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT) != 0,
                  (p.capabilities & XAL_DEVICE_CAP_IPC) != 0);
    ++nranks;
  }
  return nranks > 0;
}

/* The framework's memory and stream on every device, its data written. */
static int framework_setup(void) {
  const size_t bytes = count * sizeof(float);
  float* v = malloc(bytes);
  unsigned r;
  size_t i;
  int ok = v != NULL;
  for (r = 0; ok && r < nranks; ++r) {
    rank_t* k = &ranks[r];
    ok = cu_ok("framework: cuDevicePrimaryCtxRetain", drv.retain(&k->ctx, k->cu)) &&
         cu_ok("framework: cuCtxSetCurrent", use(r)) &&
         cu_ok("framework: cuMemAlloc", drv.mem_alloc(&k->buf, bytes)) &&
         cu_ok("framework: cuMemAlloc", drv.mem_alloc(&k->aux, bytes)) &&
         cu_ok("framework: cuStreamCreate", drv.stream_create(&k->cs, CU_STREAM_NON_BLOCKING));
    for (i = 0; ok && i < count; ++i) v[i] = original(i, r);
    ok = ok && cu_ok("framework: cuMemcpyHtoD", drv.htod(k->buf, v, bytes));
    k->contribution = ok ? malloc(bytes) : NULL;
    ok = ok && k->contribution != NULL;
    if (ok) {
      memcpy(k->contribution, v, bytes);
      for (i = 0; i < HEAD; ++i) k->contribution[i] = (float)(1000 + i + r);
    }
  }
  free(v);
  return ok;
}

static int import_all(void) {
  const size_t bytes = count * sizeof(float);
  unsigned r;
  for (r = 0; r < nranks; ++r) {
    rank_t* k = &ranks[r];
    if (!icheck_status("xal_mem_import (framework's cuMemAlloc)",
                       xal_mem_import(k->dev, k->buf, bytes, 0, &k->pbuf), XAL_SUCCESS) ||
        !icheck_status("xal_mem_import (second buffer)",
                       xal_mem_import(k->dev, k->aux, bytes, 0, &k->paux), XAL_SUCCESS) ||
        !icheck_status("xal_stream_import (framework's CUstream)",
                       xal_stream_import(k->dev, (uint64_t)(uintptr_t)k->cs, 0, &k->s),
                       XAL_SUCCESS))
      return 0;
    icheck_record("imported pointer is the framework's", k->pbuf == (xal_devptr_t)k->buf,
                  "0x%llx", (unsigned long long)k->pbuf);
  }
  return 1;
}

/* Copies, memset and the allreduce through xal on the imported objects. */
static int run_work(void) {
  const size_t bytes = count * sizeof(float);
  xal_comm_t comms[ICHECK_MAX_DEVICES];
  xal_device_t devs[ICHECK_MAX_DEVICES];
  xal_comm_info_t info;
  unsigned r;
  int ok = 1;
  for (r = 0; ok && r < nranks; ++r) {
    rank_t* k = &ranks[r];
    devs[r] = k->dev;
    ok = icheck_status("xal_memcpy_dtod on the imported stream",
                       xal_memcpy_dtod(k->s, k->paux, k->pbuf, bytes), XAL_SUCCESS) &&
         icheck_status("xal_memset on the imported stream",
                       xal_memset(k->s, k->paux + bytes / 2, 0, bytes / 2), XAL_SUCCESS) &&
         icheck_status("xal_memcpy_htod on the imported stream",
                       xal_memcpy_htod(k->s, k->pbuf, k->contribution, HEAD * sizeof(float)),
                       XAL_SUCCESS);
  }
  if (!ok || !icheck_status("xal_comm_create", xal_comm_create(devs, nranks, NULL, comms),
                            XAL_SUCCESS))
    return 0;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (xal_comm_get_info(comms[0], &info) == XAL_SUCCESS)
    icheck_record("communicator", 1, "%u rank(s): %s", nranks, info.description);
  ok = icheck_status("xal_group_start", xal_group_start(), XAL_SUCCESS);
  for (r = 0; ok && r < nranks; ++r)
    ok = icheck_status("xal_allreduce in place on imported memory and stream",
                       xal_allreduce(comms[r], ranks[r].pbuf, ranks[r].pbuf, count,
                                     XAL_DTYPE_F32, XAL_OP_SUM, ranks[r].s),
                       XAL_SUCCESS);
  ok = icheck_status("xal_group_end", xal_group_end(), XAL_SUCCESS) && ok;
  /* The framework's own synchronize: xal's work is on its streams. */
  for (r = 0; r < nranks; ++r)
    ok = cu_ok("framework: cuStreamSynchronize of its stream",
               use(r) == CUDA_SUCCESS ? drv.stream_synchronize(ranks[r].cs)
                                      : CUDA_ERROR_INVALID_CONTEXT) && ok;
  for (r = 0; r < nranks; ++r)
    icheck_status("xal_comm_destroy", xal_comm_destroy(comms[r]), XAL_SUCCESS);
  return ok;
}

/* What the framework reads back with cuMemcpyDtoH. */
static void verify(void) {
  const size_t bytes = count * sizeof(float);
  float* out = malloc(bytes);
  unsigned r, q;
  size_t i, bad_at;
  for (r = 0; out && r < nranks; ++r) {
    CUresult res = use(r);
    if (res == CUDA_SUCCESS) res = drv.dtoh(out, ranks[r].aux, bytes);
    bad_at = count;
    for (i = 0; res == CUDA_SUCCESS && i < count && bad_at == count; ++i) {
      const float want = i < count / 2 ? original(i, r) : 0.0f;
      if (out[i] != want) bad_at = i;
    }
    icheck_record("framework reads the copy and memset (cuMemcpyDtoH)",
                  res == CUDA_SUCCESS && bad_at == count, "rank %u: %s, %s %zu", r,
                  icheck_cu_name(&drv, res), bad_at == count ? "elements right:" : "wrong at",
                  bad_at);
    if (res == CUDA_SUCCESS) res = drv.dtoh(out, ranks[r].buf, bytes);
    bad_at = count;
    for (i = 0; res == CUDA_SUCCESS && i < count && bad_at == count; ++i) {
      float want = 0.0f;
      for (q = 0; q < nranks; ++q) want += ranks[q].contribution[i];
      if (out[i] != want) bad_at = i;
    }
    icheck_record("framework reads the allreduce (cuMemcpyDtoH)",
                  res == CUDA_SUCCESS && bad_at == count, "rank %u of %u: %s, %s %zu", r, nranks,
                  icheck_cu_name(&drv, res), bad_at == count ? "elements right:" : "wrong at",
                  bad_at);
  }
  free(out);
}

/* xal lets go of the imports; the framework's objects keep working. */
static void release_imports(void) {
  unsigned r;
  for (r = 0; r < nranks; ++r) {
    rank_t* k = &ranks[r];
    unsigned char back[256];
    CUresult res;
    size_t i;
    int same = 1;
    if (!k->s) continue;
    icheck_status("xal_stream_destroy of the imported stream", xal_stream_destroy(k->s),
                  XAL_SUCCESS);
    res = use(r);
    if (res == CUDA_SUCCESS) res = drv.memset_async(k->buf, 0x5a, sizeof back, k->cs);
    if (res == CUDA_SUCCESS) res = drv.stream_synchronize(k->cs);
    if (res == CUDA_SUCCESS) res = drv.dtoh(back, k->buf, sizeof back);
    for (i = 0; i < sizeof back; ++i) same = same && back[i] == 0x5a;
    icheck_record("framework's CUstream works after xal_stream_destroy",
                  res == CUDA_SUCCESS && same, "%s", icheck_cu_name(&drv, res));
    icheck_status("xal_mem_free of imported memory (forgets it)", xal_mem_free(k->dev, k->pbuf),
                  XAL_SUCCESS);
    icheck_status("xal_mem_free of imported memory (forgets it)", xal_mem_free(k->dev, k->paux),
                  XAL_SUCCESS);
    res = use(r);
    if (res == CUDA_SUCCESS) res = drv.dtoh(back, k->buf, sizeof back);
    icheck_record("framework's memory readable after xal_mem_free",
                  res == CUDA_SUCCESS && back[0] == 0x5a, "%s", icheck_cu_name(&drv, res));
  }
}

/* Bad inputs a real driver answers without harm (a value that is no
 * CUstream at all is left out: the driver may crash on it). */
static void bad_inputs(void) {
  rank_t* k = &ranks[0];
  xal_devptr_t p = 0;
  xal_stream_t s = NULL;
  CUdeviceptr freed = 0;
  void* host = malloc(4096);
  const size_t bytes = count * sizeof(float);
  icheck_status("bad: pageable host pointer",
                xal_mem_import(k->dev, (uint64_t)(uintptr_t)host, 64, 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  icheck_status("bad: XAL_MEM_IMPORT_HOST on CUDA",
                xal_mem_import(k->dev, (uint64_t)(uintptr_t)host, 64, XAL_MEM_IMPORT_HOST, &p),
                XAL_ERROR_NOT_SUPPORTED);
  free(host);
  icheck_status("bad: range past the allocation",
                xal_mem_import(k->dev, k->buf, bytes + ((size_t)64 << 20), 0, &p),
                XAL_ERROR_INVALID_ARGUMENT);
  if (use(0) == CUDA_SUCCESS && drv.mem_alloc(&freed, (size_t)64 << 20) == CUDA_SUCCESS &&
      drv.mem_free(freed) == CUDA_SUCCESS)
    icheck_status("bad: freed memory", xal_mem_import(k->dev, freed, 64, 0, &p),
                  XAL_ERROR_INVALID_ARGUMENT);
  icheck_status("bad: CU_STREAM_LEGACY",
                xal_stream_import(k->dev, (uint64_t)(uintptr_t)CU_STREAM_LEGACY, 0, &s),
                XAL_ERROR_INVALID_ARGUMENT);
  icheck_status("bad: native 0", xal_stream_import(k->dev, 0, 0, &s), XAL_ERROR_INVALID_ARGUMENT);
  if (nranks > 1) {
    icheck_status("bad: another device's memory", xal_mem_import(k->dev, ranks[1].buf, 64, 0, &p),
                  XAL_ERROR_INVALID_ARGUMENT);
    icheck_status("bad: another device's stream",
                  xal_stream_import(k->dev, (uint64_t)(uintptr_t)ranks[1].cs, 0, &s),
                  XAL_ERROR_INVALID_ARGUMENT);
  }
}

static void framework_teardown(void) {
  unsigned r;
  for (r = 0; r < nranks; ++r) {
    rank_t* k = &ranks[r];
    if (!k->ctx) continue;
    if (use(r) == CUDA_SUCCESS) {
      if (k->cs) cu_ok("framework: cuStreamDestroy (xal left it alive)", drv.stream_destroy(k->cs));
      if (k->buf) cu_ok("framework: cuMemFree (xal left it)", drv.mem_free(k->buf));
      if (k->aux) drv.mem_free(k->aux);
    }
    free(k->contribution);
  }
  drv.set_current(NULL);
  for (r = 0; r < nranks; ++r)
    if (ranks[r].ctx) drv.release(ranks[r].cu);
}

int main(int argc, char** argv) {
  char why[512] = "";
  const char* path = getenv("XAL_CUDA_DRIVER");
  int simulated = 0, failed, i;
  xal_device_properties_t p0;
  xal_stream_t ipc_stream = NULL;
  if (argc == 2 && strcmp(argv[1], "--ipc-child") == 0) return icheck_ipc_child();
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--count") == 0 && i + 1 < argc && atol(argv[i + 1]) >= 2 * HEAD) {
      count = (size_t)atol(argv[++i]) / 2 * 2;
    } else {
      fprintf(stderr, "usage: xal-cuda-interopcheck [--count N]  (N >= %d floats per device)\n",
              2 * HEAD);
      return 2;
    }
  }
  if (icheck_driver_open(&drv, why, sizeof why) != 0) {
    fprintf(stderr, "xal-cuda-interopcheck: the CUDA driver: %s\n", why);
    return 2;
  }
  if (xal_init(NULL) != XAL_SUCCESS || !find_devices(&simulated)) {
    fprintf(stderr, "xal-cuda-interopcheck: xal lists no CUDA device\n");
    return 2;
  }
  if (framework_setup() && import_all() && run_work()) verify();
  if (ranks[0].s) release_imports();
  bad_inputs();
  memset(&p0, 0, sizeof p0);
  p0.struct_size = sizeof p0;
  xal_device_get_properties(ranks[0].dev, &p0);
  if (p0.capabilities & XAL_DEVICE_CAP_IPC) {
    if (icheck_status("ipc: xal_stream_create", xal_stream_create(ranks[0].dev, 0, &ipc_stream),
                      XAL_SUCCESS)) {
      icheck_ipc(&drv, ranks[0].dev, ipc_stream);
      xal_stream_destroy(ipc_stream);
    }
  } else {
    /* A real driver has IPC; the simulation only with XALSIM_CUDA_IPC=1. */
    icheck_record("ipc", simulated, "device has no XAL_DEVICE_CAP_IPC%s",
                  simulated ? " (simulated driver without XALSIM_CUDA_IPC=1: not checked)" : "");
  }
  icheck_status("xal_shutdown", xal_shutdown(), XAL_SUCCESS);
  framework_teardown();
  failed = icheck_report(path && *path ? path : "libcuda.so.1", simulated, nranks, count);
  return failed == 0 ? 0 : 1;
}
