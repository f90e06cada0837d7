// xal-bench train: the model on one rank (train_model.cpp). RAII owners of
// xal objects, the host data, and the kernels of a residual MLP block:
//   forward   h = relu(x W1),  y = x + h W2          (x: rows x D, h: rows x F)
//   backward  G2 (+)= h^T g,  dh = g W2^T,  du = dh * (h > 0),
//             G1 (+)= x^T du, g += du W1^T           (g: dL/dy, becomes dL/dx)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "train.hpp"

namespace xal::bench::train {

// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(xal_device_t dev, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  xal_devptr_t ptr() const { return ptr_; }
  // The address of float element i.
  xal_devptr_t at(size_t i) const { return ptr_ + i * sizeof(float); }
  size_t bytes() const { return bytes_; }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(dev_, o.dev_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  xal_device_t dev_ = nullptr;
  xal_devptr_t ptr_ = 0;
  size_t bytes_ = 0;
};

// A handle destroyed by `Destroy` (streams, events, communicators, modules).
template <class H, xal_status_t (*Destroy)(H)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H h) : h_(h) {}
  ~Owned() {
    if (h_) Destroy(h_);
  }
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  H get() const { return h_; }
  H* out() { return &h_; }

 private:
  H h_ = nullptr;
};
using Stream = Owned<xal_stream_t, xal_stream_destroy>;
using Event = Owned<xal_event_t, xal_event_destroy>;
using Comm = Owned<xal_comm_t, xal_comm_destroy>;
using Module = Owned<xal_module_t, xal_module_unload>;

Stream make_stream(xal_device_t dev);
Event make_event(xal_device_t dev);
// One communicator per local rank over every rank of the job.
std::vector<Comm> make_comms(const Ranks& ranks);

// The training data and the initial weights, the same in every process
// (generated from the seed): `batches` batches of B samples, inputs x and
// targets t (B x D each, row-major), and the parameters of every block
// (W1: D x F, then W2: F x D).
struct HostData {
  std::vector<std::vector<float>> x, t;
  std::vector<float> params;
};
HostData make_host_data(const Shape& shape);

// Floats of one block's parameters, and where W1 and W2 start.
inline size_t block_params(const Shape& s) { return 2 * size_t{s.width} * s.ffn; }
inline size_t w1_offset(const Shape& s, uint32_t layer) { return layer * block_params(s); }
inline size_t w2_offset(const Shape& s, uint32_t layer) {
  return layer * block_params(s) + size_t{s.width} * s.ffn;
}

// The kernels of one device (the mock's built-in module), and the launches
// the model makes on a stream.
class Kernels {
 public:
  explicit Kernels(xal_device_t dev);
  // c (m x n) = alpha op(a) op(b) + beta c; flags 1: a transposed, 2: b.
  void gemm(xal_stream_t s, xal_devptr_t c, xal_devptr_t a, xal_devptr_t b, uint32_t m,
            uint32_t n, uint32_t k, uint32_t flags, float alpha, float beta) const;
  void relu(xal_stream_t s, xal_devptr_t y, xal_devptr_t x, uint64_t count) const;
  void relu_grad(xal_stream_t s, xal_devptr_t dx, xal_devptr_t dy, xal_devptr_t y,
                 uint64_t count) const;
  void saxpy(xal_stream_t s, xal_devptr_t y, xal_devptr_t x, float a, uint64_t count) const;
  void scale(xal_stream_t s, xal_devptr_t x, float a, uint64_t count) const;

 private:
  Module module_;
  xal_kernel_t gemm_ = nullptr, relu_ = nullptr, relu_grad_ = nullptr, saxpy_ = nullptr,
               scale_ = nullptr;
};

// One block on `rows` samples. x: input (rows x D), y: output (rows x D),
// h: hidden (rows x F, kept for backward), params: the block's W1 then W2.
void block_forward(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                   xal_devptr_t x, xal_devptr_t h, xal_devptr_t y, xal_devptr_t w1,
                   xal_devptr_t w2);
// g: dL/dy on entry, dL/dx on return; dh: scratch (rows x F); g1, g2: the
// gradients of W1 and W2, overwritten (accumulate false) or added to.
void block_backward(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                    xal_devptr_t x, xal_devptr_t h, xal_devptr_t g, xal_devptr_t dh,
                    xal_devptr_t w1, xal_devptr_t w2, xal_devptr_t g1, xal_devptr_t g2,
                    bool accumulate);
// g = (y - t) * factor over rows x D: the gradient of sum((y - t)^2) times
// factor / 2 (factor 2 / (B D): the mean over the global batch's B x D
// outputs).
void loss_gradient(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                   xal_devptr_t y, xal_devptr_t t, xal_devptr_t g, float factor);

// The sum over rows of sum_j (y - t)^2, read back to the host.
double squared_error(xal_stream_t s, xal_devptr_t y, const float* t, size_t count);

// Sums `value` over every rank of the job (f64 allreduce on comms; local
// rank i contributes values[i]); returns the sum. op: XAL_OP_SUM or MAX.
double reduce_scalar(const std::vector<Comm>& comms, const std::vector<xal_device_t>& devs,
                     const std::vector<xal_stream_t>& streams, const std::vector<double>& values,
                     xal_op_t op);
// Every rank's value (f64 allgather): local rank i contributes values[i].
std::vector<double> gather_scalar(const std::vector<Comm>& comms,
                                  const std::vector<xal_device_t>& devs,
                                  const std::vector<xal_stream_t>& streams,
                                  const std::vector<double>& values, uint32_t total);

// The loss (the mean of (y - t)^2 over samples and outputs) of the initial weights on
// batch 0, computed on the host: what training must go below.
double host_initial_loss(const Shape& shape, const HostData& data);

// Waits for every stream and every communicator's asynchronous error.
void synchronize(const std::vector<xal_stream_t>& streams, const std::vector<Comm>& comms);

// The calibration step's timing: runs work(i) on every local rank i at once
// (work queues rank i's kernels on streams[i]), between two events on that
// stream, `rounds` times, the first a warm-up, and returns each rank's best
// milliseconds of the later rounds. Synchronizes every stream each round.
std::vector<double> best_ms_per_rank(const std::vector<xal_device_t>& devs,
                                     const std::vector<xal_stream_t>& streams,
                                     const std::vector<Comm>& comms,
                                     const std::function<void(size_t)>& work, int rounds = 3);

}  // namespace xal::bench::train
