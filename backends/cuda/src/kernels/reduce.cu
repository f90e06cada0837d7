// reduce.cu -- element-wise reductions xal runs on CUDA devices itself: the
// local step of the hierarchical collectives, dst[i] = dst[i] OP src[i].
// Built to PTX at build time and embedded in the plugin.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

struct Sum {
  template <typename T>
  __device__ static T apply(T a, T b) { return a + b; }
};
struct Prod {
  template <typename T>
  __device__ static T apply(T a, T b) { return a * b; }
};
struct Min {
  template <typename T>
  __device__ static T apply(T a, T b) { return b < a ? b : a; }
};
struct Max {
  template <typename T>
  __device__ static T apply(T a, T b) { return a < b ? b : a; }
};

// Half types compute in float.
template <typename T>
struct Compute { using type = T; };
template <>
struct Compute<__half> { using type = float; };
template <>
struct Compute<__nv_bfloat16> { using type = float; };

template <typename T>
__device__ typename Compute<T>::type load(T v) { return v; }
__device__ float load(__half v) { return __half2float(v); }
__device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ T store(typename Compute<T>::type v) { return v; }
template <>
__device__ __half store<__half>(float v) { return __float2half(v); }
template <>
__device__ __nv_bfloat16 store<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

template <typename Op, typename T>
__device__ void reduce(T* dst, const T* src, unsigned long long count) {
  const unsigned long long stride =
      static_cast<unsigned long long>(blockDim.x) * gridDim.x;
  for (unsigned long long i =
           static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
           threadIdx.x;
       i < count; i += stride) {
    dst[i] = store<T>(Op::apply(load(dst[i]), load(src[i])));
  }
}

}  // namespace

#define XAL_REDUCE_KERNEL(op, Op, name, T)                                 \
  extern "C" __global__ void xal_reduce_##op##_##name(                     \
      T* dst, const T* src, unsigned long long count) {                    \
    reduce<Op, T>(dst, src, count);                                        \
  }

#define XAL_REDUCE_OP(op, Op)                         \
  XAL_REDUCE_KERNEL(op, Op, i8, int8_t)               \
  XAL_REDUCE_KERNEL(op, Op, u8, uint8_t)              \
  XAL_REDUCE_KERNEL(op, Op, i32, int32_t)             \
  XAL_REDUCE_KERNEL(op, Op, u32, uint32_t)            \
  XAL_REDUCE_KERNEL(op, Op, i64, int64_t)             \
  XAL_REDUCE_KERNEL(op, Op, u64, uint64_t)            \
  XAL_REDUCE_KERNEL(op, Op, f16, __half)              \
  XAL_REDUCE_KERNEL(op, Op, bf16, __nv_bfloat16)      \
  XAL_REDUCE_KERNEL(op, Op, f32, float)               \
  XAL_REDUCE_KERNEL(op, Op, f64, double)

XAL_REDUCE_OP(sum, Sum)
XAL_REDUCE_OP(prod, Prod)
XAL_REDUCE_OP(min, Min)
XAL_REDUCE_OP(max, Max)

// Scales every element by 1/divisor: the last step of an average.
#define XAL_SCALE_KERNEL(name, T)                                            \
  extern "C" __global__ void xal_scale_##name(T* dst, double divisor,        \
                                              unsigned long long count) {    \
    const unsigned long long stride =                                        \
        static_cast<unsigned long long>(blockDim.x) * gridDim.x;             \
    for (unsigned long long i =                                              \
             static_cast<unsigned long long>(blockIdx.x) * blockDim.x +      \
             threadIdx.x;                                                    \
         i < count; i += stride) {                                           \
      dst[i] = store<T>(static_cast<typename Compute<T>::type>(              \
          load(dst[i]) / divisor));                                          \
    }                                                                        \
  }
XAL_SCALE_KERNEL(i8, int8_t)
XAL_SCALE_KERNEL(u8, uint8_t)
XAL_SCALE_KERNEL(i32, int32_t)
XAL_SCALE_KERNEL(u32, uint32_t)
XAL_SCALE_KERNEL(i64, int64_t)
XAL_SCALE_KERNEL(u64, uint64_t)
XAL_SCALE_KERNEL(f16, __half)
XAL_SCALE_KERNEL(bf16, __nv_bfloat16)
XAL_SCALE_KERNEL(f32, float)
XAL_SCALE_KERNEL(f64, double)
