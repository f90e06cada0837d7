// host_funcs.cpp -- host functions on a thread of their stream (see
// host_funcs.h).
#include "host_funcs.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "backend.h"

namespace xal::cuda {

namespace {

constexpr size_t kCounterBytes = 4096;  // one page: registered on its own

void set_counter(uint32_t* counter, uint32_t value) {
  std::atomic_ref<uint32_t>(*counter).store(value, std::memory_order_release);
}

thread_local bool t_on_runner = false;  // HostFuncRunner::run() of this thread

}  // namespace

bool on_host_func_thread() { return t_on_runner; }

HostFuncRunner::HostFuncRunner(Token, xal_bdevice_s* device, CUstream stream)
    : device_(device), driver_(device->backend->driver), stream_(stream) {}

std::unique_ptr<HostFuncRunner> HostFuncRunner::create(xal_bdevice_s* device,
                                                       CUstream stream,
                                                       const char** out_call,
                                                       CUresult* out_result) {
  const DriverSymbols& d = device->backend->driver;
  // A function the driver lacks: named, with CUDA_ERROR_NOT_SUPPORTED.
  *out_result = CUDA_ERROR_NOT_SUPPORTED;
  const std::pair<const void*, const char*> needed[] = {
      {reinterpret_cast<const void*>(d.cuLaunchHostFunc), "cuLaunchHostFunc"},
      {reinterpret_cast<const void*>(d.cuStreamWaitValue32), "cuStreamWaitValue32"},
      {reinterpret_cast<const void*>(d.cuMemHostRegister), "cuMemHostRegister"},
      {reinterpret_cast<const void*>(d.cuMemHostGetDevicePointer), "cuMemHostGetDevicePointer"}};
  for (const auto& [fn, name] : needed) {
    if (fn == nullptr) {
      *out_call = name;
      return nullptr;
    }
  }
  auto r = std::make_unique<HostFuncRunner>(Token{}, device, stream);
  r->counter_ = static_cast<uint32_t*>(std::aligned_alloc(kCounterBytes, kCounterBytes));
  if (r->counter_ == nullptr) throw std::bad_alloc();
  set_counter(r->counter_, 0);
  auto failed = [&](const char* call, CUresult result) {
    *out_call = call;
    *out_result = result;
    return nullptr;
  };
  CUresult res = d.cuMemHostRegister(r->counter_, kCounterBytes,
                                     CU_MEMHOSTREGISTER_PORTABLE |
                                         CU_MEMHOSTREGISTER_DEVICEMAP);
  if (res != CUDA_SUCCESS) return failed("cuMemHostRegister", res);
  r->registered_ = true;
  res = d.cuMemHostGetDevicePointer(&r->counter_device_, r->counter_, 0);
  if (res != CUDA_SUCCESS) return failed("cuMemHostGetDevicePointer", res);
  // A wait that holds already: CUDA_ERROR_NOT_SUPPORTED here when the
  // device cannot wait on memory.
  res = d.cuStreamWaitValue32(stream, r->counter_device_, 0, CU_STREAM_WAIT_VALUE_GEQ);
  if (res != CUDA_SUCCESS) return failed("cuStreamWaitValue32", res);
  r->thread_ = std::thread([raw = r.get()] { raw->run(); });
  *out_result = CUDA_SUCCESS;
  return r;
}

HostFuncRunner::~HostFuncRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();  // after the jobs left (run())
  if (registered_ && device_->make_current() == CUDA_SUCCESS) {
    driver_.cuMemHostUnregister(counter_);  // after a reset: already gone
  }
  std::free(counter_);
}

CUresult HostFuncRunner::enqueue(void (*fn)(void*), void* user,
                                 const char** out_call) {
  Job* job = nullptr;
  uint32_t ticket = 0;
  {
    auto owned = std::make_unique<Job>();
    owned->runner = this;
    owned->fn = fn;
    owned->user = user;
    std::lock_guard<std::mutex> lock(mutex_);
    ticket = owned->ticket = ++next_ticket_;
    job = owned.get();
    jobs_.push_back(std::move(owned));
  }
  CUresult r = driver_.cuLaunchHostFunc(stream_, &HostFuncRunner::reached, job);
  if (r != CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->get() == job) {
        jobs_.erase(it);
        break;
      }
    }
    *out_call = "cuLaunchHostFunc";
    return r;
  }
  r = driver_.cuStreamWaitValue32(stream_, counter_device_, ticket,
                                  CU_STREAM_WAIT_VALUE_GEQ);
  if (r != CUDA_SUCCESS) {
    // The host function is queued and will run: have it run the job itself,
    // so that the stream still waits for it. (A job the thread has taken
    // already runs unordered; the stream is failing anyway.)
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& queued : jobs_) {
      if (queued.get() == job && !job->reached) inline_.insert(job);
    }
    device_->backend->log(XAL_LOG_WARNING,
                          "cuda: cuStreamWaitValue32 failed (" + std::to_string(r) +
                              "); a host function runs on the driver's thread");
  }
  return CUDA_SUCCESS;
}

void CUDA_CB HostFuncRunner::reached(void* p) {
  Job* job = static_cast<Job*>(p);
  HostFuncRunner* self = job->runner;
  std::unique_ptr<Job> run_here;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (self->inline_.erase(job) != 0 && !self->jobs_.empty() &&
        self->jobs_.front().get() == job) {
      run_here = std::move(self->jobs_.front());
      self->jobs_.pop_front();
    } else {
      job->reached = true;
    }
  }
  if (run_here) {
    run_here->fn(run_here->user);
    set_counter(self->counter_, run_here->ticket);
    return;
  }
  self->cv_.notify_all();
}

void HostFuncRunner::run() {
  t_on_runner = true;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] {
      return stop_ || (!jobs_.empty() && jobs_.front()->reached);
    });
    if (jobs_.empty()) return;  // stopping, nothing left
    // Stopping: the stream is idle or dead, and a job it has not reached
    // never will be; it runs all the same (its argument is its own).
    std::unique_ptr<Job> job = std::move(jobs_.front());
    jobs_.pop_front();
    inline_.erase(job.get());
    lock.unlock();
    job->fn(job->user);
    set_counter(counter_, job->ticket);
    lock.lock();
  }
}

DriverHostFuncs::~DriverHostFuncs() {
  std::map<uint64_t, std::unique_ptr<Record>> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(pending_);
  }
  for (auto& [sequence, record] : left) record->fn(record->user);
}

CUresult DriverHostFuncs::enqueue(void (*fn)(void*), void* user) {
  Record* raw = nullptr;
  uint64_t sequence = 0;
  {
    auto record = std::make_unique<Record>();
    record->owner = this;
    record->fn = fn;
    record->user = user;
    std::lock_guard<std::mutex> lock(mutex_);
    sequence = record->sequence = ++next_sequence_;
    raw = record.get();
    pending_.emplace(sequence, std::move(record));
  }
  const CUresult r = driver_.cuLaunchHostFunc(stream_, &DriverHostFuncs::called, raw);
  if (r != CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(sequence);
  }
  return r;
}

void CUDA_CB DriverHostFuncs::called(void* p) {
  auto* raw = static_cast<Record*>(p);
  DriverHostFuncs* self = raw->owner;
  std::unique_ptr<Record> record;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    auto it = self->pending_.find(raw->sequence);
    if (it == self->pending_.end()) return;  // cannot be: one call each
    record = std::move(it->second);
    self->pending_.erase(it);
  }
  record->fn(record->user);
}

}  // namespace xal::cuda
