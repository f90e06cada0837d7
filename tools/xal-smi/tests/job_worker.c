/* A process of a job for the tools' tests: with XAL_QUOTA_LEDGER and
 * XAL_PARTITIONS set by the caller, copies to device argv[1] for argv[2]
 * seconds, printing "ready" once its first copies are done and "copied N"
 * (bytes) at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xal/xal.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  enum { kBytes = 1 << 20 };
  xal_device_t dev = NULL;
  xal_stream_t s = NULL;
  xal_devptr_t p = 0;
  char* host = calloc(1, kBytes);
  double until;
  unsigned long long n = 0;
  if (argc < 3 || !host) return 2;
  if (xal_init(NULL) || xal_device_get((uint32_t)atoi(argv[1]), &dev) ||
      xal_stream_create(dev, 0, &s) || xal_mem_alloc(dev, kBytes, &p)) {
    fprintf(stderr, "job_worker: setup failed\n");
    return 1;
  }
  until = now_s() + atof(argv[2]);
  while (now_s() < until) {
    if (xal_memcpy_htod(s, p, host, kBytes) || xal_stream_synchronize(s)) return 1;
    if (++n == 4) {
      printf("ready\n");
      fflush(stdout);
    }
  }
  printf("copied %llu\n", n * (unsigned long long)kBytes);
  xal_mem_free(dev, p);
  xal_stream_destroy(s);
  free(host);
  return xal_shutdown() == XAL_SUCCESS ? 0 : 1;
}
