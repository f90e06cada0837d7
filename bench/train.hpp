// xal-bench train: heterogeneous training on the mock's compute model
// (docs/PERFORMANCE.md, "Heterogeneous training").
//
// A transformer-like MLP stack (residual blocks x + relu(x W1) W2, a
// mean-squared-error loss against a fixed teacher) trained with real
// gradients on mock cards whose gemm_f32 runs at their profile's pace:
//   train_model.cpp  the model: host data and weights, device buffers, the
//                    kernels of one block's forward and backward
//   train_dp.cpp     data parallel: batch shares, per-bucket allreduce
//                    overlapping the backward pass
//   train_pp.cpp     pipeline parallel: stages of layers, 1F1B over
//                    xal_send / xal_recv
//   train_main.cpp   the options, the jobs, efficiency, the report
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "xal/xal.h"

namespace xal::bench {

// The `train` subcommand (train_main.cpp); argv[0] is "train". Returns the
// exit status.
int train_main(int argc, char** argv);

}  // namespace xal::bench

namespace xal::bench::train {

// A failed call: the message names the call and xal's last error.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Failure("<what>: <status>: <message>") unless s is XAL_SUCCESS.
void check(xal_status_t s, const std::string& what);

// The model and the run.
struct Shape {
  uint32_t width = 32;    // D: the residual stream
  uint32_t ffn = 64;      // F: each block's hidden layer
  uint32_t layers = 48;   // L: blocks
  uint32_t batch = 256;   // B: samples per step (the global batch)
  uint32_t micro = 8;     // pipeline: micro-batches per step
  uint32_t batches = 4;   // distinct batches, used in turn
  uint32_t bucket_layers = 8;  // data parallel: blocks per gradient bucket
  float lr = 0.02f;
  uint64_t seed = 1;
  uint32_t warmup = 2, steps = 10;  // untimed, then timed steps
  bool unweighted = false;  // data parallel: the plain average of rank means (wrong)
};

// What a job measured.
struct Result {
  double seconds = 0;         // the timed steps, slowest rank
  double samples_per_s = 0;
  double loss = 0;            // after warmup + steps steps, on batch 0
  std::vector<double> split;  // samples (dp) or layers (pp) per rank
  std::vector<double> speed;  // calibrated relative speed per rank (balanced)
};

// The ranks of a job in this process: devices[i] is global rank first + i
// of total. comm_create makes one communicator per local device over every
// rank of the job (xal_comm_create, or xal_comm_create_mpi across
// processes).
struct Ranks {
  std::vector<xal_device_t> devices;
  uint32_t first = 0, total = 0;
  xal_status_t (*comm_create)(const xal_device_t* devs, uint32_t n, xal_comm_t* out) = nullptr;
};

// How a job splits its work: equal, balanced (calibrated), or fixed
// weights per rank.
struct Split {
  enum Kind { kEqual, kBalanced, kFixed } kind = kEqual;
  std::vector<double> weights;  // kFixed
};

Result run_data_parallel(const Shape& shape, const Ranks& ranks, const Split& split);
Result run_pipeline(const Shape& shape, const Ranks& ranks, const Split& split);

// `total` units (samples, layers) in proportion to `weights`, each at least
// 1, largest remainders first; equal weights give an equal split.
std::vector<uint32_t> proportional(uint32_t total, const std::vector<double>& weights);

}  // namespace xal::bench::train
