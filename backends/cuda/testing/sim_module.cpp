// sim_module.cpp -- the simulated module loader and kernel launches.
// Modules are PTX text: the loader reads the `.entry` names. An image that
// contains XALSIM_JIT_ERROR fails to "compile" with a log, as ptxas would.
// Kernels run on the host on the stream's worker: xal's reduction kernels
// (xal_reduce_<op>_<dtype>, xal_scale_<dtype>) and test kernels
// (xalsim_fill_u32, xalsim_illegal_address), and xal-cuda-rawbench's gate
// (xal_bench_spin: sleeps its nanoseconds); others do nothing.
// SIMULATION ONLY.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <thread>

#include "sim_state.h"

namespace xalsim {

#define XALSIM_INJECT(name) \
  if (CUresult injected_ = injected(name); injected_ != CUDA_SUCCESS) \
    return injected_;
#define XALSIM_CONTEXT()                          \
  CUresult ctx_error_ = CUDA_SUCCESS;             \
  Context* ctx = context_for_call(&ctx_error_);   \
  if (ctx == nullptr) return ctx_error_;

namespace {

// bf16 <-> float, round to nearest even.
float bf16_to_float(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

struct BF16 {
  uint16_t bits;
};

template <typename T> struct Traits {
  using C = T;
  static C load(T v) { return v; }
  static T store(C v) { return v; }
};
template <> struct Traits<_Float16> {
  using C = float;
  static C load(_Float16 v) { return static_cast<float>(v); }
  static _Float16 store(C v) { return static_cast<_Float16>(v); }
};
template <> struct Traits<BF16> {
  using C = float;
  static C load(BF16 v) { return bf16_to_float(v.bits); }
  static BF16 store(C v) { return BF16{float_to_bf16(v)}; }
};

template <typename T, typename Op>
void reduce_with(void* dst_p, const void* src_p, size_t n, Op op) {
  using Tr = Traits<T>;
  T* dst = static_cast<T*>(dst_p);
  const T* src = static_cast<const T*>(src_p);
  for (size_t i = 0; i < n; ++i) dst[i] = Tr::store(op(Tr::load(dst[i]), Tr::load(src[i])));
}

// The op is chosen once per launch, not per element.
template <typename T>
void reduce(const std::string& op, void* dst, const void* src, size_t n) {
  using C = typename Traits<T>::C;
  if (op == "sum") reduce_with<T>(dst, src, n, [](C a, C b) { return static_cast<C>(a + b); });
  else if (op == "prod") reduce_with<T>(dst, src, n, [](C a, C b) { return static_cast<C>(a * b); });
  else if (op == "min") reduce_with<T>(dst, src, n, [](C a, C b) { return b < a ? b : a; });
  else if (op == "max") reduce_with<T>(dst, src, n, [](C a, C b) { return a < b ? b : a; });
}

template <typename T>
void scale(void* dst_p, double divisor, size_t n) {
  using Tr = Traits<T>;
  T* dst = static_cast<T*>(dst_p);
  for (size_t i = 0; i < n; ++i) {
    dst[i] = Tr::store(static_cast<typename Tr::C>(Tr::load(dst[i]) / divisor));
  }
}

template <typename Fn>
bool by_dtype(const std::string& t, Fn&& fn) {
  if (t == "i8") fn(int8_t{});
  else if (t == "u8") fn(uint8_t{});
  else if (t == "i32") fn(int32_t{});
  else if (t == "u32") fn(uint32_t{});
  else if (t == "i64") fn(int64_t{});
  else if (t == "u64") fn(uint64_t{});
  else if (t == "f16") fn(_Float16{});
  else if (t == "bf16") fn(BF16{});
  else if (t == "f32") fn(float{});
  else if (t == "f64") fn(double{});
  else return false;
  return true;
}

template <typename T>
T arg(void** params, int i) {
  T v;
  std::memcpy(&v, params[i], sizeof v);
  return v;
}

}  // namespace

CUresult run_kernel(const std::string& name, void** params,
                    unsigned long long threads) {
  (void)threads;
  static const std::regex reduce_re("xal_reduce_(sum|prod|min|max)_([a-z0-9]+)");
  static const std::regex scale_re("xal_scale_([a-z0-9]+)");
  std::smatch m;
  if (std::regex_match(name, m, reduce_re)) {
    void* dst = reinterpret_cast<void*>(arg<CUdeviceptr>(params, 0));
    void* src = reinterpret_cast<void*>(arg<CUdeviceptr>(params, 1));
    const auto n = arg<unsigned long long>(params, 2);
    const std::string op = m[1];
    by_dtype(m[2], [&](auto tag) { reduce<decltype(tag)>(op, dst, src, n); });
  } else if (std::regex_match(name, m, scale_re)) {
    void* dst = reinterpret_cast<void*>(arg<CUdeviceptr>(params, 0));
    const double divisor = arg<double>(params, 1);
    const auto n = arg<unsigned long long>(params, 2);
    by_dtype(m[1], [&](auto tag) { scale<decltype(tag)>(dst, divisor, n); });
  } else if (name == "xalsim_fill_u32") {
    auto* dst = reinterpret_cast<uint32_t*>(arg<CUdeviceptr>(params, 0));
    const auto value = arg<uint32_t>(params, 1);
    const auto n = arg<unsigned long long>(params, 2);
    for (unsigned long long i = 0; i < n; ++i) dst[i] = value;
  } else if (name == "xalsim_illegal_address") {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  } else if (name == "xal_bench_spin") {  // xal-cuda-rawbench's gate
    std::this_thread::sleep_for(std::chrono::nanoseconds(arg<unsigned long long>(params, 0)));
  }
  return CUDA_SUCCESS;
}

namespace {

// The parameter sizes of the kernels the simulation runs.
std::vector<size_t> param_sizes(const std::string& name) {
  if (name.rfind("xal_reduce_", 0) == 0 || name.rfind("xal_scale_", 0) == 0) {
    return {8, 8, 8};
  }
  if (name == "xalsim_fill_u32") return {8, 4, 8};
  if (name == "xal_bench_spin") return {8};
  return {};
}

void write_log(unsigned int n, CUjit_option* options, void** values,
               const std::string& text) {
  char* buffer = nullptr;
  size_t size = 0;
  for (unsigned int i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) buffer = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer == nullptr || size == 0) return;
  const size_t len = std::min(size - 1, text.size());
  std::memcpy(buffer, text.data(), len);
  buffer[len] = '\0';
}

// The newest PTX ISA (major * 10 + minor) a driver of CUDA `version` JITs.
int newest_ptx_isa(int version) {
  const int major = version / 1000;
  const int minor = version % 1000 / 10;
  if (major >= 13) return 90 + minor;
  if (major == 12) return minor <= 5 ? 80 + minor : minor == 6 ? 85 : 79 + minor;
  if (major == 11) return 70 + minor;
  return 65;
}

long line_of(const std::string& text, std::ptrdiff_t pos) {
  return 1 + std::count(text.begin(), text.begin() + pos, '\n');
}

CUresult sim_cuModuleLoadDataEx(CUmodule* out, const void* image,
                                unsigned int n, CUjit_option* options,
                                void** values) {
  XALSIM_INJECT("cuModuleLoadDataEx");
  XALSIM_CONTEXT();
  if (out == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  load_syncs(ctx);  // XALSIM_CUDA_LOAD_SYNCS=1: as a real driver may
  const unsigned char* bytes = static_cast<const unsigned char*>(image);
  // Binary images (ELF cubin, fatbin) hold no code for a simulated GPU.
  if ((bytes[0] == 0x7f && bytes[1] == 'E') ||
      (bytes[0] == 0x50 && bytes[1] == 0xed && bytes[2] == 0x55)) {
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  const std::string text(static_cast<const char*>(image));
  if (const auto pos = text.find("XALSIM_JIT_ERROR"); pos != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + pos, '\n');
    write_log(n, options, values,
              "ptxas application ptx input, line " + std::to_string(line) +
                  "; error   : XALSIM_JIT_ERROR: syntax error (simulated)\n"
                  "ptxas fatal   : Ptx assembly aborted due to errors\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  if (text.find(".version") == std::string::npos) return CUDA_ERROR_INVALID_IMAGE;
  // As the real JIT: PTX of an ISA newer than the driver's, or for a newer
  // GPU than the simulated H200 (sm_90), does not load.
  static const std::regex version_re("\\.version\\s+([0-9]+)\\.([0-9]+)");
  static const std::regex target_re("\\.target\\s+sm_([0-9]+)");
  std::smatch m;
  if (std::regex_search(text, m, version_re)) {
    const int isa = std::stoi(m[1]) * 10 + std::stoi(m[2]);
    const int newest = newest_ptx_isa(driver_version());
    if (isa > newest) {
      write_log(n, options, values,
                "ptxas application ptx input, line " +
                    std::to_string(line_of(text, m.position(0))) +
                    "; fatal   : Unsupported .version " + m[1].str() + "." +
                    m[2].str() + "; current version is '" +
                    std::to_string(newest / 10) + "." +
                    std::to_string(newest % 10) + "'\n");
      return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
  }
  if (std::regex_search(text, m, target_re) && std::stoi(m[1]) > 90) {
    write_log(n, options, values,
              "ptxas fatal   : SM version specified by .target is higher "
              "than default SM version assumed\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  auto module = std::make_unique<Module>();
  module->ctx = ctx;
  static const std::regex entry_re("\\.entry\\s+([A-Za-z_$][A-Za-z0-9_$]*)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry_re);
       it != std::sregex_iterator(); ++it) {
    module->entries.insert((*it)[1]);
  }
  std::lock_guard<std::mutex> lock(driver().mutex);
  Module* raw = module.get();
  driver().modules.emplace(raw, std::move(module));
  ctx->modules[raw];
  *out = reinterpret_cast<CUmodule>(raw);
  return CUDA_SUCCESS;
}

CUresult sim_cuModuleUnload(CUmodule m) {
  XALSIM_INJECT("cuModuleUnload");
  XALSIM_CONTEXT();
  Module* module = reinterpret_cast<Module*>(m);
  std::lock_guard<std::mutex> lock(driver().mutex);
  auto it = driver().modules.find(module);
  if (it == driver().modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& f : module->ctx->modules[module]) driver().functions.erase(f.get());
  module->ctx->modules.erase(module);
  driver().modules.erase(it);
  return CUDA_SUCCESS;
}

CUresult sim_cuModuleGetFunction(CUfunction* out, CUmodule m, const char* name) {
  XALSIM_INJECT("cuModuleGetFunction");
  XALSIM_CONTEXT();
  if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Module* module = reinterpret_cast<Module*>(m);
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    if (driver().modules.count(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (module->entries.count(name) == 0) return CUDA_ERROR_NOT_FOUND;
    first = module->got.insert(name).second;
  }
  // With lazy loading the function is loaded now (XALSIM_CUDA_LOAD_SYNCS).
  if (first) load_syncs(ctx);
  std::lock_guard<std::mutex> lock(driver().mutex);
  if (driver().modules.count(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
  auto function = std::make_unique<Function>();
  function->module = module;
  function->name = name;
  Function* raw = function.get();
  driver().functions.insert(raw);
  module->ctx->modules[module].push_back(std::move(function));
  *out = reinterpret_cast<CUfunction>(raw);
  return CUDA_SUCCESS;
}

CUresult sim_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, CUstream stream, void** params,
                            void** extra) {
  XALSIM_INJECT("cuLaunchKernel");
  XALSIM_CONTEXT();
  Function* function = reinterpret_cast<Function*>(f);
  std::string name;
  int max_shared = 0;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    if (driver().functions.count(function) == 0) return CUDA_ERROR_INVALID_HANDLE;
    name = function->name;
    max_shared = function->max_dynamic_shared;
  }
  if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  // An H200's limits: grid x < 2^31, y and z <= 65535; block x, y <= 1024,
  // z <= 64, 1024 threads; dynamic shared memory up to the kernel's opt-in.
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
      gx > 0x7fffffffu || gy > 65535 || gz > 65535 || bx > 1024 ||
      by > 1024 || bz > 64 ||
      static_cast<unsigned long long>(bx) * by * bz > 1024 ||
      shared > static_cast<unsigned>(max_shared)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Parameters are read at launch, as the driver does: copy them now.
  std::vector<std::vector<unsigned char>> copies;
  const std::vector<size_t> sizes = param_sizes(name);
  if (!sizes.empty() && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(params[i]);
    copies.emplace_back(p, p + sizes[i]);
  }
  const unsigned long long threads =
      1ull * gx * gy * gz * bx * by * bz;
  // XALSIM_CUDA_KERNEL_MS: every kernel takes at least that long (a slow
  // device), read at launch.
  const char* slow = std::getenv("XALSIM_CUDA_KERNEL_MS");
  const long slow_ms = slow != nullptr ? std::strtol(slow, nullptr, 10) : 0;
  return submit(stream, [name, copies, threads, slow_ms]() mutable {
    if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
    void* p[3] = {nullptr, nullptr, nullptr};
    for (size_t i = 0; i < copies.size(); ++i) p[i] = copies[i].data();
    return run_kernel(name, p, threads);
  });
}

CUresult sim_cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute,
                                int value) {
  XALSIM_INJECT("cuFuncSetAttribute");
  XALSIM_CONTEXT();
  Function* function = reinterpret_cast<Function*>(f);
  std::lock_guard<std::mutex> lock(driver().mutex);
  if (driver().functions.count(function) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  constexpr int kOptInLimit = 227 * 1024;  // sm_90, per block
  if (value < 0 || value > kOptInLimit) return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

}  // namespace

const std::vector<Symbol>& module_symbols() {
  static const std::vector<Symbol> symbols = {
#define S(name) {#name, reinterpret_cast<void*>(&sim_##name)}
      S(cuModuleLoadDataEx), S(cuModuleUnload), S(cuModuleGetFunction),
      S(cuLaunchKernel), S(cuFuncSetAttribute),
#undef S
  };
  return symbols;
}

}  // namespace xalsim
