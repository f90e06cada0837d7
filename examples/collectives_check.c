/*
 * collectives_check.c -- an independent check of xal's collectives: every
 * collective x dtype x op x count, in place and out of place, on one
 * communicator over every device xal lists (a mixed set when the devices
 * differ: XAL_MOCK_DEVICES=2*a100-40g,1*mi250x, or mock cards with an
 * OpenCL device), driven from one thread with xal_group_start/end, compared
 * with a reference computed here (its own f16/bf16 conversions; bitwise for
 * integers, within a tolerance for floats). Guard bytes after every buffer
 * must stay untouched, and out-of-place inputs unchanged. Then bad input:
 * NULL comm, root out of range, counts past the buffers, avg on integers,
 * a device listed twice.
 *
 * C99, only <xal/xal.h>, only libxal. Prints one line per mismatch and a
 * summary; exit status 0 when everything agreed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xal/xal.h>

#define MAX_RANKS 16 /* more devices: the first 16 are checked (printed) */
#define GUARD 64 /* sentinel bytes after every buffer */
#define SENTINEL 0xA5
#define BIG_COUNT ((1u << 20) + 3)

enum coll { ALLREDUCE, BROADCAST, REDUCE, ALLGATHER, REDUCE_SCATTER, ALLTOALL, NCOLL };
static const char* const coll_names[NCOLL] = {"allreduce", "broadcast",      "reduce",
                                              "allgather", "reduce_scatter", "alltoall"};
static const char* const dtype_names[XAL_DTYPE_COUNT] = {"i8",  "u8",  "i32",  "u32", "i64",
                                                         "u64", "f16", "bf16", "f32", "f64"};
static const size_t dtype_sizes[XAL_DTYPE_COUNT] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
static const char* const op_names[XAL_OP_COUNT] = {"sum", "prod", "min", "max", "avg"};

static uint32_t n_ranks, n_streams; /* n_streams: streams created so far */
static xal_device_t devs[MAX_RANKS];
static xal_comm_t comms[MAX_RANKS];
static int have_comms;
static xal_comm_options_t comm_options;
static xal_stream_t streams[MAX_RANKS];
static unsigned long checks, failures;

/* A clean-up call (free, destroy, shutdown) must succeed too. */
static void cleanup(const char* what, xal_status_t s) {
  if (s == XAL_SUCCESS) return;
  ++failures;
  printf("MISMATCH %s: %s\n", what, xal_status_name(s));
}

static int is_float(xal_dtype_t d) { return d >= XAL_DTYPE_F16; }
static int is_signed(xal_dtype_t d) {
  return d == XAL_DTYPE_I8 || d == XAL_DTYPE_I32 || d == XAL_DTYPE_I64;
}

/* ---- f16 / bf16, round to nearest even ---------------------------------- */

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t to_f16(float f) {
  const uint32_t x = float_bits(f), sign = (x >> 16) & 0x8000u;
  const int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFFu;
  if (((x >> 23) & 0xFF) == 0xFF) return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7C00u);
  if (exp <= 0) { /* subnormal or zero */
    uint32_t shift, half, r;
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    shift = (uint32_t)(14 - exp);
    half = 1u << (shift - 1);
    r = mant >> shift;
    if ((mant & ((1u << shift) - 1)) > half || ((mant & ((1u << shift) - 1)) == half && (r & 1)))
      ++r;
    return (uint16_t)(sign | r);
  }
  {
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h; /* may carry into exp */
    return (uint16_t)h;
  }
}

static float from_f16(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FFu;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * (float)((double)mant / 16777216.0) /* 2^-24 */;
  if (exp == 31) return bits_float(sign | 0x7F800000u | (mant << 13));
  return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

static uint16_t to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h) { return bits_float((uint32_t)h << 16); }

/* ---- values ------------------------------------------------------------- */

/* Input element i of rank r: small integers, exact in every dtype; prod
 * uses 2, -1 and 1 so that products stay small. */
static long long input(xal_op_t op, uint32_t r, size_t i) {
  if (op == XAL_OP_PROD) {
    const size_t k = (i * 3 + r) % 7;
    return k == 0 ? 2 : (k == 3 ? -1 : 1);
  }
  return (long long)((i * 5 + r * 11 + 3) % 19) - 9;
}

/* Stores v at element i: integers wrap to the dtype's width. */
static void put(unsigned char* buf, xal_dtype_t d, size_t i, long long v, double f) {
  unsigned char* p = buf + i * dtype_sizes[d];
  switch (d) {
    case XAL_DTYPE_F16: {
      const uint16_t h = to_f16((float)f);
      memcpy(p, &h, 2);
      break;
    }
    case XAL_DTYPE_BF16: {
      const uint16_t h = to_bf16((float)f);
      memcpy(p, &h, 2);
      break;
    }
    case XAL_DTYPE_F32: {
      const float x = (float)f;
      memcpy(p, &x, 4);
      break;
    }
    case XAL_DTYPE_F64: memcpy(p, &f, 8); break;
    default: {
      unsigned long long u = (unsigned long long)v;
      size_t b;
      for (b = 0; b < dtype_sizes[d]; ++b, u >>= 8) p[b] = (unsigned char)(u & 0xFF);
    }
  }
}

static void put_input(unsigned char* buf, xal_dtype_t d, size_t i, long long v) {
  put(buf, d, i, v, (double)v);
}

/* Integer element i, sign-extended for signed dtypes. */
static long long get_int(const unsigned char* buf, xal_dtype_t d, size_t i) {
  const size_t es = dtype_sizes[d];
  unsigned long long u = 0;
  size_t b;
  for (b = es; b-- > 0;) u = (u << 8) | buf[i * es + b];
  if (is_signed(d) && es < 8 && (u >> (es * 8 - 1)) & 1) u |= ~0ull << (es * 8);
  return (long long)u;
}

static double get_float(const unsigned char* buf, xal_dtype_t d, size_t i) {
  const unsigned char* p = buf + i * dtype_sizes[d];
  uint16_t h;
  float f;
  double x;
  switch (d) {
    case XAL_DTYPE_F16: memcpy(&h, p, 2); return from_f16(h);
    case XAL_DTYPE_BF16: memcpy(&h, p, 2); return from_bf16(h);
    case XAL_DTYPE_F32: memcpy(&f, p, 4); return f;
    default: memcpy(&x, p, 8); return x;
  }
}

/* Reference reduction of element `elem` over every rank, stored at `i`. */
static void reduce_ref(unsigned char* out, size_t i, xal_dtype_t d, xal_op_t op, size_t elem) {
  unsigned char one[8];
  uint32_t r;
  if (is_float(d)) {
    double acc = (double)input(op, 0, elem);
    for (r = 1; r < n_ranks; ++r) {
      const double x = (double)input(op, r, elem);
      if (op == XAL_OP_PROD)
        acc *= x;
      else if (op == XAL_OP_MIN)
        acc = x < acc ? x : acc;
      else if (op == XAL_OP_MAX)
        acc = x > acc ? x : acc;
      else
        acc += x;
    }
    if (op == XAL_OP_AVG) acc /= n_ranks;
    put(out, d, i, 0, acc);
    return;
  }
  {
    /* In the dtype: wrap each input, sum/prod modulo 2^64 (the low bits are
     * those of the dtype's own wrapping arithmetic), min/max in its order. */
    unsigned long long acc = 0;
    for (r = 0; r < n_ranks; ++r) {
      long long x;
      put_input(one, d, 0, input(op, r, elem));
      x = get_int(one, d, 0);
      if (r == 0)
        acc = (unsigned long long)x;
      else if (op == XAL_OP_SUM)
        acc += (unsigned long long)x;
      else if (op == XAL_OP_PROD)
        acc *= (unsigned long long)x;
      else {
        const int less = is_signed(d) ? x < (long long)acc : (unsigned long long)x < acc;
        if ((op == XAL_OP_MIN) == less) acc = (unsigned long long)x;
      }
    }
    put(out, d, i, (long long)acc, 0);
  }
}

/* ---- one check ---------------------------------------------------------- */

/* One call of the matrix: collective, dtype, op, count, placement, root. */
struct call {
  enum coll c;
  xal_dtype_t d;
  xal_op_t op;
  size_t count;
  int in_place;
  uint32_t root;
  size_t in_elems, out_elems; /* per rank */
};

/* Per-rank state of one check: the device buffers (one in place), the host
 * image written before the call, the bytes expected after it and those read
 * back. */
struct rank_bufs {
  xal_devptr_t send_buf, recv_buf;
  size_t send_bytes, recv_bytes; /* allocation sizes, guard included */
  unsigned char *send_img, *recv_img, *want, *got;
};

#define FAIL(k, ...)                                                                    \
  do {                                                                                  \
    ++failures;                                                                         \
    printf("MISMATCH %s %s %s count %zu %s: ", coll_names[(k)->c], dtype_names[(k)->d], \
           op_names[(k)->op], (k)->count, (k)->in_place ? "in place" : "out of place"); \
    printf(__VA_ARGS__);                                                                \
    printf("\n");                                                                       \
  } while (0)

static double absolute(double x) { return x < 0 ? -x : x; }

static int same(xal_dtype_t d, const unsigned char* got, const unsigned char* want, size_t i) {
  double a, b, tol;
  if (memcmp(got + i * dtype_sizes[d], want + i * dtype_sizes[d], dtype_sizes[d]) == 0) return 1;
  if (!is_float(d)) return 0;
  a = get_float(got, d, i);
  b = get_float(want, d, i);
  tol = d == XAL_DTYPE_F16 ? 1e-3 : d == XAL_DTYPE_BF16 ? 8e-3 : d == XAL_DTYPE_F32 ? 1e-6 : 1e-12;
  return absolute(a - b) <= tol * (absolute(b) > 1.0 ? absolute(b) : 1.0);
}

/* The rank's send and receive pointers (in place: inside one buffer). */
static xal_devptr_t send_ptr(const struct call* k, uint32_t r, const struct rank_bufs* x) {
  const size_t blk = k->count * dtype_sizes[k->d];
  return x->send_buf + (k->in_place && k->c == ALLGATHER ? r * blk : 0);
}
static xal_devptr_t recv_ptr(const struct call* k, uint32_t r, const struct rank_bufs* x) {
  const size_t blk = k->count * dtype_sizes[k->d];
  if (!k->in_place) return x->recv_buf;
  return x->send_buf + (k->c == REDUCE_SCATTER ? r * blk : 0);
}

static xal_status_t issue(const struct call* k, uint32_t r, const struct rank_bufs* x) {
  const xal_devptr_t s = send_ptr(k, r, x), v = recv_ptr(k, r, x);
  switch (k->c) {
    case ALLREDUCE: return xal_allreduce(comms[r], s, v, k->count, k->d, k->op, streams[r]);
    case BROADCAST: return xal_broadcast(comms[r], s, v, k->count, k->d, k->root, streams[r]);
    case REDUCE: return xal_reduce(comms[r], s, v, k->count, k->d, k->op, k->root, streams[r]);
    case ALLGATHER: return xal_allgather(comms[r], s, v, k->count, k->d, streams[r]);
    case REDUCE_SCATTER:
      return xal_reduce_scatter(comms[r], s, v, k->count, k->d, k->op, streams[r]);
    default: return xal_alltoall(comms[r], s, v, k->count, k->d, streams[r]);
  }
}

/* Expected output element i of rank r, written into `want` (which starts as
 * a copy of the buffer's image before the call). */
static void expected(const struct call* k, uint32_t r, unsigned char* want, size_t i) {
  const size_t count = k->count;
  switch (k->c) {
    case ALLREDUCE:
    case REDUCE: reduce_ref(want, i, k->d, k->op, i); break;
    case REDUCE_SCATTER:
      if (k->in_place) want += r * count * dtype_sizes[k->d];
      reduce_ref(want, i, k->d, k->op, r * count + i);
      break;
    case BROADCAST: put_input(want, k->d, i, input(k->op, k->root, i)); break;
    case ALLGATHER: put_input(want, k->d, i, input(k->op, (uint32_t)(i / count), i % count)); break;
    default:
      put_input(want, k->d, i, input(k->op, (uint32_t)(i / count), r * count + i % count));
      break;
  }
}

/* Host images, reference and device buffers of rank r, input staged. */
static int prepare(const struct call* k, uint32_t r, struct rank_bufs* x) {
  const size_t es = dtype_sizes[k->d], blk = k->count * es;
  const size_t elems = k->in_place && k->out_elems > k->in_elems ? k->out_elems : k->in_elems;
  size_t i;
  x->send_bytes = elems * es + GUARD;
  x->recv_bytes = k->in_place ? 0 : k->out_elems * es + GUARD;
  x->send_img = malloc(x->send_bytes);
  x->recv_img = malloc(x->recv_bytes + 1);
  x->want = malloc(k->in_place ? x->send_bytes : x->recv_bytes);
  x->got = malloc(x->send_bytes > x->recv_bytes ? x->send_bytes : x->recv_bytes);
  if (!x->send_img || !x->want || !x->got || !x->recv_img) {
    FAIL(k, "out of host memory");
    return 0;
  }
  memset(x->send_img, SENTINEL, x->send_bytes);
  memset(x->recv_img, SENTINEL, x->recv_bytes);
  for (i = 0; i < k->in_elems; ++i)
    put_input(x->send_img + (k->in_place && k->c == ALLGATHER ? r * blk : 0), k->d, i,
              input(k->op, r, i));
  memcpy(x->want, k->in_place ? x->send_img : x->recv_img,
         k->in_place ? x->send_bytes : x->recv_bytes);
  for (i = 0; i < k->out_elems; ++i) expected(k, r, x->want, i);
  if (xal_mem_alloc(devs[r], x->send_bytes, &x->send_buf) != XAL_SUCCESS ||
      (!k->in_place && xal_mem_alloc(devs[r], x->recv_bytes, &x->recv_buf) != XAL_SUCCESS)) {
    FAIL(k, "rank %u: xal_mem_alloc failed", r);
    return 0;
  }
  if (xal_memcpy_htod(streams[r], x->send_buf, x->send_img, x->send_bytes) != XAL_SUCCESS ||
      (!k->in_place &&
       xal_memcpy_htod(streams[r], x->recv_buf, x->recv_img, x->recv_bytes) != XAL_SUCCESS) ||
      xal_stream_synchronize(streams[r]) != XAL_SUCCESS) {
    FAIL(k, "rank %u: staging the input failed", r);
    return 0;
  }
  return 1;
}

/* Compares rank r's output, the guard after it and (out of place) its
 * input with what they must be. */
static void verify(const struct call* k, uint32_t r, struct rank_bufs* x) {
  const xal_dtype_t d = k->d;
  const size_t bytes = k->in_place ? x->send_bytes : x->recv_bytes;
  const size_t first = (k->in_place && k->c == REDUCE_SCATTER) ? r * k->count : 0;
  const size_t elems = (k->in_place && k->c == REDUCE_SCATTER) ? k->count : k->out_elems;
  size_t i;
  if (k->c == REDUCE && r != k->root) return; /* recv unused off the root */
  if (xal_memcpy_dtoh(streams[r], x->got, k->in_place ? x->send_buf : x->recv_buf, bytes) !=
          XAL_SUCCESS ||
      xal_stream_synchronize(streams[r]) != XAL_SUCCESS) {
    FAIL(k, "rank %u: reading the output failed", r);
    return;
  }
  for (i = first; i < first + elems; ++i) {
    if (same(d, x->got, x->want, i)) continue;
    if (is_float(d))
      FAIL(k, "rank %u element %zu: got %g, want %g", r, i, get_float(x->got, d, i),
           get_float(x->want, d, i));
    else
      FAIL(k, "rank %u element %zu: got %lld, want %lld", r, i, get_int(x->got, d, i),
           get_int(x->want, d, i));
    break;
  }
  if (memcmp(x->got + bytes - GUARD, x->want + bytes - GUARD, GUARD) != 0)
    FAIL(k, "rank %u: bytes written past the output", r);
  if (k->in_place) return;
  if (xal_memcpy_dtoh(streams[r], x->got, x->send_buf, x->send_bytes - GUARD) != XAL_SUCCESS ||
      xal_stream_synchronize(streams[r]) != XAL_SUCCESS) {
    FAIL(k, "rank %u: reading the input failed", r);
  } else if (memcmp(x->got, x->send_img, x->send_bytes - GUARD) != 0) {
    FAIL(k, "rank %u: the input buffer changed", r);
  }
}

/* After a rank's call failed to start, the ranks whose calls were queued
 * would wait for it until the time-out: aborts the communicator (its calls
 * end with ABORTED) and makes a new one for the checks that follow. */
static void replace_comms(void) {
  uint32_t r;
  xal_status_t s;
  for (r = 0; r < n_ranks; ++r) cleanup("xal_comm_abort", xal_comm_abort(comms[r]));
  for (r = 0; r < n_ranks; ++r) {
    s = xal_stream_synchronize(streams[r]); /* ABORTED is expected here */
    if (s != XAL_SUCCESS && s != XAL_ERROR_ABORTED) cleanup("xal_stream_synchronize", s);
  }
  for (r = 0; r < n_ranks; ++r) cleanup("xal_comm_destroy", xal_comm_destroy(comms[r]));
  have_comms = 0;
  s = xal_comm_create(devs, n_ranks, &comm_options, comms);
  if (s == XAL_SUCCESS) have_comms = 1;
  else cleanup("xal_comm_create (a new communicator)", s);
}

/* Runs one call on every rank in one group (one thread) and verifies every
 * rank. */
static void check(enum coll c, xal_dtype_t d, xal_op_t op, size_t count, int in_place) {
  struct call k;
  struct rank_bufs b[MAX_RANKS];
  uint32_t r;
  xal_status_t s;
  int started = 1, synced = 1;
  k.c = c;
  k.d = d;
  k.op = op;
  k.count = count;
  k.in_place = in_place;
  k.root = c == BROADCAST ? n_ranks - 1 : n_ranks / 2;
  k.in_elems = (c == REDUCE_SCATTER || c == ALLTOALL) ? count * n_ranks : count;
  k.out_elems = (c == ALLGATHER || c == ALLTOALL) ? count * n_ranks : count;
  memset(b, 0, sizeof(b));
  ++checks;
  if (!have_comms) {
    FAIL(&k, "no communicator");
    return;
  }
  for (r = 0; r < n_ranks; ++r)
    if (!prepare(&k, r, &b[r])) goto done;
  if ((s = xal_group_start()) != XAL_SUCCESS) {
    FAIL(&k, "xal_group_start: %s", xal_status_name(s));
    goto done;
  }
  for (r = 0; r < n_ranks; ++r) {
    if ((s = issue(&k, r, &b[r])) != XAL_SUCCESS) {
      FAIL(&k, "rank %u: %s", r, xal_status_name(s));
      started = 0;
    }
  }
  if ((s = xal_group_end()) != XAL_SUCCESS) {
    FAIL(&k, "xal_group_end: %s", xal_status_name(s));
    started = 0;
  }
  if (!started) {
    replace_comms(); /* also waits for every stream */
    goto done;
  }
  /* Every rank, even after a failure: no queued call may still use the
   * buffers freed below. */
  for (r = 0; r < n_ranks; ++r) {
    xal_status_t async = XAL_SUCCESS;
    s = xal_stream_synchronize(streams[r]);
    if (s == XAL_SUCCESS) s = xal_comm_get_async_error(comms[r], &async);
    if (s != XAL_SUCCESS || async != XAL_SUCCESS) {
      FAIL(&k, "rank %u: synchronize %s, async error %s", r, xal_status_name(s),
           xal_status_name(async));
      synced = 0;
    }
  }
  for (r = 0; synced && r < n_ranks; ++r) verify(&k, r, &b[r]);
done:
  for (r = 0; r < n_ranks; ++r) {
    if (b[r].send_buf) cleanup("xal_mem_free", xal_mem_free(devs[r], b[r].send_buf));
    if (b[r].recv_buf) cleanup("xal_mem_free", xal_mem_free(devs[r], b[r].recv_buf));
    free(b[r].send_img);
    free(b[r].recv_img);
    free(b[r].want);
    free(b[r].got);
  }
}

/* ---- bad input ---------------------------------------------------------- */

static unsigned long bad_checks, bad_failures;

/* `got` must be `want`, with the same status and a message in
 * xal_last_error. */
static void expect(const char* what, xal_status_t got, xal_status_t want) {
  xal_error_info_t err;
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  ++bad_checks;
  if (got != want) {
    ++bad_failures;
    printf("MISMATCH bad input %s: got %s, want %s\n", what, xal_status_name(got),
           xal_status_name(want));
    return;
  }
  if (xal_last_error(&err) != XAL_SUCCESS || err.status != want || err.message[0] == '\0') {
    ++bad_failures;
    printf("MISMATCH bad input %s: %s without its message in xal_last_error\n", what,
           xal_status_name(want));
    return;
  }
  printf("bad input %-40s %s: %s\n", what, xal_status_name(got), err.message);
}

static void check_bad_input(void) {
  enum { BYTES = 256 };
  const size_t f32s = BYTES / 4;
  xal_devptr_t buf = 0;
  xal_comm_t stale[MAX_RANKS];
  xal_device_t twice[3];
  xal_status_t s;
  int d;
  if (xal_mem_alloc(devs[0], BYTES, &buf) != XAL_SUCCESS) {
    ++bad_failures;
    printf("MISMATCH bad input: xal_mem_alloc failed\n");
    return;
  }
  expect("NULL comm", xal_allreduce(NULL, buf, buf, 4, XAL_DTYPE_F32, XAL_OP_SUM, streams[0]),
         XAL_ERROR_INVALID_HANDLE);
  expect("stream as comm",
         xal_allreduce((xal_comm_t)(void*)streams[0], buf, buf, 4, XAL_DTYPE_F32, XAL_OP_SUM,
                       streams[0]),
         XAL_ERROR_INVALID_HANDLE);
  expect("broadcast root = size",
         xal_broadcast(comms[0], buf, buf, 4, XAL_DTYPE_I32, n_ranks, streams[0]),
         XAL_ERROR_INVALID_ARGUMENT);
  expect("reduce root = size",
         xal_reduce(comms[0], buf, buf, 4, XAL_DTYPE_I32, XAL_OP_SUM, n_ranks, streams[0]),
         XAL_ERROR_INVALID_ARGUMENT);
  expect("allreduce count past buffer",
         xal_allreduce(comms[0], buf, buf, f32s + 1, XAL_DTYPE_F32, XAL_OP_SUM, streams[0]),
         XAL_ERROR_OUT_OF_BOUNDS);
  expect("allgather recv too small",
         xal_allgather(comms[0], buf, buf, f32s, XAL_DTYPE_F32, streams[0]),
         XAL_ERROR_OUT_OF_BOUNDS);
  expect("reduce_scatter send too small",
         xal_reduce_scatter(comms[0], buf, buf, f32s, XAL_DTYPE_F32, XAL_OP_SUM, streams[0]),
         XAL_ERROR_OUT_OF_BOUNDS);
  expect("alltoall count past buffer",
         xal_alltoall(comms[0], buf, buf, f32s, XAL_DTYPE_F32, streams[0]),
         XAL_ERROR_OUT_OF_BOUNDS);
  expect("allreduce count overflowing size_t",
         xal_allreduce(comms[0], buf, buf, (size_t)-1 / 2, XAL_DTYPE_F32, XAL_OP_SUM, streams[0]),
         XAL_ERROR_INVALID_ARGUMENT);
  expect("dtype out of range",
         xal_allreduce(comms[0], buf, buf, 4, (xal_dtype_t)99, XAL_OP_SUM, streams[0]),
         XAL_ERROR_INVALID_ARGUMENT);
  expect("stream of another device",
         xal_allreduce(comms[0], buf, buf, 4, XAL_DTYPE_F32, XAL_OP_SUM, streams[1]),
         XAL_ERROR_INVALID_ARGUMENT);
  for (d = XAL_DTYPE_I8; d <= XAL_DTYPE_U64; ++d) {
    char what[64];
    snprintf(what, sizeof(what), "allreduce avg %s", dtype_names[d]);
    expect(what, xal_allreduce(comms[0], buf, buf, 1, (xal_dtype_t)d, XAL_OP_AVG, streams[0]),
           XAL_ERROR_NOT_SUPPORTED);
    snprintf(what, sizeof(what), "reduce avg %s", dtype_names[d]);
    expect(what, xal_reduce(comms[0], buf, buf, 1, (xal_dtype_t)d, XAL_OP_AVG, 0, streams[0]),
           XAL_ERROR_NOT_SUPPORTED);
    snprintf(what, sizeof(what), "reduce_scatter avg %s", dtype_names[d]);
    expect(what, xal_reduce_scatter(comms[0], buf, buf, 1, (xal_dtype_t)d, XAL_OP_AVG, streams[0]),
           XAL_ERROR_NOT_SUPPORTED);
  }
  twice[0] = devs[0];
  twice[1] = devs[1];
  twice[2] = devs[0];
  expect("device listed twice", xal_comm_create(twice, 3, NULL, stale), XAL_ERROR_INVALID_ARGUMENT);
  expect("comm_create NULL devs", xal_comm_create(NULL, 2, NULL, stale),
         XAL_ERROR_INVALID_ARGUMENT);
  expect("comm_create n = 0", xal_comm_create(devs, 0, NULL, stale), XAL_ERROR_INVALID_ARGUMENT);
  s = xal_comm_create(devs, 2, NULL, stale);
  if (s == XAL_SUCCESS) {
    cleanup("xal_comm_destroy", xal_comm_destroy(stale[0]));
    cleanup("xal_comm_destroy", xal_comm_destroy(stale[1]));
    expect("destroyed comm",
           xal_allreduce(stale[0], buf, buf, 4, XAL_DTYPE_F32, XAL_OP_SUM, streams[0]),
           XAL_ERROR_INVALID_HANDLE);
  } else {
    expect("comm_create of two devices", s, XAL_SUCCESS);
  }
  cleanup("xal_mem_free", xal_mem_free(devs[0], buf));
}

/* ---- main --------------------------------------------------------------- */

/* Destroys the communicator and the streams, then shuts xal down. */
static void teardown(void) {
  uint32_t r;
  for (r = 0; have_comms && r < n_ranks; ++r)
    cleanup("xal_comm_destroy", xal_comm_destroy(comms[r]));
  have_comms = 0;
  for (r = 0; r < n_streams; ++r) cleanup("xal_stream_destroy", xal_stream_destroy(streams[r]));
  n_streams = 0;
  cleanup("xal_shutdown", xal_shutdown());
}

int main(void) {
  static const size_t counts[] = {0, 1, 7, 1023};
  xal_comm_info_t info;
  uint32_t count = 0, r;
  int c, d, op, in_place;
  size_t k;
  xal_status_t s = xal_init(NULL);
  if (s != XAL_SUCCESS) {
    printf("collectives_check: xal_init: %s\n", xal_status_name(s));
    return 1;
  }
  s = xal_device_count(&count);
  if (s != XAL_SUCCESS || count < 2) {
    printf("collectives_check: needs two devices (xal_device_count: %s, %u devices)\n",
           xal_status_name(s), count);
    teardown();
    return 1;
  }
  n_ranks = count < MAX_RANKS ? count : MAX_RANKS;
  if (count > MAX_RANKS)
    printf("collectives_check: %u devices; checking the first %d (MAX_RANKS)\n", count,
           MAX_RANKS);
  for (r = 0; r < n_ranks; ++r) {
    xal_device_properties_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    if (xal_device_get(r, &devs[r]) != XAL_SUCCESS ||
        xal_device_get_properties(devs[r], &p) != XAL_SUCCESS ||
        xal_stream_create(devs[r], XAL_STREAM_DEFAULT, &streams[r]) != XAL_SUCCESS) {
      printf("collectives_check: device %u cannot be opened\n", r);
      teardown();
      return 1;
    }
    n_streams = r + 1;
    printf("rank %u: %s [%s]\n", r, p.name, p.backend);
  }
  memset(&comm_options, 0, sizeof(comm_options));
  comm_options.struct_size = sizeof(comm_options);
  comm_options.timeout_ms = 60000; /* a lost rank gives TIMEOUT, not a hang */
  s = xal_comm_create(devs, n_ranks, &comm_options, comms);
  have_comms = s == XAL_SUCCESS;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  if (s == XAL_SUCCESS) s = xal_comm_get_info(comms[0], &info);
  if (s != XAL_SUCCESS) {
    printf("collectives_check: xal_comm_create: %s\n", xal_status_name(s));
    teardown();
    return 1;
  }
  printf("communicator: %u ranks, path %u (%s)\n", info.size, info.path, info.description);
  for (c = 0; c < NCOLL; ++c)
    for (d = 0; d < XAL_DTYPE_COUNT; ++d)
      for (op = 0; op < XAL_OP_COUNT; ++op) {
        const int reduces = c == ALLREDUCE || c == REDUCE || c == REDUCE_SCATTER;
        if (!reduces && op != XAL_OP_SUM) continue;                  /* op unused: once */
        if (op == XAL_OP_AVG && !is_float((xal_dtype_t)d)) continue; /* bad input below */
        for (in_place = 0; in_place < 2; ++in_place) {
          for (k = 0; k < sizeof(counts) / sizeof(counts[0]); ++k)
            check((enum coll)c, (xal_dtype_t)d, (xal_op_t)op, counts[k], in_place);
          if (d == XAL_DTYPE_F32 && op == XAL_OP_SUM)
            check((enum coll)c, (xal_dtype_t)d, (xal_op_t)op, BIG_COUNT, in_place);
        }
      }
  check_bad_input();
  check(ALLREDUCE, XAL_DTYPE_F32, XAL_OP_SUM, 1023, 0); /* still usable */
  teardown();
  printf("collectives_check: %u ranks, %lu checks, %lu mismatches; bad input %lu/%lu as expected\n",
         n_ranks, checks, failures, bad_checks - bad_failures, bad_checks);
  printf("collectives_check: %s\n", failures == 0 && bad_failures == 0 ? "OK" : "FAILED");
  return failures == 0 && bad_failures == 0 ? 0 : 1;
}
