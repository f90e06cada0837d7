#include "rccl.h"

#include <dlfcn.h>

namespace xal::hip {

Rccl::~Rccl() {
  if (handle_ != nullptr) dlclose(handle_);
}

bool Rccl::load(const std::string& path, bool runtime_simulated,
                std::string* reason) {
  if (path.empty() && runtime_simulated) {
    *reason = "the simulated runtime takes only a simulated RCCL named by "
              "XAL_RCCL_LIBRARY";
    return false;
  }
  const std::string name = path.empty() ? "librccl.so.1" : path;
  dlerror();
  // Never unloaded (RTLD_NODELETE), as NCCL in the CUDA plugin: its exit
  // handlers and per-thread state must outlive its use.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* text = dlerror();
    *reason = name + ": " + (text != nullptr ? text : "not found");
    return false;
  }
  bool complete = true;
  auto resolve = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, symbol));
    if (fn == nullptr && complete) {
      complete = false;
      *reason = name + " lacks " + symbol;
    }
  };
  resolve(ncclGetErrorString, "ncclGetErrorString");
  resolve(ncclCommInitAll, "ncclCommInitAll");
  resolve(ncclCommDestroy, "ncclCommDestroy");
  resolve(ncclCommAbort, "ncclCommAbort");
  resolve(ncclCommGetAsyncError, "ncclCommGetAsyncError");
  resolve(ncclGroupStart, "ncclGroupStart");
  resolve(ncclGroupEnd, "ncclGroupEnd");
  resolve(ncclAllReduce, "ncclAllReduce");
  resolve(ncclBroadcast, "ncclBroadcast");
  resolve(ncclReduce, "ncclReduce");
  resolve(ncclAllGather, "ncclAllGather");
  resolve(ncclReduceScatter, "ncclReduceScatter");
  resolve(ncclSend, "ncclSend");
  resolve(ncclRecv, "ncclRecv");
  const bool simulated = dlsym(handle, "xalsim_nccl_is_simulated") != nullptr;
  if (complete && simulated != runtime_simulated) {
    complete = false;
    *reason = name + (simulated ? ": the simulated RCCL needs the simulated runtime"
                                : ": the real RCCL cannot run on the simulated runtime");
  }
  if (!complete) {
    dlclose(handle);
    return false;
  }
  handle_ = handle;
  simulated_ = simulated;
  return true;
}

}  // namespace xal::hip
