#include "xal_runtime.hpp"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <mutex>

namespace xal::torch_backend {

namespace {

std::once_flag g_init_once;
xal_status_t g_init_status = XAL_SUCCESS;
std::string g_init_message;

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string last_error_text(xal_status_t status) {
  xal_error_info_t info{};
  info.struct_size = sizeof info;
  std::string text = xal_status_name(status);
  if (xal_last_error(&info) == XAL_SUCCESS && info.status == status) {
    if (info.operation[0]) text += std::string(" (") + info.operation + ")";
    if (info.message[0]) text += std::string(": ") + info.message;
  }
  return text;
}

}  // namespace

namespace {
thread_local xal_status_t t_thrown = XAL_SUCCESS;
}  // namespace

xal_status_t last_thrown_status() { return t_thrown; }
void clear_thrown_status() { t_thrown = XAL_SUCCESS; }

void throw_xal(const std::string& what, xal_status_t status) {
  t_thrown = status;
  const std::string text = "xal: " + what + " failed: " + last_error_text(status);
  if (status == XAL_ERROR_OUT_OF_MEMORY || status == XAL_ERROR_OUT_OF_HOST_MEMORY)
    C10_THROW_ERROR(OutOfMemoryError, text);
  C10_THROW_ERROR(DistBackendError, text);
}

xal_device_t process_device(int local_rank) {
  std::call_once(g_init_once, [] {
    g_init_status = xal_init(nullptr);
    if (g_init_status == XAL_ERROR_INVALID_ARGUMENT) g_init_status = XAL_SUCCESS;  // already up
    if (g_init_status != XAL_SUCCESS) g_init_message = last_error_text(g_init_status);
  });
  TORCH_CHECK(g_init_status == XAL_SUCCESS, "xal: xal_init failed: ", g_init_message);
  static std::mutex mu;
  static xal_device_t chosen = nullptr;
  std::lock_guard lock(mu);
  if (chosen) return chosen;
  uint32_t count = 0;
  check_xal("xal_device_count", xal_device_count(&count));
  const char* from = nullptr;
  for (const char* name : {"XAL_TORCH_DEVICE", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v && *v) {
      from = name;
      break;
    }
  }
  long index = local_rank;
  if (from) {
    char* end = nullptr;
    const char* text = std::getenv(from);
    index = std::strtol(text, &end, 10);
    TORCH_CHECK(end != text && *end == '\0' && index >= 0, "xal: ", from, "=", text,
                " is not a device index");
  }
  TORCH_CHECK(index < static_cast<long>(count), "xal: ",
              from ? from : "the rank's place on its host", "=", index, " but only ", count,
              " xal device(s) are visible (XAL_BACKENDS=", env_or("XAL_BACKENDS", "<all>"),
              ", XAL_MOCK_DEVICES=", env_or("XAL_MOCK_DEVICES", "<default>"),
              ", XAL_DEVICE_SELECTOR=", env_or("XAL_DEVICE_SELECTOR", "<none>"),
              "; XAL_TORCH_DEVICE picks another)");
  xal_device_t dev = nullptr;
  check_xal("xal_device_get", xal_device_get(static_cast<uint32_t>(index), &dev));
  chosen = dev;
  return dev;
}

std::string describe_device(xal_device_t dev) {
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  if (xal_device_get_properties(dev, &p) != XAL_SUCCESS) return "<unknown device>";
  return std::string(p.backend) + ":" + std::to_string(p.index) + " " + p.name;
}

xal_dtype_t reduce_dtype(const char* op_name, at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return XAL_DTYPE_F32;
    case at::kDouble: return XAL_DTYPE_F64;
    case at::kHalf: return XAL_DTYPE_F16;
    case at::kBFloat16: return XAL_DTYPE_BF16;
    case at::kChar: return XAL_DTYPE_I8;
    case at::kByte: return XAL_DTYPE_U8;
    case at::kBool: return XAL_DTYPE_U8;
    case at::kInt: return XAL_DTYPE_I32;
    case at::kLong: return XAL_DTYPE_I64;
    case at::kUInt32: return XAL_DTYPE_U32;
    case at::kUInt64: return XAL_DTYPE_U64;
    default: break;
  }
  C10_THROW_ERROR(TypeError, std::string("xal: ") + op_name + " does not support dtype " +
                                 c10::toString(dtype) +
                                 " (xal reduces float32/64, float16, bfloat16, int8/32/64, "
                                 "uint8/32/64 and bool)");
}

}  // namespace xal::torch_backend
