// xal's element-wise reductions: dst[i] = dst[i] op src[i], and the divide
// of the AVG reduction. Offsets are in elements. Kernel names:
// xal_reduce_<sum|prod|min|max>_<dtype>, xal_divide_<dtype>.

#define XAL_SUM(a, b) ((a) + (b))
#define XAL_PROD(a, b) ((a) * (b))
#define XAL_MIN(a, b) ((b) < (a) ? (b) : (a))
#define XAL_MAX(a, b) ((a) < (b) ? (b) : (a))

#define XAL_REDUCE(OPNAME, OP, TNAME, T)                                      \
  __kernel void xal_reduce_##OPNAME##_##TNAME(                                \
      __global T* dst, ulong dst_off, __global const T* src, ulong src_off,   \
      ulong n) {                                                              \
    size_t i = get_global_id(0);                                              \
    if (i < n) {                                                              \
      T a = dst[dst_off + i];                                                 \
      T b = src[src_off + i];                                                 \
      dst[dst_off + i] = OP(a, b);                                            \
    }                                                                         \
  }

// The divide runs in W, a type that holds every value of T and every uint
// divisor: in T itself a divisor of 256 would become 0 for 8-bit types and
// one of 2^31 or more negative for int.
#define XAL_DIVIDE(TNAME, T, W)                                               \
  __kernel void xal_divide_##TNAME(__global T* dst, ulong dst_off, ulong n,   \
                                   uint divisor) {                            \
    size_t i = get_global_id(0);                                              \
    if (i < n) dst[dst_off + i] = (T)((W)dst[dst_off + i] / (W)divisor);      \
  }

#define XAL_ALL_OPS(TNAME, T, W)      \
  XAL_REDUCE(sum, XAL_SUM, TNAME, T)  \
  XAL_REDUCE(prod, XAL_PROD, TNAME, T) \
  XAL_REDUCE(min, XAL_MIN, TNAME, T)  \
  XAL_REDUCE(max, XAL_MAX, TNAME, T)  \
  XAL_DIVIDE(TNAME, T, W)

XAL_ALL_OPS(i8, char, long)
XAL_ALL_OPS(u8, uchar, ulong)
XAL_ALL_OPS(i32, int, long)
XAL_ALL_OPS(u32, uint, ulong)
XAL_ALL_OPS(i64, long, long)
XAL_ALL_OPS(u64, ulong, ulong)
XAL_ALL_OPS(f32, float, float)

// 16-bit floats are stored as ushort and computed in float.
float xal_load_f16(__global const ushort* p, size_t i) {
  return vload_half(i, (__global const half*)p);
}
void xal_store_f16(__global ushort* p, size_t i, float v) {
  vstore_half_rte(v, i, (__global half*)p);
}
float xal_load_bf16(__global const ushort* p, size_t i) {
  return as_float(((uint)p[i]) << 16);
}
void xal_store_bf16(__global ushort* p, size_t i, float v) {
  uint u = as_uint(v);
  if (isnan(v)) {
    p[i] = (ushort)((u >> 16) | 0x40u);  // stay a NaN
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);     // round to nearest even
    p[i] = (ushort)(u >> 16);
  }
}

#define XAL_REDUCE16(OPNAME, OP, TNAME)                                       \
  __kernel void xal_reduce_##OPNAME##_##TNAME(                                \
      __global ushort* dst, ulong dst_off, __global const ushort* src,        \
      ulong src_off, ulong n) {                                               \
    size_t i = get_global_id(0);                                              \
    if (i < n) {                                                              \
      float a = xal_load_##TNAME(dst, dst_off + i);                           \
      float b = xal_load_##TNAME(src, src_off + i);                           \
      xal_store_##TNAME(dst, dst_off + i, OP(a, b));                          \
    }                                                                         \
  }

#define XAL_DIVIDE16(TNAME)                                                   \
  __kernel void xal_divide_##TNAME(__global ushort* dst, ulong dst_off,       \
                                   ulong n, uint divisor) {                   \
    size_t i = get_global_id(0);                                              \
    if (i < n) {                                                              \
      float a = xal_load_##TNAME(dst, dst_off + i);                           \
      xal_store_##TNAME(dst, dst_off + i, a / (float)divisor);                \
    }                                                                         \
  }

#define XAL_ALL_OPS16(TNAME)            \
  XAL_REDUCE16(sum, XAL_SUM, TNAME)     \
  XAL_REDUCE16(prod, XAL_PROD, TNAME)   \
  XAL_REDUCE16(min, XAL_MIN, TNAME)     \
  XAL_REDUCE16(max, XAL_MAX, TNAME)     \
  XAL_DIVIDE16(TNAME)

XAL_ALL_OPS16(f16)
XAL_ALL_OPS16(bf16)

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
XAL_ALL_OPS(f64, double, double)
#endif
