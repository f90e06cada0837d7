// peer_clique.cpp -- where the ranks' calls of a peer communicator meet
// (peer_clique.h); the collectives themselves are in peer_algorithms.cpp.
#include "peer_clique.h"

#include <algorithm>
#include <chrono>

#include "entries.h"

namespace xal::cuda {

Clique::Clique(std::vector<xal_bdevice_s*> devices, uint32_t timeout_ms)
    : devices_(std::move(devices)), timeout_ms_(timeout_ms), streams_(devices_.size(), nullptr),
      kernels_(devices_.size()), scratch_(devices_.size()), next_call_(devices_.size(), 0) {}

Clique::~Clique() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (streams_[i] != nullptr) {
      stream_synchronize(streams_[i]);
      stream_destroy(streams_[i]);
    }
    for (xal_devptr_t p : scratch_[i].all) mem_free(devices_[i], p);
  }
}

namespace {

// NOT_SUPPORTED (recorded) unless a stream of `device` gets a host function
// runner (host_funcs.h): the ranks' host functions block and call the
// driver, which a driver's callback must not. Tried on a stream of its own.
xal_status_t check_runners(xal_bdevice_s* device) {
  xal_bstream_t* probe = nullptr;
  if (xal_status_t s = stream_create(device, XAL_STREAM_NON_BLOCKING, &probe); s) return s;
  std::string missing;
  const xal_status_t has = stream_has_host_func_runner(probe, &missing);
  stream_destroy(probe);
  if (has != XAL_ERROR_NOT_SUPPORTED) return has;
  return device->backend->error(
      XAL_ERROR_NOT_SUPPORTED,
      "cuda: collectives without NCCL need host functions on xal's threads, and device " +
          std::to_string(device->index) + "'s streams cannot have them (" + missing + ")");
}

}  // namespace

xal_status_t Clique::prepare() {
  for (xal_bdevice_s* device : devices_) {
    if (xal_status_t s = check_runners(device); s != XAL_SUCCESS) return s;
  }
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (xal_status_t s = stream_create(devices_[i], XAL_STREAM_NON_BLOCKING, &streams_[i]); s)
      return s;
    if (xal_status_t s = builtin_kernels_load(devices_[i], &kernels_[i]); s) return s;
  }
  for (xal_bdevice_s* from : devices_) {
    for (xal_bdevice_s* to : devices_) {
      if (from != to) peer_access_enable(from, to);
    }
  }
  return XAL_SUCCESS;
}

xal_status_t Clique::reserve(uint32_t rank, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (scratch_[rank].bytes >= bytes) return XAL_SUCCESS;
  }
  xal_devptr_t p = 0;
  const size_t want = std::max(bytes, size_t{4096});
  if (xal_status_t s = mem_alloc(devices_[rank], want, &p); s != XAL_SUCCESS) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  Scratch& sc = scratch_[rank];
  sc.all.push_back(p);
  if (want > sc.bytes) {
    sc.ptr = p;
    sc.bytes = want;
  }
  return XAL_SUCCESS;
}

uint64_t Clique::queue_call(uint32_t rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_flight_;
  return next_call_[rank]++;
}

void Clique::call_ended() {
  std::lock_guard<std::mutex> lock(mutex_);
  --in_flight_;
  cv_.notify_all();  // under the lock: the waiter may free us once it is released
}

bool Clique::wait_calls(uint32_t ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return in_flight_ == 0; });
}

xal_status_t Clique::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::string Clique::error_message() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_message_;
}

void Clique::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  fail_locked(XAL_ERROR_ABORTED, "the communicator was aborted");
  cv_.notify_all();
}

void Clique::fail(xal_status_t status, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_locked(status, message);
  cv_.notify_all();
}

void Clique::fail_locked(xal_status_t status, const std::string& message) {
  if (error_ != XAL_SUCCESS) return;  // the first error stays
  error_ = status;
  error_message_ = message;
}

void Clique::arrive(uint32_t rank, uint64_t seq, const common::CollDesc& desc,
                    xal_devptr_t send, xal_devptr_t recv) {
  std::unique_lock<std::mutex> lock(mutex_);
  Call& call = calls_[seq];
  if (call.parts.empty()) {
    call.desc = desc;
    call.first = rank;
    call.parts.resize(size());
    call.here.resize(size(), false);
  } else if (call.mismatch.empty()) {
    const std::string what = common::coll_difference(desc, call.desc);
    if (!what.empty()) {
      call.mismatch = "rank " + std::to_string(rank) + " called with " + what + " of rank " +
                      std::to_string(call.first);
    }
  }
  call.parts[rank] = {send, recv};
  call.here[rank] = true;
  if (++call.arrived == size()) {
    if (error_ == XAL_SUCCESS && call.mismatch.empty()) {
      lock.unlock();
      const xal_status_t s = run(call.desc, call.parts);
      lock.lock();
      if (s != XAL_SUCCESS) {
        const std::string& why = last_error_message();
        fail_locked(s, std::string(common::coll_name(desc.kind)) + " failed on the device" +
                           (why.empty() ? "" : ": " + why));
      }
    } else if (!call.mismatch.empty() && error_ == XAL_SUCCESS) {
      fail_locked(XAL_ERROR_COLLECTIVE_MISMATCH, "the ranks disagree on call " +
                                                     std::to_string(seq) + ": " + call.mismatch);
    }
    call.done = true;
    cv_.notify_all();
  } else {
    // The timeout is for the other ranks to come; once all are here, the
    // collective runs as long as it takes.
    auto all_here = [&] { return call.arrived == size() || error_ != XAL_SUCCESS; };
    if (timeout_ms_ != 0 &&
        !cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), all_here)) {
      std::string missing;
      for (uint32_t r = 0; r < size(); ++r) {
        if (!call.here[r]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      }
      fail_locked(XAL_ERROR_TIMEOUT, std::string(common::coll_name(desc.kind)) +
                                         ": timed out after " + std::to_string(timeout_ms_) +
                                         " ms waiting for rank(s) " + missing +
                                         " (seen from rank " + std::to_string(rank) + ")");
      cv_.notify_all();
    }
    // Only an abort leaves a running collective early (a hung device): any
    // other error leaves it to end, so that no rank's stream goes on while
    // the collective still writes its buffer.
    cv_.wait(lock, [&] {
      return call.done || aborted_ || (error_ != XAL_SUCCESS && call.arrived < size());
    });
  }
  if (++call.left == size()) calls_.erase(seq);
}

}  // namespace xal::cuda
