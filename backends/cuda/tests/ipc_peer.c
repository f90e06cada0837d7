/* ipc_peer.c -- the other process of the CUDA IPC tests (sim_interop_test),
 * on the simulated driver with XALSIM_CUDA_IPC=1. Uses only xal.h.
 *
 *   ipc_peer export BYTES   allocates BYTES on xal device 0, fills byte i
 *                           with (i * 7 + 1) & 0xff, prints the handle in
 *                           hex and a newline, waits for a line on stdin,
 *                           and exits 0 when the memory then holds
 *                           (i * 3) & 0xff (the importer's bytes), else 3.
 *   ipc_peer import DEVICE  reads a hex handle line on stdin, opens it on
 *                           xal device DEVICE, checks the exporter's bytes,
 *                           writes (i * 3) & 0xff, closes it and prints
 *                           "ok BYTES".
 * Exit 2: an xal call failed (named on stderr); 4: bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xal/xal.h>

static int fail(const char* what, xal_status_t s) {
  xal_error_info_t e;
  memset(&e, 0, sizeof e);
  e.struct_size = sizeof e;
  xal_last_error(&e);
  fprintf(stderr, "ipc_peer: %s: %s: %s\n", what, xal_status_name(s), e.message);
  return 2;
}

#define CHECK(call)                                \
  do {                                             \
    xal_status_t s_ = (call);                      \
    if (s_ != XAL_SUCCESS) return fail(#call, s_); \
  } while (0)

static int run_export(xal_device_t dev, xal_stream_t s, size_t bytes, unsigned char* buf) {
  xal_devptr_t p;
  xal_ipc_handle_t h;
  char line[16];
  size_t i;
  for (i = 0; i < bytes; ++i) buf[i] = (unsigned char)((i * 7 + 1) & 0xff);
  CHECK(xal_mem_alloc(dev, bytes, &p));
  CHECK(xal_memcpy_htod(s, p, buf, bytes));
  CHECK(xal_stream_synchronize(s));
  CHECK(xal_mem_get_ipc_handle(dev, p, &h));
  for (i = 0; i < sizeof h.bytes; ++i) printf("%02x", h.bytes[i]);
  printf("\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin)) return 4;
  CHECK(xal_memcpy_dtoh(s, buf, p, bytes));
  CHECK(xal_stream_synchronize(s));
  for (i = 0; i < bytes; ++i)
    if (buf[i] != (unsigned char)((i * 3) & 0xff)) return 3;
  CHECK(xal_mem_free(dev, p));
  return 0;
}

static int run_import(xal_device_t dev, xal_stream_t s) {
  char line[2 * XAL_IPC_HANDLE_SIZE + 8];
  xal_ipc_handle_t h;
  xal_devptr_t p;
  size_t bytes = 0, i;
  unsigned char* buf;
  int rc = 0;
  if (!fgets(line, sizeof line, stdin) || strlen(line) < 2 * XAL_IPC_HANDLE_SIZE) return 4;
  for (i = 0; i < XAL_IPC_HANDLE_SIZE; ++i) {
    unsigned v;
    if (sscanf(line + 2 * i, "%2x", &v) != 1) return 4;
    h.bytes[i] = (uint8_t)v;
  }
  CHECK(xal_mem_open_ipc_handle(dev, &h, 0, &p, &bytes));
  buf = malloc(bytes);
  if (!buf) return 2;
  if (xal_memcpy_dtoh(s, buf, p, bytes) != XAL_SUCCESS || xal_stream_synchronize(s) != XAL_SUCCESS)
    rc = fail("reading the exporter's bytes", XAL_ERROR_INTERNAL);
  for (i = 0; rc == 0 && i < bytes; ++i)
    if (buf[i] != (unsigned char)((i * 7 + 1) & 0xff)) rc = 3;
  for (i = 0; i < bytes; ++i) buf[i] = (unsigned char)((i * 3) & 0xff);
  if (rc == 0 && (xal_memcpy_htod(s, p, buf, bytes) != XAL_SUCCESS ||
                  xal_stream_synchronize(s) != XAL_SUCCESS))
    rc = fail("writing the importer's bytes", XAL_ERROR_INTERNAL);
  free(buf);
  CHECK(xal_mem_close_ipc_handle(dev, p));
  if (rc == 0) printf("ok %zu\n", bytes);
  return rc;
}

int main(int argc, char** argv) {
  xal_device_t dev;
  xal_stream_t s;
  int rc = 4;
  if (argc != 3) return 4;
  CHECK(xal_init(NULL));
  if (strcmp(argv[1], "export") == 0) {
    size_t bytes = (size_t)strtoull(argv[2], NULL, 10);
    unsigned char* buf = bytes > 0 ? malloc(bytes) : NULL;
    if (!buf) return 4;
    CHECK(xal_device_get(0, &dev));
    CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &s));
    rc = run_export(dev, s, bytes, buf);
    free(buf);
  } else if (strcmp(argv[1], "import") == 0) {
    CHECK(xal_device_get((uint32_t)atoi(argv[2]), &dev));
    CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &s));
    rc = run_import(dev, s);
  } else {
    return 4;
  }
  xal_stream_destroy(s);
  xal_shutdown();
  return rc;
}
