/* The other process of the IPC tests: uses only xal.h.
 *
 *   ipc_peer export BYTES   allocates BYTES on device 0, fills byte i with
 *                           (i * 7 + 1) & 0xff, writes the handle in hex and
 *                           a newline on stdout, then waits for a line on
 *                           stdin and exits 0 when the memory then holds
 *                           (i * 3) & 0xff (what the importer wrote), else 3.
 *   ipc_peer import         reads a hex handle line from stdin, opens it on
 *                           device 0, checks the exporter's pattern, writes
 *                           (i * 3) & 0xff, prints "ok BYTES" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xal/xal.h>

static int fail(const char* what, xal_status_t s) {
  xal_error_info_t e;
  e.struct_size = sizeof e;
  xal_last_error(&e);
  fprintf(stderr, "ipc_peer: %s: %s: %s\n", what, xal_status_name(s), e.message);
  return 2;
}

#define CHECK(call)                      \
  do {                                   \
    xal_status_t s_ = (call);            \
    if (s_ != XAL_SUCCESS) return fail(#call, s_); \
  } while (0)

static int run_export(size_t bytes, xal_device_t dev, xal_stream_t s) {
  xal_devptr_t p;
  xal_ipc_handle_t h;
  unsigned char* buf = malloc(bytes);
  char line[16];
  size_t i;
  if (!buf) return 2;
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
  free(buf);
  return 0;
}

static int run_import(xal_device_t dev, xal_stream_t s) {
  char line[2 * XAL_IPC_HANDLE_SIZE + 8];
  xal_ipc_handle_t h;
  xal_devptr_t p;
  size_t bytes = 0, i;
  unsigned char* buf;
  if (!fgets(line, sizeof line, stdin) || strlen(line) < 2 * XAL_IPC_HANDLE_SIZE) return 4;
  for (i = 0; i < XAL_IPC_HANDLE_SIZE; ++i) {
    unsigned v;
    if (sscanf(line + 2 * i, "%2x", &v) != 1) return 4;
    h.bytes[i] = (uint8_t)v;
  }
  CHECK(xal_mem_open_ipc_handle(dev, &h, 0, &p, &bytes));
  buf = malloc(bytes);
  if (!buf) return 2;
  CHECK(xal_memcpy_dtoh(s, buf, p, bytes));
  CHECK(xal_stream_synchronize(s));
  for (i = 0; i < bytes; ++i)
    if (buf[i] != (unsigned char)((i * 7 + 1) & 0xff)) return 3;
  for (i = 0; i < bytes; ++i) buf[i] = (unsigned char)((i * 3) & 0xff);
  CHECK(xal_memcpy_htod(s, p, buf, bytes));
  CHECK(xal_stream_synchronize(s));
  CHECK(xal_mem_close_ipc_handle(dev, p));
  printf("ok %zu\n", bytes);
  free(buf);
  return 0;
}

int main(int argc, char** argv) {
  xal_device_t dev;
  xal_stream_t s;
  int rc;
  if (argc < 2) return 4;
  CHECK(xal_init(NULL));
  CHECK(xal_device_get(0, &dev));
  CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &s));
  if (strcmp(argv[1], "export") == 0 && argc == 3)
    rc = run_export((size_t)strtoull(argv[2], NULL, 10), dev, s);
  else if (strcmp(argv[1], "import") == 0)
    rc = run_import(dev, s);
  else
    rc = 4;
  xal_stream_destroy(s);
  xal_shutdown();
  return rc;
}
