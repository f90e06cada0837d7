/*
 * A program with planted unhandled error paths, for the sweep test: it
 * handles a failure of its first allocation, uses the second without
 * checking it (and aborts when that one fails), and waits forever for a
 * retry that never comes when the third fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "xal/xal.h"

int main(void) {
  xal_device_t dev = NULL;
  xal_devptr_t a = 0, b = 0, c = 0;
  if (xal_init(NULL) != XAL_SUCCESS || xal_device_get(0, &dev) != XAL_SUCCESS) {
    return 3;
  }
  if (xal_mem_alloc(dev, 256, &a) != XAL_SUCCESS) {
    fprintf(stderr, "first allocation failed: handled\n");
    xal_shutdown();
    return 0;
  }
  xal_mem_alloc(dev, 256, &b); /* the bug: the status is ignored */
  if (b == 0) abort();         /* ...and the program dies on a null pointer */
  if (xal_mem_alloc(dev, 256, &c) != XAL_SUCCESS) {
    fprintf(stderr, "third allocation failed: waiting\n");
    for (;;) sleep(1); /* the second bug: a hang */
  } else {
    xal_mem_free(dev, c);
  }
  xal_mem_free(dev, b);
  xal_mem_free(dev, a);
  xal_shutdown();
  return 0;
}
