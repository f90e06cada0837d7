// kernels.cpp -- xal's embedded CUDA kernels and the reduce extension.
#include "kernels.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "backend.h"
#include "entries.h"

#if XAL_CUDA_HAVE_KERNELS
extern const unsigned char xal_cuda_reduce_ptx[];
extern const std::size_t xal_cuda_reduce_ptx_size;
extern const unsigned char xal_cuda_reduce_fatbin[];
extern const std::size_t xal_cuda_reduce_fatbin_size;
#endif

namespace xal::cuda {

namespace {

const char* dtype_name(xal_dtype_t dtype) {
  static const char* const kNames[] = {"i8",  "u8",  "i32", "u32", "i64",
                                       "u64", "f16", "bf16", "f32", "f64"};
  const int index = static_cast<int>(dtype);
  return index >= 0 && index < XAL_DTYPE_COUNT ? kNames[index] : nullptr;
}

const char* op_name(xal_op_t op) {
  switch (op) {
    case XAL_OP_SUM: return "sum";
    case XAL_OP_PROD: return "prod";
    case XAL_OP_MIN: return "min";
    case XAL_OP_MAX: return "max";
    default: return nullptr;
  }
}

#if XAL_CUDA_HAVE_KERNELS
// The ".version X.Y" of a PTX text, for messages ("?" if absent).
std::string ptx_isa(const unsigned char* ptx, size_t bytes) {
  const std::string_view text(reinterpret_cast<const char*>(ptx), bytes);
  const auto at = text.find("\n.version ");
  if (at == std::string_view::npos) return "?";
  const auto begin = at + 10;
  const auto end = text.find_first_of("\r\n", begin);
  return std::string(text.substr(begin, end - begin));
}
#endif

// The device's module of embedded kernels: the fatbin (SASS for the
// architectures in XAL_CUDA_FATBIN_ARCHS and PTX of the toolkit's ISA),
// else the PTX of an older ISA for a driver older than the toolkit to JIT.
// When neither loads, the error names both with their CUDA errors.
xal_status_t builtin_module(xal_bdevice_s* device, xal_bmodule_s** out) {
#if XAL_CUDA_HAVE_KERNELS
  std::lock_guard<std::mutex> lock(device->builtin_mutex);
  const uint64_t generation = device->generation.load();
  if (device->builtin != nullptr && device->builtin_generation == generation) {
    *out = device->builtin;
    return XAL_SUCCESS;
  }
  if (device->backend->driver.cuModuleLoadDataEx == nullptr) {
    return device->backend->error(XAL_ERROR_NOT_SUPPORTED,
                                  "cuda: the driver has no cuModuleLoadDataEx");
  }
  static const std::string fatbin_label =
      "fatbin (" XAL_CUDA_FATBIN_ARCHS ", built with CUDA " +
      std::to_string(CUDA_VERSION / 1000) + "." +
      std::to_string(CUDA_VERSION % 1000 / 10) + ")";
  static const std::string ptx_label =
      "PTX (" XAL_CUDA_PTX_ARCH ", ISA " +
      ptx_isa(xal_cuda_reduce_ptx, xal_cuda_reduce_ptx_size) + ")";
  const ModuleImage images[] = {
      {XAL_MODULE_FORMAT_FATBIN, xal_cuda_reduce_fatbin,
       xal_cuda_reduce_fatbin_size, fatbin_label.c_str()},
      {XAL_MODULE_FORMAT_PTX, xal_cuda_reduce_ptx, xal_cuda_reduce_ptx_size,
       ptx_label.c_str()},
  };
  xal_bmodule_s* module = nullptr;
  if (xal_status_t s = module_load_any(device, images, "xal's embedded kernels",
                                       &module);
      s != XAL_SUCCESS) {
    return s;
  }
  device->builtin = module;
  device->builtin_generation = generation;
  *out = module;
  return XAL_SUCCESS;
#else
  (void)out;
  return device->backend->error(
      XAL_ERROR_NOT_SUPPORTED,
      "cuda: the plugin was built without nvcc: no embedded kernels");
#endif
}

// One launch of an element-wise kernel over `count` elements.
xal_status_t launch_kernel(xal_bstream_t* stream, xal_bkernel_s* kernel, size_t count,
                           void** args) {
  constexpr size_t kBlock = 256;
  const size_t blocks = std::min<size_t>((count + kBlock - 1) / kBlock, 4096);
  xal_launch_config_t config{};
  config.struct_size = sizeof config;
  config.grid[0] = static_cast<uint32_t>(blocks);
  config.grid[1] = config.grid[2] = 1;
  config.block[0] = kBlock;
  config.block[1] = config.block[2] = 1;
  return kernel_launch(stream, kernel, &config, args, 3);
}

xal_status_t launch(xal_bstream_t* stream, const std::string& name,
                    size_t count, void** args) {
  if (count == 0) return XAL_SUCCESS;
  xal_bmodule_s* module = nullptr;
  if (xal_status_t s = builtin_module(stream->device, &module);
      s != XAL_SUCCESS)
    return s;
  xal_bkernel_s* kernel = nullptr;
  if (xal_status_t s = kernel_get(module, name.c_str(), &kernel);
      s != XAL_SUCCESS)
    return s;
  return launch_kernel(stream, kernel, count, args);
}

constexpr xal_op_t kReduceOps[4] = {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX};

// BuiltinKernels' index of a reduction op, or -1.
int op_index(xal_op_t op) {
  for (int i = 0; i < 4; ++i) {
    if (kReduceOps[i] == op) return i;
  }
  return -1;
}

xal_status_t reduce_entry(xal_bstream_t* stream, xal_devptr_t dst,
                          xal_devptr_t src, size_t count, xal_dtype_t dtype,
                          xal_op_t op) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const char* type = dtype_name(dtype);
    const char* what = op_name(op);
    if (type == nullptr || what == nullptr) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: reduce takes a dtype and one of sum, prod, "
                            "min, max");
    }
    unsigned long long n = count;
    void* args[] = {&dst, &src, &n};
    return launch(stream, std::string("xal_reduce_") + what + "_" + type,
                  count, args);
  });
}

xal_status_t scale_entry(xal_bstream_t* stream, xal_devptr_t dst, size_t count,
                         xal_dtype_t dtype, double divisor) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const char* type = dtype_name(dtype);
    if (type == nullptr || divisor == 0.0) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: scale takes a dtype and a non-zero divisor");
    }
    unsigned long long n = count;
    void* args[] = {&dst, &divisor, &n};
    return launch(stream, std::string("xal_scale_") + type, count, args);
  });
}

const xal_cuda_reduce_v1_t kReduce = {
    sizeof(xal_cuda_reduce_v1_t),
    reduce_entry,
    scale_entry,
};

}  // namespace

xal_status_t builtin_kernels_load(xal_bdevice_t* device, BuiltinKernels* out) {
  xal_bmodule_s* module = nullptr;
  if (xal_status_t s = builtin_module(device, &module); s != XAL_SUCCESS) return s;
  for (int t = 0; t < XAL_DTYPE_COUNT; ++t) {
    const std::string type = dtype_name(static_cast<xal_dtype_t>(t));
    for (int o = 0; o < 4; ++o) {
      const std::string name = std::string("xal_reduce_") + op_name(kReduceOps[o]) + "_" + type;
      if (xal_status_t s = kernel_get(module, name.c_str(), &out->reduce[o][t]); s) return s;
    }
    const std::string name = "xal_scale_" + type;
    if (xal_status_t s = kernel_get(module, name.c_str(), &out->scale[t]); s) return s;
  }
  return XAL_SUCCESS;
}

xal_status_t builtin_reduce(const BuiltinKernels& kernels, xal_bstream_t* stream,
                            xal_devptr_t dst, xal_devptr_t src, size_t count,
                            xal_dtype_t dtype, xal_op_t op) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const int o = op_index(op);
    const int t = static_cast<int>(dtype);
    if (o < 0 || dtype_name(dtype) == nullptr || kernels.reduce[o][t] == nullptr) {
      return backend->error(XAL_ERROR_INTERNAL, "cuda: no embedded reduce kernel loaded for "
                                                "this dtype and op");
    }
    if (count == 0) return XAL_SUCCESS;
    unsigned long long n = count;
    void* args[] = {&dst, &src, &n};
    return launch_kernel(stream, kernels.reduce[o][t], count, args);
  });
}

xal_status_t builtin_scale(const BuiltinKernels& kernels, xal_bstream_t* stream,
                           xal_devptr_t dst, size_t count, xal_dtype_t dtype, double divisor) {
  xal_backend_s* backend = stream->device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const int t = static_cast<int>(dtype);
    if (dtype_name(dtype) == nullptr || kernels.scale[t] == nullptr || divisor == 0.0) {
      return backend->error(XAL_ERROR_INTERNAL, "cuda: no embedded scale kernel loaded for "
                                                "this dtype, or a zero divisor");
    }
    if (count == 0) return XAL_SUCCESS;
    unsigned long long n = count;
    void* args[] = {&dst, &divisor, &n};
    return launch_kernel(stream, kernels.scale[t], count, args);
  });
}

bool kernels_embedded() { return XAL_CUDA_HAVE_KERNELS != 0; }

const void* kernels_extension(xal_backend_t* backend, const char* name) {
  (void)backend;
  if (name != nullptr && std::string(name) == XAL_CUDA_REDUCE_EXTENSION) {
    return &kReduce;
  }
  return nullptr;
}

}  // namespace xal::cuda
