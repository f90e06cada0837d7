/* framework_interop.c -- how a framework hands its own memory and streams to
 * xal without a copy (ABI 1.1).
 *
 * A framework owns its buffers and streams. Here "the framework" is played
 * by plain host arrays (the mock's device memory is host memory, so a host
 * pointer is imported with XAL_MEM_IMPORT_HOST) and by a stream it made
 * itself, of which it keeps only the native handle. It imports both, runs
 * an allreduce in place over every device on the imported memory and the
 * imported streams, and reads the result through its own pointers: no byte
 * was copied in or out by xal.
 *
 * On a CUDA device a framework would pass its CUdeviceptr (flags 0) and its
 * CUstream instead; the calls are the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <xal/xal.h>
#include <xal/xal_backend.h>

#define MAX_DEVICES 8
#define COUNT 1024

static int check(xal_status_t s, const char* what) {
  if (s == XAL_SUCCESS) return 1;
  {
    xal_error_info_t e;
    e.struct_size = sizeof e;
    xal_last_error(&e);
    fprintf(stderr, "%s: %s: %s\n", what, xal_status_name(s), e.message);
  }
  return 0;
}

int main(void) {
  xal_device_t devs[MAX_DEVICES];
  xal_stream_t own[MAX_DEVICES], imported[MAX_DEVICES];
  xal_comm_t comms[MAX_DEVICES];
  xal_devptr_t buf[MAX_DEVICES];
  float* data[MAX_DEVICES];
  uint32_t n = 0, i, k;
  int ok = 1;

  if (!check(xal_init(NULL), "xal_init") || !check(xal_device_count(&n), "xal_device_count"))
    return 1;
  if (n > MAX_DEVICES) n = MAX_DEVICES;
  for (i = 0; i < n; ++i) {
    xal_device_properties_t p;
    const xal_backend_table_t* table;
    void* native;
    p.struct_size = sizeof p;
    if (!check(xal_device_get(i, &devs[i]), "xal_device_get") ||
        !check(xal_device_get_properties(devs[i], &p), "xal_device_get_properties"))
      return 1;
    if (!(p.capabilities & XAL_DEVICE_CAP_HOST_POINTERS) ||
        !(p.capabilities & XAL_DEVICE_CAP_STREAM_IMPORT)) {
      printf("device %u (%s) cannot import host memory and streams: skipped\n", i, p.name);
      xal_shutdown();
      return 0;
    }
    /* The framework's buffer: rank i holds i + 1 everywhere. */
    data[i] = malloc(COUNT * sizeof(float));
    if (!data[i]) return 1;
    for (k = 0; k < COUNT; ++k) data[i][k] = (float)(i + 1);
    /* The framework's stream, of which it keeps the native handle. */
    if (!check(xal_stream_create(devs[i], XAL_STREAM_DEFAULT, &own[i]), "xal_stream_create") ||
        !check(xal_handle_get_native(own[i], &table, &native), "xal_handle_get_native"))
      return 1;
    /* Hand both to xal. */
    if (!check(xal_mem_import(devs[i], (uint64_t)(uintptr_t)data[i], COUNT * sizeof(float),
                              XAL_MEM_IMPORT_HOST, &buf[i]), "xal_mem_import") ||
        !check(xal_stream_import(devs[i], (uint64_t)(uintptr_t)native, 0, &imported[i]),
               "xal_stream_import"))
      return 1;
  }
  if (!check(xal_comm_create(devs, n, NULL, comms), "xal_comm_create")) return 1;
  if (!check(xal_group_start(), "xal_group_start")) return 1;
  for (i = 0; i < n; ++i)
    ok &= check(xal_allreduce(comms[i], buf[i], buf[i], COUNT, XAL_DTYPE_F32, XAL_OP_SUM,
                              imported[i]), "xal_allreduce");
  if (!check(xal_group_end(), "xal_group_end") || !ok) return 1;
  for (i = 0; i < n; ++i) ok &= check(xal_stream_synchronize(imported[i]), "synchronize");
  /* Read through the framework's own pointers. */
  for (i = 0; i < n && ok; ++i)
    for (k = 0; k < COUNT; ++k)
      if (data[i][k] != (float)(n * (n + 1) / 2)) {
        fprintf(stderr, "rank %u element %u: %g, expected %u\n", i, k, data[i][k],
                n * (n + 1) / 2);
        ok = 0;
        break;
      }
  for (i = 0; i < n; ++i) {
    xal_comm_abort(comms[i]);
    ok &= check(xal_comm_destroy(comms[i]), "xal_comm_destroy");
    ok &= check(xal_stream_destroy(imported[i]), "xal_stream_destroy (imported)");
    ok &= check(xal_mem_free(devs[i], buf[i]), "xal_mem_free (forgets the import)");
    ok &= check(xal_stream_destroy(own[i]), "xal_stream_destroy (the framework's)");
    free(data[i]);
  }
  xal_shutdown();
  printf("%u device(s): allreduce in place on imported memory and streams %s\n", n,
         ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
