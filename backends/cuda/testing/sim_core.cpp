// sim_core.cpp -- the simulated driver's entry point (cuGetProcAddress),
// error injection and the symbol table. SIMULATION ONLY.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "sim_state.h"
#include "xal_common/strings.hpp"

namespace xalsim {

Driver& driver() {
  static Driver* instance = new Driver();  // never destroyed: workers may run
  return *instance;
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS: case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT: case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE: case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE: case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return true;
    default:
      return false;
  }
}

namespace {

// XALSIM_CUDA_FAIL="cuMemAlloc=2;cuStreamSynchronize=700@1": fail every call
// of a function with the code, or only its N-th call (counted from the time
// the variable took its current value).
struct Injection {
  std::mutex mutex;
  std::string spec;
  struct Rule {
    CUresult code;
    uint64_t nth;  // 0: every call
    uint64_t calls;
  };
  std::unordered_map<std::string, Rule> rules;

  void parse(const std::string& text) {
    spec = text;
    rules.clear();
    for (const std::string& item : xal::common::split(text, ";,")) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      std::string name(xal::common::trim(item.substr(0, eq)));
      const auto v = name.rfind("_v");
      if (v != std::string::npos && v + 2 < name.size() &&
          name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
        name.resize(v);  // cuMemAlloc_v2 -> cuMemAlloc
      }
      std::string value = item.substr(eq + 1);
      uint64_t nth = 0;
      if (const auto at = value.find('@'); at != std::string::npos) {
        nth = std::strtoull(value.c_str() + at + 1, nullptr, 10);
        value.resize(at);
      }
      rules[name] = Rule{static_cast<CUresult>(std::atoi(value.c_str())), nth, 0};
    }
  }
};

Injection& injection() {
  static Injection* instance = new Injection();
  return *instance;
}

bool hidden(const char* name) {
  const char* v = std::getenv("XALSIM_CUDA_HIDE");
  if (v == nullptr) return false;
  for (const std::string& item : xal::common::split(v, ",; ")) {
    if (item == name) return true;
  }
  return false;
}

}  // namespace

CUresult injected(const char* name) {
  // The real driver forbids its API inside a host function; it may answer
  // CUDA_ERROR_NOT_PERMITTED (or deadlock). The simulation always answers.
  if (in_host_function) return CUDA_ERROR_NOT_PERMITTED;
  Injection& inj = injection();
  const char* spec = std::getenv("XALSIM_CUDA_FAIL");
  std::lock_guard<std::mutex> lock(inj.mutex);
  const std::string text = spec != nullptr ? spec : "";
  if (text != inj.spec) inj.parse(text);
  auto it = inj.rules.find(name);
  if (it == inj.rules.end()) return CUDA_SUCCESS;
  Injection::Rule& rule = it->second;
  ++rule.calls;
  if (rule.nth != 0 && rule.calls != rule.nth) return CUDA_SUCCESS;
  if (is_sticky(rule.code) && current != nullptr) current->sticky = rule.code;
  return rule.code;
}

Context* context_for_call(CUresult* out_error) {
  if (current == nullptr) {
    *out_error = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  const CUresult sticky = current->sticky.load();
  if (sticky != CUDA_SUCCESS) {
    *out_error = sticky;
    return nullptr;
  }
  *out_error = CUDA_SUCCESS;
  return current;
}

namespace {

void* lookup(const char* symbol) {
  if (symbol == nullptr || hidden(symbol)) return nullptr;
  for (const auto* table : {&device_symbols(), &memory_symbols(),
                            &stream_symbols(), &module_symbols()}) {
    for (const Symbol& s : *table) {
      if (std::strcmp(s.name, symbol) == 0) return s.fn;
    }
  }
  if (!ipc_enabled()) return nullptr;  // a driver without IPC
  for (const Symbol& s : ipc_symbols()) {
    if (std::strcmp(s.name, symbol) == 0) return s.fn;
  }
  return nullptr;
}

}  // namespace

int driver_version() {
  const char* v = std::getenv("XALSIM_CUDA_VERSION");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 13000;
}

std::atomic<unsigned long long>& proc_flags_seen() {
  static std::atomic<unsigned long long> flags{0};
  return flags;
}

}  // namespace xalsim

namespace {
constexpr unsigned long long kXalsimDefaultFlagSeen = 1ull << 8;
}  // namespace

extern "C" {

// Marks this library as xal's simulated driver.
__attribute__((visibility("default"))) int xalsim_is_simulated(void) {
  return 1;
}

// CUDA 12+ entry point, as strict as the real one: a version newer than the
// driver is CUDA_ERROR_INVALID_VALUE, unknown flag bits too, and an unknown
// symbol is CUDA_SUCCESS with a null pointer and SYMBOL_NOT_FOUND. Beyond
// that the simulation has one variant of each function, whatever the
// requested version. The flags asked for are remembered for the tests
// (xalsim_proc_address_flags).
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* status) {
  if (pfn == nullptr || symbol == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  constexpr cuuint64_t kKnown = CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  xalsim::proc_flags_seen().fetch_or(flags == 0 ? kXalsimDefaultFlagSeen : flags);
  if (cuda_version > xalsim::driver_version()) return CUDA_ERROR_INVALID_VALUE;
  *pfn = xalsim::lookup(symbol);
  if (status != nullptr) {
    *status = *pfn != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS
                              : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  return CUDA_SUCCESS;
}

// The union of the flags cuGetProcAddress was called with since the library
// was loaded (CU_GET_PROC_ADDRESS_DEFAULT counts as 1 << 8). For tests.
__attribute__((visibility("default"))) unsigned long long
xalsim_proc_address_flags(void) {
  return xalsim::proc_flags_seen().load();
}

// CUDA 11.3 entry point (cuda.h maps the name to _v2; undo that here).
#undef cuGetProcAddress
__attribute__((visibility("default"))) CUresult cuGetProcAddress(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, nullptr);
}

}  // extern "C"
