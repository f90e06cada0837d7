/*
 * hello.c -- the smallest complete xal program: list the devices, allocate
 * device memory, copy a pattern to the device and back, check it, and read
 * the error detail of a call that fails on purpose.
 *
 * C99, only <xal/xal.h>, only libxal:
 *   cc hello.c $(pkg-config --cflags --libs xal) -o hello
 *
 * Exit status 0 when every step worked.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xal/xal.h>

/* Prints the calling thread's last error detail to `out`. */
static void print_last_error(FILE* out, const char* what,
                             xal_status_t status) {
  xal_error_info_t err;
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  if (xal_last_error(&err) != XAL_SUCCESS) {
    fprintf(out, "%s: %s (no detail)\n", what, xal_status_name(status));
    return;
  }
  fprintf(out, "%s: %s\n", what, xal_status_name(status));
  fprintf(out, "  status    %s\n", xal_status_name(err.status));
  fprintf(out, "  operation %s\n", err.operation);
  fprintf(out, "  backend   %s\n", err.backend[0] ? err.backend : "(core)");
  if (err.vendor_code != 0 || err.vendor_name[0] != '\0') {
    fprintf(out, "  vendor    %lld %s\n", (long long)err.vendor_code,
            err.vendor_name);
  }
  fprintf(out, "  message   %s\n", err.message);
}

/* Jumps to the clean-up with the error detail printed when `call` fails. */
#define CHECK(call)                        \
  do {                                     \
    xal_status_t s_ = (call);              \
    if (s_ != XAL_SUCCESS) {               \
      print_last_error(stderr, #call, s_); \
      goto done;                           \
    }                                      \
  } while (0)

/* A clean-up call's failure is printed and fails the run; returns 1 on
 * success, 0 on failure. */
static int cleanup_ok(const char* what, xal_status_t status) {
  if (status == XAL_SUCCESS) return 1;
  print_last_error(stderr, what, status);
  return 0;
}

/* Whether XAL_VALIDATION turns validation off, read as xal reads it: 0, off,
 * false or no, in any case, blanks around ignored. */
static int validation_off(void) {
  static const char* const off[] = {"0", "off", "false", "no"};
  const char* v = getenv("XAL_VALIDATION");
  size_t len, i, j;
  if (v == NULL) return 0;
  while (isspace((unsigned char)*v)) ++v;
  len = strlen(v);
  while (len > 0 && isspace((unsigned char)v[len - 1])) --len;
  for (i = 0; i < sizeof off / sizeof off[0]; ++i) {
    if (strlen(off[i]) != len) continue;
    for (j = 0; j < len && tolower((unsigned char)v[j]) == off[i][j]; ++j) {
    }
    if (j == len) return 1;
  }
  return 0;
}

int main(void) {
  enum { BYTES = 1 << 20 };
  int rc = 1;
  int initialised = 0;
  uint32_t count = 0, i;
  xal_device_t dev = NULL;
  xal_stream_t stream = NULL;
  xal_devptr_t buf = 0;
  unsigned char* host_in = malloc(BYTES);
  unsigned char* host_out = malloc(BYTES);
  xal_status_t s;

  if (host_in == NULL || host_out == NULL) {
    fprintf(stderr, "hello: out of host memory\n");
    goto done;
  }
  printf("xal ABI %u.%u\n", (unsigned)XAL_ABI_MAJOR(xal_abi_version()),
         (unsigned)XAL_ABI_MINOR(xal_abi_version()));

  CHECK(xal_init(NULL));
  initialised = 1;

  /* 1. List the devices. */
  CHECK(xal_device_count(&count));
  printf("%u device(s)\n", (unsigned)count);
  for (i = 0; i < count; ++i) {
    xal_device_properties_t props;
    xal_device_t d;
    memset(&props, 0, sizeof(props));
    props.struct_size = sizeof(props);
    CHECK(xal_device_get(i, &d));
    CHECK(xal_device_get_properties(d, &props));
    printf("  [%u] %s (%s, backend %s), %.1f GiB, %u compute units\n",
           (unsigned)i, props.name, props.vendor, props.backend,
           (double)props.memory_bytes / (1024.0 * 1024.0 * 1024.0),
           (unsigned)props.compute_units);
  }
  if (count == 0) {
    fprintf(stderr, "hello: no device (see xal-info for the reasons)\n");
    goto done;
  }

  /* 2. Allocate on device 0 and make a stream. */
  CHECK(xal_device_get(0, &dev));
  CHECK(xal_mem_alloc(dev, BYTES, &buf));
  CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &stream));

  /* 3. Copy a pattern there and back, then check it. */
  for (i = 0; i < BYTES; ++i) {
    host_in[i] = (unsigned char)((i * 31u + 7u) & 0xffu);
  }
  memset(host_out, 0, BYTES);
  CHECK(xal_memcpy_htod(stream, buf, host_in, BYTES));
  CHECK(xal_memcpy_dtoh(stream, host_out, buf, BYTES));
  CHECK(xal_stream_synchronize(stream));
  if (memcmp(host_in, host_out, BYTES) != 0) {
    fprintf(stderr, "hello: the data came back different\n");
    goto done;
  }
  printf("copied %d bytes to device 0 and back: pattern OK\n", BYTES);

  /* 4. An error on purpose: a copy that runs one byte past the end of the
   *    allocation. xal refuses it and says why. Without validation
   *    (XAL_VALIDATION=0, off, false or no) nothing would stop it, so it is
   *    skipped. */
  if (validation_off()) {
    printf("validation is off: skipping the copy past the end\n");
  } else {
    s = xal_memcpy_htod(stream, buf + 1, host_in, BYTES);
    if (s == XAL_SUCCESS) {
      fprintf(stderr, "hello: a copy past the end was accepted\n");
      CHECK(xal_stream_synchronize(stream));
      goto done;
    }
    printf("a copy past the end was refused, as expected:\n");
    print_last_error(stdout, "xal_memcpy_htod(past the end)", s);
  }

  rc = 0;
done:
  if (stream != NULL && !cleanup_ok("xal_stream_destroy", xal_stream_destroy(stream))) {
    rc = 1;
  }
  if (buf != 0 && !cleanup_ok("xal_mem_free", xal_mem_free(dev, buf))) {
    rc = 1;
  }
  if (initialised && !cleanup_ok("xal_shutdown", xal_shutdown())) {
    rc = 1;
  }
  free(host_in);
  free(host_out);
  if (rc == 0) {
    printf("hello: OK\n");
  }
  return rc;
}
