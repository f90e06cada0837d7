/*
 * fault_tolerant_training.c -- a small data-parallel training loop that
 * survives the faults of real cards (docs/FAULTS.md).
 *
 * Every device holds a replica of the parameters and a gradient buffer.
 * Each step: upload this step's gradients to every device, sum them across
 * the devices (xal_allreduce when the backend has collectives, else through
 * the host with dtoh/htod), apply the update and push the new parameters to
 * every replica. What it does about faults:
 *   - a transient error (out of memory, time-out, a non-sticky vendor
 *     error): retry the step;
 *   - a device that is lost or has a sticky error (xal_device_get_health
 *     says ERROR or LOST): xal_device_reset, then restore its replica from
 *     the host checkpoint of the last good step and redo the step;
 *   - silent data corruption: every buffer is read back and checked against
 *     a checksum; a mismatch redoes the step.
 * At the end the parameters are compared with a host-only reference run;
 * exit 0 means training finished with the right result. It prints one line
 * "fault_tolerant_training: result=ok steps=.. errors=.. resets=.. ..." that
 * scripts can parse.
 *
 * Uses only xal.h. Options: argv[1] = steps (default 12).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xal/xal.h"

#define MAX_DEVICES 4
#define PARAMS 1024
#define MAX_ATTEMPTS 64
#define CORRUPTED 1000 /* not an xal status: a checksum mismatch */

typedef struct {
  xal_device_t device;
  xal_stream_t stream;
  xal_devptr_t params;
  xal_devptr_t grads;
  int params_valid; /* the replica holds the checkpointed parameters */
} replica_t;

typedef struct {
  unsigned errors, retries, resets, restores, corruptions, host_reductions;
} stats_t;

static stats_t stats;

static uint64_t checksum(const float* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  size_t i;
  for (i = 0; i < n * sizeof(float); ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Small integers, so that every sum is exact whatever the order. */
static void gradient(int step, int device, float* out) {
  int j;
  for (j = 0; j < PARAMS; ++j) {
    out[j] = (float)(((step * 31 + device * 7 + j) % 17) - 8);
  }
}

static void update(float* params, const float* sum) {
  int j;
  for (j = 0; j < PARAMS; ++j) params[j] -= 0.25f * sum[j];
}

static void print_error(const char* what, xal_status_t status) {
  xal_error_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  xal_last_error(&info);
  fprintf(stderr, "  %s: %s (vendor %s %lld): %s\n", what,
          xal_status_name(status), info.vendor_name,
          (long long)info.vendor_code, info.message);
}

/* Counts and reports a failed cleanup call (an injected fault may hit
 * those too); cleanup goes on. */
static void check_cleanup(const char* what, xal_status_t s) {
  if (s == XAL_SUCCESS) return;
  ++stats.errors;
  print_error(what, s);
}

static void release(replica_t* r) {
  if (r->stream != NULL) check_cleanup("xal_stream_destroy", xal_stream_destroy(r->stream));
  if (r->params != 0) check_cleanup("xal_mem_free", xal_mem_free(r->device, r->params));
  if (r->grads != 0) check_cleanup("xal_mem_free", xal_mem_free(r->device, r->grads));
  r->stream = NULL;
  r->params = r->grads = 0;
  r->params_valid = 0;
}

/* After a reset every allocation and stream of the device is gone. */
static void forget(replica_t* r) {
  r->stream = NULL;
  r->params = r->grads = 0;
  r->params_valid = 0;
}

static xal_status_t setup(replica_t* r) {
  xal_status_t s = XAL_SUCCESS;
  const size_t bytes = PARAMS * sizeof(float);
  if (r->stream == NULL) s = xal_stream_create(r->device, 0, &r->stream);
  if (s == XAL_SUCCESS && r->params == 0) s = xal_mem_alloc(r->device, bytes, &r->params);
  if (s == XAL_SUCCESS && r->grads == 0) s = xal_mem_alloc(r->device, bytes, &r->grads);
  return s;
}

/* Waits for the stream and checks that `dev` holds `expect`. */
static xal_status_t verify(replica_t* r, xal_devptr_t dev, const float* expect,
                           float* scratch) {
  xal_status_t s = xal_memcpy_dtoh(r->stream, scratch, dev, PARAMS * sizeof(float));
  if (s == XAL_SUCCESS) s = xal_stream_synchronize(r->stream);
  if (s != XAL_SUCCESS) return s;
  return checksum(scratch, PARAMS) == checksum(expect, PARAMS) ? XAL_SUCCESS
                                                               : CORRUPTED;
}

static xal_status_t upload(replica_t* r, xal_devptr_t dev, const float* src,
                           float* scratch) {
  xal_status_t s = xal_memcpy_htod(r->stream, dev, src, PARAMS * sizeof(float));
  if (s != XAL_SUCCESS) return s;
  return verify(r, dev, src, scratch);
}

typedef struct {
  replica_t reps[MAX_DEVICES];
  int n;
  xal_comm_t comms[MAX_DEVICES];
  int have_comm;
  int no_collectives; /* the backend has none: reduce on the host */
  float grads[MAX_DEVICES][PARAMS];
  float sum[PARAMS];
  float next[PARAMS];
  float scratch[PARAMS];
} trainer_t;

/* Aborts every rank first: a destroyed comm's queued calls would otherwise
 * wait for their peers until the communicator's timeout. */
static void drop_comm(trainer_t* t) {
  int i;
  if (!t->have_comm) return;
  for (i = 0; i < t->n; ++i) check_cleanup("xal_comm_abort", xal_comm_abort(t->comms[i]));
  for (i = 0; i < t->n; ++i) check_cleanup("xal_comm_destroy", xal_comm_destroy(t->comms[i]));
  t->have_comm = 0;
}

static xal_status_t reduce_collective(trainer_t* t, int* failed) {
  xal_status_t s = XAL_SUCCESS;
  int i;
  if (!t->have_comm) {
    xal_device_t devs[MAX_DEVICES];
    for (i = 0; i < t->n; ++i) devs[i] = t->reps[i].device;
    s = xal_comm_create(devs, (uint32_t)t->n, NULL, t->comms);
    if (s == XAL_ERROR_NOT_SUPPORTED) {
      printf("collectives not supported here: reducing on the host\n");
      t->no_collectives = 1;
      return s;
    }
    if (s != XAL_SUCCESS) return s;
    t->have_comm = 1;
  }
  s = xal_group_start();
  for (i = 0; s == XAL_SUCCESS && i < t->n; ++i) {
    *failed = i;
    s = xal_allreduce(t->comms[i], t->reps[i].grads, t->reps[i].grads, PARAMS,
                      XAL_DTYPE_F32, XAL_OP_SUM, t->reps[i].stream);
  }
  {
    const xal_status_t e = xal_group_end();
    if (s == XAL_SUCCESS) s = e;
  }
  for (i = 0; s == XAL_SUCCESS && i < t->n; ++i) {
    *failed = i;
    s = verify(&t->reps[i], t->reps[i].grads, t->sum, t->scratch);
  }
  if (s != XAL_SUCCESS && s != CORRUPTED) drop_comm(t);
  return s;
}

static xal_status_t reduce_host(trainer_t* t, int* failed) {
  xal_status_t s = XAL_SUCCESS;
  float acc[PARAMS];
  int i, j;
  ++stats.host_reductions;
  memset(acc, 0, sizeof acc);
  for (i = 0; i < t->n; ++i) {
    *failed = i;
    s = verify(&t->reps[i], t->reps[i].grads, t->grads[i], t->scratch);
    if (s != XAL_SUCCESS) return s;
    for (j = 0; j < PARAMS; ++j) acc[j] += t->scratch[j];
  }
  for (i = 0; i < t->n; ++i) {
    *failed = i;
    s = upload(&t->reps[i], t->reps[i].grads, acc, t->scratch);
    if (s != XAL_SUCCESS) return s;
  }
  return checksum(acc, PARAMS) == checksum(t->sum, PARAMS) ? XAL_SUCCESS : CORRUPTED;
}

/* One attempt at a step. `params` is the checkpoint of the last good step. */
static xal_status_t attempt(trainer_t* t, int step, const float* params,
                            int* failed) {
  xal_status_t s;
  int i, j;
  memset(t->sum, 0, sizeof t->sum);
  for (i = 0; i < t->n; ++i) {
    replica_t* r = &t->reps[i];
    *failed = i;
    s = setup(r);
    if (s != XAL_SUCCESS) return s;
    if (!r->params_valid) {
      s = upload(r, r->params, params, t->scratch);
      if (s != XAL_SUCCESS) return s;
      if (step > 0) {
        ++stats.restores;
        printf("step %d: restored device %d from the checkpoint\n", step, i);
      }
      r->params_valid = 1;
    }
    gradient(step, i, t->grads[i]);
    for (j = 0; j < PARAMS; ++j) t->sum[j] += t->grads[i][j];
    s = upload(r, r->grads, t->grads[i], t->scratch);
    if (s != XAL_SUCCESS) return s;
  }
  s = XAL_ERROR_NOT_SUPPORTED;
  if (!t->no_collectives) s = reduce_collective(t, failed);
  if (t->no_collectives) s = reduce_host(t, failed);
  if (s != XAL_SUCCESS) return s;
  memcpy(t->next, params, sizeof t->next);
  update(t->next, t->sum);
  for (i = 0; i < t->n; ++i) {
    *failed = i;
    t->reps[i].params_valid = 0; /* until the new parameters are verified */
    s = upload(&t->reps[i], t->reps[i].params, t->next, t->scratch);
    if (s != XAL_SUCCESS) return s;
    t->reps[i].params_valid = 1;
  }
  return XAL_SUCCESS;
}

static int needs_reset(replica_t* r, xal_status_t status) {
  xal_device_health_t h;
  if (status == XAL_ERROR_DEVICE_LOST || status == XAL_ERROR_HARDWARE) return 1;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  if (xal_device_get_health(r->device, &h) != XAL_SUCCESS) return 1;
  return h.state == XAL_HEALTH_ERROR || h.state == XAL_HEALTH_LOST;
}

/* Handles a failed attempt; returns 0 to retry, -1 to give up. */
static int recover(trainer_t* t, int step, xal_status_t status, int failed) {
  int i, reset_any = 0;
  xal_status_t s;
  if (status == CORRUPTED) {
    ++stats.corruptions;
    printf("step %d: corrupted data on device %d detected by checksum, "
           "redoing the step\n", step, failed);
  } else {
    ++stats.errors;
    print_error("step failed", status);
  }
  for (i = 0; i < t->n; ++i) {
    replica_t* r = &t->reps[i];
    if (!needs_reset(r, i == failed ? status : XAL_SUCCESS)) continue;
    printf("step %d: device %d needs a reset (%s)\n", step, i,
           xal_status_name(status));
    drop_comm(t);
    s = xal_device_reset(r->device);
    if (s != XAL_SUCCESS) {
      print_error("xal_device_reset", s);
      return -1;
    }
    forget(r);
    ++stats.resets;
    reset_any = 1;
  }
  if (!reset_any && status == XAL_ERROR_TIMEOUT) drop_comm(t);
  ++stats.retries;
  return 0;
}

int main(int argc, char** argv) {
  static trainer_t t;
  static float params[PARAMS], reference[PARAMS], check[PARAMS];
  const int steps = argc > 1 ? atoi(argv[1]) : 12;
  uint32_t count = 0;
  xal_status_t s;
  int i, step, ok;

  s = xal_init(NULL);
  if (s != XAL_SUCCESS) {
    print_error("xal_init", s);
    return 3;
  }
  s = xal_device_count(&count);
  if (s != XAL_SUCCESS || count == 0) {
    fprintf(stderr, "no devices\n");
    xal_shutdown();
    return 3;
  }
  memset(&t, 0, sizeof t);
  t.n = count > MAX_DEVICES ? MAX_DEVICES : (int)count;
  for (i = 0; i < t.n; ++i) {
    s = xal_device_get((uint32_t)i, &t.reps[i].device);
    if (s != XAL_SUCCESS) {
      print_error("xal_device_get", s);
      xal_shutdown();
      return 3;
    }
  }
  for (i = 0; i < PARAMS; ++i) params[i] = reference[i] = (float)(i % 5);

  for (step = 0; step < steps; ++step) {
    int tries = 0, failed = 0;
    for (;;) {
      s = attempt(&t, step, params, &failed);
      if (s == XAL_SUCCESS) break;
      if (++tries >= MAX_ATTEMPTS || recover(&t, step, s, failed) != 0) {
        fprintf(stderr, "step %d: giving up after %d attempts\n", step, tries);
        printf("fault_tolerant_training: result=gave_up step=%d\n", step);
        xal_shutdown();
        return 2;
      }
    }
    memcpy(params, t.next, sizeof params); /* the new host checkpoint */
  }

  /* The reference: the same training on the host alone. */
  for (step = 0; step < steps; ++step) {
    float sum[PARAMS], g[PARAMS];
    int j;
    memset(sum, 0, sizeof sum);
    for (i = 0; i < t.n; ++i) {
      gradient(step, i, g);
      for (j = 0; j < PARAMS; ++j) sum[j] += g[j];
    }
    update(reference, sum);
  }
  ok = memcmp(params, reference, sizeof params) == 0;
  for (i = 0; ok && i < t.n; ++i) {
    /* Every replica must hold the result too (retrying transient errors). */
    int tries;
    for (tries = 0; tries < MAX_ATTEMPTS; ++tries) {
      int failed = i;
      s = setup(&t.reps[i]);
      if (s == XAL_SUCCESS && !t.reps[i].params_valid) {
        s = upload(&t.reps[i], t.reps[i].params, params, check);
        if (s == XAL_SUCCESS) t.reps[i].params_valid = 1;
      }
      if (s == XAL_SUCCESS) s = verify(&t.reps[i], t.reps[i].params, reference, check);
      if (s == XAL_SUCCESS || recover(&t, steps, s, failed) != 0) break;
    }
    ok = s == XAL_SUCCESS;
  }
  drop_comm(&t);
  for (i = 0; i < t.n; ++i) release(&t.reps[i]);
  s = xal_shutdown();
  if (s != XAL_SUCCESS) print_error("xal_shutdown", s);
  printf("fault_tolerant_training: result=%s steps=%d devices=%d errors=%u "
         "retries=%u resets=%u restores=%u corruptions=%u host_reductions=%u\n",
         ok ? "ok" : "wrong", steps, t.n, stats.errors, stats.retries,
         stats.resets, stats.restores, stats.corruptions, stats.host_reductions);
  if (s != XAL_SUCCESS) return 3; /* xal_shutdown failed */
  return ok ? 0 : 1;
}
