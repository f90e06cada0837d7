/* interop_ipc.c -- xal-cuda-interopcheck's IPC check: this process exports
 * memory of its first CUDA device, a copy of the program started with
 * --ipc-child gets the handle over a pipe, opens it, checks this process's
 * bytes and writes its own; this process reads them through xal and
 * through the driver. */
#define _POSIX_C_SOURCE 200809L
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interop_check.h"

extern char** environ;

#define IPC_BYTES ((size_t)(4u << 20) + 100u)

static unsigned char parent_byte(size_t i) { return (unsigned char)((i * 7 + 1) & 0xff); }
static unsigned char child_byte(size_t i) { return (unsigned char)((i * 3 + 5) & 0xff); }

/* The first index where buf differs from byte(i), or `bytes`. */
static size_t first_mismatch(const unsigned char* buf, size_t bytes,
                             unsigned char (*byte)(size_t)) {
  size_t i;
  for (i = 0; i < bytes; ++i)
    if (buf[i] != byte(i)) return i;
  return bytes;
}

/* Starts this program with --ipc-child, its stdin and stdout on pipes. */
static pid_t spawn_child(FILE** to_child, FILE** from_child) {
  char self[4096];
  char arg[] = "--ipc-child";
  char* argv[3];
  int to[2], from[2];
  pid_t pid = -1;
  posix_spawn_file_actions_t fa;
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = '\0';
  if (pipe(to) != 0) return -1;
  if (pipe(from) != 0) {
    close(to[0]);
    close(to[1]);
    return -1;
  }
  argv[0] = self;
  argv[1] = arg;
  argv[2] = NULL;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  posix_spawn_file_actions_addclose(&fa, to[1]);
  posix_spawn_file_actions_addclose(&fa, from[0]);
  if (posix_spawn(&pid, self, &fa, NULL, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(to[0]);
  close(from[1]);
  *to_child = fdopen(to[1], "w");
  *from_child = fdopen(from[0], "r");
  return pid;
}

static int child_exit(pid_t pid, FILE* to_child, FILE* from_child) {
  int status = 0;
  if (to_child) fclose(to_child);
  if (from_child) fclose(from_child);
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void icheck_ipc(const icheck_driver_t* d, xal_device_t dev, xal_stream_t stream) {
  unsigned char* buf = malloc(IPC_BYTES);
  xal_devptr_t p = 0;
  xal_ipc_handle_t h;
  FILE* to_child = NULL;
  FILE* from_child = NULL;
  char line[64] = "";
  char expect[64];
  pid_t pid;
  size_t i, bad;
  int rc;
  CUresult r;
  if (!buf) {
    icheck_record("ipc", 0, "out of host memory");
    return;
  }
  for (i = 0; i < IPC_BYTES; ++i) buf[i] = parent_byte(i);
  if (!icheck_status("ipc: xal_mem_alloc", xal_mem_alloc(dev, IPC_BYTES, &p), XAL_SUCCESS) ||
      !icheck_status("ipc: fill", xal_memcpy_htod(stream, p, buf, IPC_BYTES), XAL_SUCCESS) ||
      !icheck_status("ipc: fill, synchronize", xal_stream_synchronize(stream), XAL_SUCCESS) ||
      !icheck_status("ipc: xal_mem_get_ipc_handle", xal_mem_get_ipc_handle(dev, p, &h),
                     XAL_SUCCESS)) {
    free(buf);
    return;
  }
  pid = spawn_child(&to_child, &from_child);
  if (!icheck_record("ipc: start the other process", pid > 0 && to_child && from_child,
                     "pid %d", (int)pid)) {
    child_exit(pid, to_child, from_child);
    free(buf);
    xal_mem_free(dev, p);
    return;
  }
  for (i = 0; i < sizeof h.bytes; ++i) fprintf(to_child, "%02x", h.bytes[i]);
  fprintf(to_child, "\n");
  fflush(to_child);
  if (!fgets(line, sizeof line, from_child)) line[0] = '\0';
  line[strcspn(line, "\n")] = '\0';
  rc = child_exit(pid, to_child, from_child);
  snprintf(expect, sizeof expect, "ok %zu", IPC_BYTES);
  icheck_record("ipc: the other process opened, checked, wrote",
                rc == 0 && strcmp(line, expect) == 0, "exit %d, said \"%s\"", rc, line);
  /* Its bytes, through xal and through the driver. */
  memset(buf, 0, IPC_BYTES);
  if (icheck_status("ipc: read back (xal_memcpy_dtoh)",
                    xal_memcpy_dtoh(stream, buf, p, IPC_BYTES), XAL_SUCCESS) &&
      icheck_status("ipc: read back, synchronize", xal_stream_synchronize(stream), XAL_SUCCESS)) {
    bad = first_mismatch(buf, IPC_BYTES, child_byte);
    icheck_record("ipc: the other process's bytes through xal", bad == IPC_BYTES,
                  bad == IPC_BYTES ? "%zu bytes" : "first difference at byte %zu", bad);
  }
  memset(buf, 0, IPC_BYTES);
  r = d->dtoh(buf, (CUdeviceptr)p, IPC_BYTES);
  bad = r == CUDA_SUCCESS ? first_mismatch(buf, IPC_BYTES, child_byte) : 0;
  icheck_record("ipc: the other process's bytes through cuMemcpyDtoH",
                r == CUDA_SUCCESS && bad == IPC_BYTES, "%s, %s %zu", icheck_cu_name(d, r),
                bad == IPC_BYTES ? "bytes right:" : "wrong at byte", bad);
  icheck_status("ipc: xal_mem_free", xal_mem_free(dev, p), XAL_SUCCESS);
  free(buf);
}

static int child_fail(const char* what, xal_status_t s) {
  xal_error_info_t e;
  memset(&e, 0, sizeof e);
  e.struct_size = sizeof e;
  xal_last_error(&e);
  fprintf(stderr, "xal-cuda-interopcheck --ipc-child: %s: %s: %s\n", what, xal_status_name(s),
          e.message);
  return 2;
}

#define CHILD_CHECK(call)                                  \
  do {                                                     \
    const xal_status_t s_ = (call);                        \
    if (s_ != XAL_SUCCESS) return child_fail(#call, s_);   \
  } while (0)

/* The first CUDA device xal lists. */
static xal_status_t first_cuda_device(xal_device_t* out) {
  uint32_t count = 0, i;
  xal_status_t s = xal_device_count(&count);
  for (i = 0; s == XAL_SUCCESS && i < count; ++i) {
    xal_device_properties_t p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    if ((s = xal_device_get(i, out)) != XAL_SUCCESS) break;
    if ((s = xal_device_get_properties(*out, &p)) != XAL_SUCCESS) break;
    if (strcmp(p.backend, "cuda") == 0) return XAL_SUCCESS;
  }
  return s != XAL_SUCCESS ? s : XAL_ERROR_NOT_SUPPORTED;
}

static int child_run(xal_device_t dev, xal_stream_t s, unsigned char* buf) {
  char line[2 * XAL_IPC_HANDLE_SIZE + 8];
  xal_ipc_handle_t h;
  xal_devptr_t p = 0;
  size_t bytes = 0, i;
  if (!fgets(line, sizeof line, stdin) || strlen(line) < 2 * XAL_IPC_HANDLE_SIZE) return 4;
  for (i = 0; i < XAL_IPC_HANDLE_SIZE; ++i) {
    unsigned v;
    if (sscanf(line + 2 * i, "%2x", &v) != 1) return 4;
    h.bytes[i] = (uint8_t)v;
  }
  CHILD_CHECK(xal_mem_open_ipc_handle(dev, &h, 0, &p, &bytes));
  if (bytes != IPC_BYTES) return 3;
  CHILD_CHECK(xal_memcpy_dtoh(s, buf, p, bytes));
  CHILD_CHECK(xal_stream_synchronize(s));
  if (first_mismatch(buf, bytes, parent_byte) != bytes) {
    fprintf(stderr, "xal-cuda-interopcheck --ipc-child: the exporter's bytes differ\n");
    return 3;
  }
  for (i = 0; i < bytes; ++i) buf[i] = child_byte(i);
  CHILD_CHECK(xal_memcpy_htod(s, p, buf, bytes));
  CHILD_CHECK(xal_stream_synchronize(s));
  CHILD_CHECK(xal_mem_close_ipc_handle(dev, p));
  printf("ok %zu\n", bytes);
  fflush(stdout);
  return 0;
}

int icheck_ipc_child(void) {
  xal_device_t dev = NULL;
  xal_stream_t s = NULL;
  unsigned char* buf = malloc(IPC_BYTES);
  int rc;
  if (!buf) return 2;
  CHILD_CHECK(xal_init(NULL));
  CHILD_CHECK(first_cuda_device(&dev));
  CHILD_CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &s));
  rc = child_run(dev, s, buf);
  free(buf);
  xal_stream_destroy(s);
  xal_shutdown();
  return rc;
}
