/* A C99 program against libxal: lists devices, round-trips a pattern,
 * reads the error detail of a bad call. XAL_BACKENDS names the testdev
 * plugin (set by CTest). Exit status 0 on success. */
#include <stdio.h>
#include <string.h>

#include "xal/xal.h"
#include "xal/xal_backend.h"
#include "xal/xal_fault.h"

#define CHECK(call)                                                      \
  do {                                                                   \
    xal_status_t s_ = (call);                                            \
    if (s_ != XAL_SUCCESS) {                                             \
      fprintf(stderr, "%s failed: %s\n", #call, xal_status_name(s_));    \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(void) {
  uint32_t n = 0, i;
  xal_device_t dev;
  xal_stream_t stream;
  xal_devptr_t p;
  unsigned char in[1000], out[1000];
  xal_error_info_t err;
  xal_status_t s;

  CHECK(xal_init(NULL));
  CHECK(xal_device_count(&n));
  if (n == 0) {
    fprintf(stderr, "no devices\n");
    return 1;
  }
  for (i = 0; i < n; ++i) {
    xal_device_properties_t props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    CHECK(xal_device_get(i, &dev));
    CHECK(xal_device_get_properties(dev, &props));
    printf("device %u: %s (%s)\n", i, props.name, props.backend);
  }
  CHECK(xal_device_get(0, &dev));
  CHECK(xal_stream_create(dev, XAL_STREAM_DEFAULT, &stream));
  CHECK(xal_mem_alloc(dev, sizeof in, &p));
  for (i = 0; i < sizeof in; ++i) in[i] = (unsigned char)(i * 3);
  CHECK(xal_memcpy_htod(stream, p, in, sizeof in));
  CHECK(xal_memcpy_dtoh(stream, out, p, sizeof out));
  CHECK(xal_stream_synchronize(stream));
  if (memcmp(in, out, sizeof in) != 0) {
    fprintf(stderr, "pattern mismatch\n");
    return 1;
  }
  s = xal_memcpy_htod(stream, p, in, sizeof in + 1);
  memset(&err, 0, sizeof err);
  err.struct_size = sizeof err;
  CHECK(xal_last_error(&err));
  if (s != XAL_ERROR_OUT_OF_BOUNDS || err.status != s ||
      strcmp(err.operation, "xal_memcpy_htod") != 0 || err.message[0] == 0) {
    fprintf(stderr, "unexpected error detail: %s %s\n", xal_status_name(s),
            err.message);
    return 1;
  }
  printf("bad copy: %s: %s\n", xal_status_name(s), err.message);

  /* Enum parameters outside their range, as any C caller may pass. */
  {
    xal_comm_t comm;
    CHECK(xal_comm_create(&dev, 1, NULL, &comm));
    s = xal_allreduce(comm, p, p, 4, (xal_dtype_t)1000, XAL_OP_SUM, stream);
    if (s != XAL_ERROR_INVALID_ARGUMENT) {
      fprintf(stderr, "dtype 1000 gave %s\n", xal_status_name(s));
      return 1;
    }
    s = xal_allreduce(comm, p, p, 4, XAL_DTYPE_F32, (xal_op_t)-3, stream);
    if (s != XAL_ERROR_INVALID_ARGUMENT) {
      fprintf(stderr, "op -3 gave %s\n", xal_status_name(s));
      return 1;
    }
    CHECK(xal_allreduce(comm, p, p, 4, XAL_DTYPE_F32, XAL_OP_SUM, stream));
    CHECK(xal_comm_destroy(comm));
  }
  CHECK(xal_mem_free(dev, p));
  CHECK(xal_stream_destroy(stream));
  CHECK(xal_shutdown());
  printf("ok\n");
  return 0;
}
