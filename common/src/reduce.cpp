#include "xal_common/reduce.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

namespace xal::common {

namespace {

constexpr size_t kBlock = 1024;  // elements reduced per step, stays in L1

struct F16 { uint16_t bits; };
struct BF16 { uint16_t bits; };

// Storage type -> accumulator type.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<F16> { using type = float; };
template <> struct Acc<BF16> { using type = float; };
// Signed integers accumulate as unsigned so that overflow wraps (defined).
template <> struct Acc<int8_t> { using type = uint8_t; };
template <> struct Acc<int32_t> { using type = uint32_t; };
template <> struct Acc<int64_t> { using type = uint64_t; };

template <typename T, typename A>
A load(const T& v) {
  if constexpr (std::is_same_v<T, F16>) return f16_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BF16>) return bf16_to_float(v.bits);
  else return static_cast<A>(v);
}

template <typename T, typename A>
T store(A v) {
  if constexpr (std::is_same_v<T, F16>) return F16{float_to_f16(v)};
  else if constexpr (std::is_same_v<T, BF16>) return BF16{float_to_bf16(v)};
  else return static_cast<T>(v);
}

// min/max compare in the storage type's signedness.
template <typename T, typename A>
A combine(xal_op_t op, A a, A b) {
  using Cmp = std::conditional_t<std::is_integral_v<T>, T, A>;
  switch (op) {
    case XAL_OP_PROD: return static_cast<A>(a * b);
    case XAL_OP_MIN: return static_cast<Cmp>(b) < static_cast<Cmp>(a) ? b : a;
    case XAL_OP_MAX: return static_cast<Cmp>(b) > static_cast<Cmp>(a) ? b : a;
    default: return static_cast<A>(a + b);  // SUM, AVG
  }
}

// acc[i] = Op over r of srcs[r][begin + i], i in [0, n): the first two
// sources in one pass, then one pass per further source.
template <typename T, xal_op_t Op>
void reduce_block(typename Acc<T>::type* acc, std::span<const void* const> srcs,
                  size_t begin, size_t n) {
  using A = typename Acc<T>::type;
  const T* s0 = static_cast<const T*>(srcs[0]) + begin;
  if (srcs.size() == 1) {
    for (size_t i = 0; i < n; ++i) acc[i] = load<T, A>(s0[i]);
    return;
  }
  const T* s1 = static_cast<const T*>(srcs[1]) + begin;
  for (size_t i = 0; i < n; ++i) acc[i] = combine<T, A>(Op, load<T, A>(s0[i]), load<T, A>(s1[i]));
  for (size_t r = 2; r < srcs.size(); ++r) {
    const T* s = static_cast<const T*>(srcs[r]) + begin;
    for (size_t i = 0; i < n; ++i) acc[i] = combine<T, A>(Op, acc[i], load<T, A>(s[i]));
  }
}

// A block at a time (kBlock elements, in L1): every source is read before
// any destination is written, so destinations may alias sources. Types
// that accumulate in their own width are stored straight from the block
// into each destination; halves are rounded once into a staging block.
template <typename T, xal_op_t Op>
void reduce_typed(std::span<void* const> dsts, std::span<const void* const> srcs,
                  size_t count, uint32_t avg_divisor) {
  using A = typename Acc<T>::type;
  constexpr bool kHalf = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;
  alignas(64) A acc[kBlock];
  alignas(64) T out[kHalf ? kBlock : 1];
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t n = std::min(kBlock, count - begin);
    reduce_block<T, Op>(acc, srcs, begin, n);
    if constexpr (Op == XAL_OP_AVG) {
      const A inv = static_cast<A>(1) / static_cast<A>(avg_divisor ? avg_divisor : 1);
      for (size_t i = 0; i < n; ++i) acc[i] *= inv;
    }
    if constexpr (kHalf) {
      for (size_t i = 0; i < n; ++i) out[i] = store<T, A>(acc[i]);
      for (void* d : dsts) std::memcpy(static_cast<T*>(d) + begin, out, n * sizeof(T));
    } else {
      for (void* d : dsts) {
        T* o = static_cast<T*>(d) + begin;
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(acc[i]);
      }
    }
  }
}

template <typename T>
void reduce_op(xal_op_t op, std::span<void* const> dsts,
               std::span<const void* const> srcs, size_t count, uint32_t div) {
  switch (op) {
    case XAL_OP_SUM: return reduce_typed<T, XAL_OP_SUM>(dsts, srcs, count, div);
    case XAL_OP_PROD: return reduce_typed<T, XAL_OP_PROD>(dsts, srcs, count, div);
    case XAL_OP_MIN: return reduce_typed<T, XAL_OP_MIN>(dsts, srcs, count, div);
    case XAL_OP_MAX: return reduce_typed<T, XAL_OP_MAX>(dsts, srcs, count, div);
    case XAL_OP_AVG:
      if constexpr (std::is_floating_point_v<typename Acc<T>::type>)
        return reduce_typed<T, XAL_OP_AVG>(dsts, srcs, count, div);
      return;
    default: return;
  }
}

}  // namespace

size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case XAL_DTYPE_I8: case XAL_DTYPE_U8: return 1;
    case XAL_DTYPE_F16: case XAL_DTYPE_BF16: return 2;
    case XAL_DTYPE_I32: case XAL_DTYPE_U32: case XAL_DTYPE_F32: return 4;
    case XAL_DTYPE_I64: case XAL_DTYPE_U64: case XAL_DTYPE_F64: return 8;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  static const char* names[] = {"i8", "u8", "i32", "u32", "i64",
                                "u64", "f16", "bf16", "f32", "f64"};
  return dtype >= 0 && dtype < XAL_DTYPE_COUNT ? names[dtype] : "?";
}

const char* op_name(int32_t op) {
  static const char* names[] = {"sum", "prod", "min", "max", "avg"};
  return op >= 0 && op < XAL_OP_COUNT ? names[op] : "?";
}

xal_status_t check_dtype_op(int32_t dtype, int32_t op, std::string* why) {
  if (dtype_size(dtype) == 0) {
    if (why) *why = "dtype " + std::to_string(dtype) + " is not an xal_dtype_t";
    return XAL_ERROR_INVALID_ARGUMENT;
  }
  if (op < 0 || op >= XAL_OP_COUNT) {
    if (why) *why = "op " + std::to_string(op) + " is not an xal_op_t";
    return XAL_ERROR_INVALID_ARGUMENT;
  }
  const bool is_float = dtype == XAL_DTYPE_F16 || dtype == XAL_DTYPE_BF16 ||
                        dtype == XAL_DTYPE_F32 || dtype == XAL_DTYPE_F64;
  if (op == XAL_OP_AVG && !is_float) {
    if (why)
      *why = std::string("avg is defined for floating-point dtypes only, not ") +
             dtype_name(dtype);
    return XAL_ERROR_NOT_SUPPORTED;
  }
  return XAL_SUCCESS;
}

void reduce(xal_dtype_t dtype, xal_op_t op, std::span<void* const> dsts,
            std::span<const void* const> srcs, size_t count, uint32_t div) {
  if (srcs.empty() || count == 0) return;
  switch (dtype) {
    case XAL_DTYPE_I8: return reduce_op<int8_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_U8: return reduce_op<uint8_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_I32: return reduce_op<int32_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_U32: return reduce_op<uint32_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_I64: return reduce_op<int64_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_U64: return reduce_op<uint64_t>(op, dsts, srcs, count, div);
    case XAL_DTYPE_F16: return reduce_op<F16>(op, dsts, srcs, count, div);
    case XAL_DTYPE_BF16: return reduce_op<BF16>(op, dsts, srcs, count, div);
    case XAL_DTYPE_F32: return reduce_op<float>(op, dsts, srcs, count, div);
    case XAL_DTYPE_F64: return reduce_op<double>(op, dsts, srcs, count, div);
    default: return;
  }
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (abs < 0x38800000u) {  // subnormal half or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // half subnormal = m * 2^(e-126)
    uint32_t half = m >> shift;
    const uint32_t rem = m & ((1u << (shift)) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint16_t float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace xal::common
