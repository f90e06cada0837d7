// xal-bench train: pipeline parallel. The blocks are split into stages,
// one per rank, in proportion to the ranks' calibrated speeds; each step
// runs the global batch as micro-batches on the 1F1B schedule (PipeDream
// and Megatron-LM's: a warm-up of forwards, then one forward and one
// backward in turn, then the remaining backwards), activations going
// forward and gradients back with xal_send / xal_recv. The weight
// gradients add up over the micro-batches, so that the result is that of
// one pass over the global batch whatever the split.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "train_model.hpp"

namespace xal::bench::train {

namespace {

using Clock = std::chrono::steady_clock;

// One step of a stage's schedule.
struct Op {
  enum Kind { kForward, kBackward, kComm } kind;
  uint32_t micro = 0;  // kForward, kBackward
  // kComm: sends of activation `send_act`, receives of activation
  // `recv_act`, sends and receives of gradients (micro-batch, or -1: none).
  int send_act = -1, recv_act = -1, send_grad = -1, recv_grad = -1;
};

// The 1F1B schedule of stage s of S over M micro-batches, with Megatron-LM's
// paired transfers (send forward with receive backward, send backward with
// receive forward), each pair posted in one group.
std::vector<Op> schedule(uint32_t s, uint32_t S, uint32_t M) {
  const bool first = s == 0, last = s + 1 == S;
  const uint32_t warm = std::min(S - s - 1, M), rest = M - warm;
  std::vector<Op> ops;
  auto comm = [&](int sa, int ra, int sg, int rg) {
    Op op{Op::kComm};
    op.send_act = last ? -1 : sa;
    op.recv_act = first ? -1 : ra;
    op.send_grad = first ? -1 : sg;
    op.recv_grad = last ? -1 : rg;
    if (op.send_act >= 0 || op.recv_act >= 0 || op.send_grad >= 0 || op.recv_grad >= 0)
      ops.push_back(op);
  };
  for (uint32_t i = 0; i < warm; ++i) {
    comm(-1, int(i), -1, -1);
    ops.push_back({Op::kForward, i});
    comm(int(i), -1, -1, -1);
  }
  if (rest > 0) comm(-1, int(warm), -1, -1);
  for (uint32_t i = 0; i < rest; ++i) {
    ops.push_back({Op::kForward, warm + i});
    comm(int(warm + i), -1, -1, int(i));
    ops.push_back({Op::kBackward, i});
    comm(-1, i + 1 < rest ? int(warm + i + 1) : -1, int(i), -1);
  }
  for (uint32_t i = rest; i < M; ++i) {
    comm(-1, -1, -1, int(i));
    ops.push_back({Op::kBackward, i});
    comm(-1, -1, int(i), -1);
  }
  return ops;
}

// One stage of this process: blocks [first, first + layers) of the model.
struct Stage {
  Stage(xal_device_t d, const Shape& shape, uint32_t rank_, uint32_t stages_, uint32_t first_,
        uint32_t layers_, const HostData& data)
      : dev(d),
        rank(rank_),
        stages(stages_),
        first(first_),
        layers(layers_),
        mb(shape.batch / shape.micro),
        kernels(d),
        stream(make_stream(d)),
        params(d, layers * block_params(shape) * sizeof(float)),
        grads(d, params.bytes()),
        in(d, size_t{shape.micro} * mb * shape.width * sizeof(float)),
        acts(d, size_t{shape.micro} * layers * mb * shape.width * sizeof(float)),
        hidden(d, size_t{shape.micro} * layers * mb * shape.ffn * sizeof(float)),
        g(d, size_t{shape.micro} * mb * shape.width * sizeof(float)),
        dh(d, size_t{mb} * shape.ffn * sizeof(float)) {
    const size_t batch_bytes = size_t{shape.batch} * shape.width * sizeof(float);
    for (uint32_t b = 0; b < shape.batches; ++b) {
      x.emplace_back(d, rank == 0 ? batch_bytes : 4);
      t.emplace_back(d, rank + 1 == stages ? batch_bytes : 4);
      if (rank == 0)
        check(xal_memcpy_htod(stream.get(), x[b].ptr(), data.x[b].data(), batch_bytes),
              "xal_memcpy_htod");
      if (rank + 1 == stages)
        check(xal_memcpy_htod(stream.get(), t[b].ptr(), data.t[b].data(), batch_bytes),
              "xal_memcpy_htod");
    }
    check(xal_memcpy_htod(stream.get(), params.ptr(),
                          data.params.data() + w1_offset(shape, first), params.bytes()),
          "xal_memcpy_htod");
  }

  xal_device_t dev;
  uint32_t rank, stages, first, layers, mb;
  Kernels kernels;
  Stream stream;
  DeviceBuffer params, grads, in, acts, hidden, g, dh;
  std::vector<DeviceBuffer> x, t;

  xal_devptr_t input(const Shape& s, uint32_t m, uint32_t j, uint32_t batch) const {
    if (j > 0) return act(s, m, j - 1);
    if (rank == 0) return x[batch].at(size_t{m} * mb * s.width);
    return in.at(size_t{m} * mb * s.width);
  }
  xal_devptr_t act(const Shape& s, uint32_t m, uint32_t j) const {
    return acts.at((size_t{m} * layers + j) * mb * s.width);
  }
  xal_devptr_t hid(const Shape& s, uint32_t m, uint32_t j) const {
    return hidden.at((size_t{m} * layers + j) * mb * s.ffn);
  }
  xal_devptr_t grad(const Shape& s, uint32_t m) const { return g.at(size_t{m} * mb * s.width); }
  xal_devptr_t output(const Shape& s, uint32_t m) const { return act(s, m, layers - 1); }

  void forward(const Shape& s, uint32_t m, uint32_t batch, bool train) const {
    for (uint32_t j = 0; j < layers; ++j)
      block_forward(kernels, stream.get(), s, mb, input(s, m, j, batch), hid(s, m, j),
                    act(s, m, j), params.at(w1_offset(s, j)), params.at(w2_offset(s, j)));
    if (train && rank + 1 == stages)
      loss_gradient(kernels, stream.get(), s, mb, output(s, m),
                    t[batch].at(size_t{m} * mb * s.width), grad(s, m),
                    2.0f / (float(s.batch) * float(s.width)));
  }
  void backward(const Shape& s, uint32_t m, uint32_t batch) const {
    for (uint32_t j = layers; j-- > 0;)
      block_backward(kernels, stream.get(), s, mb, input(s, m, j, batch), hid(s, m, j),
                     grad(s, m), dh.ptr(), params.at(w1_offset(s, j)),
                     params.at(w2_offset(s, j)), grads.at(w1_offset(s, j)),
                     grads.at(w2_offset(s, j)), true);
  }
};

void p2p_failed(xal_status_t st, const char* what) {
  xal_group_end();
  if (st == XAL_ERROR_NOT_SUPPORTED)
    check(st, std::string(what) +
                  " (point-to-point transfers are not supported by this xal build or "
                  "communicator: the pipeline workload needs them)");
  check(st, what);
}

// Posts one comm op of a stage (inside the caller's group).
void post(const Shape& s, const Stage& st, const Comm& comm, const Op& op) {
  const size_t count = size_t{st.mb} * s.width;
  if (op.send_act >= 0)
    if (auto r = xal_send(comm.get(), st.output(s, uint32_t(op.send_act)), count, XAL_DTYPE_F32,
                          st.rank + 1, st.stream.get()))
      p2p_failed(r, "xal_send");
  if (op.recv_grad >= 0)
    if (auto r = xal_recv(comm.get(), st.grad(s, uint32_t(op.recv_grad)), count, XAL_DTYPE_F32,
                          st.rank + 1, st.stream.get()))
      p2p_failed(r, "xal_recv");
  if (op.send_grad >= 0)
    if (auto r = xal_send(comm.get(), st.grad(s, uint32_t(op.send_grad)), count, XAL_DTYPE_F32,
                          st.rank - 1, st.stream.get()))
      p2p_failed(r, "xal_send");
  if (op.recv_act >= 0)
    if (auto r = xal_recv(comm.get(), st.in.at(size_t(op.recv_act) * count), count,
                          XAL_DTYPE_F32, st.rank - 1, st.stream.get()))
      p2p_failed(r, "xal_recv");
}

// Issues every local stage's ops in lockstep: op k of each stage, then op
// k + 1; the transfers of one round in one group.
void issue(const Shape& s, const std::vector<std::unique_ptr<Stage>>& stages,
           const std::vector<Comm>& comms, const std::vector<std::vector<Op>>& ops,
           uint32_t batch, bool train) {
  size_t longest = 0;
  for (const auto& o : ops) longest = std::max(longest, o.size());
  for (size_t k = 0; k < longest; ++k) {
    bool grouped = false;
    for (size_t i = 0; i < stages.size(); ++i) {
      if (k >= ops[i].size()) continue;
      const Op& op = ops[i][k];
      if (op.kind == Op::kForward) stages[i]->forward(s, op.micro, batch, train);
      if (op.kind == Op::kBackward) stages[i]->backward(s, op.micro, batch);
      if (op.kind == Op::kComm) {
        if (!grouped) check(xal_group_start(), "xal_group_start");
        grouped = true;
        post(s, *stages[i], comms[i], op);
      }
    }
    if (grouped) check(xal_group_end(), "xal_group_end");
  }
}

// The forward-only schedule (the loss evaluation): receive, forward, send.
std::vector<Op> forward_schedule(uint32_t s, uint32_t S, uint32_t M) {
  std::vector<Op> ops;
  for (uint32_t m = 0; m < M; ++m) {
    if (s > 0) ops.push_back({Op::kComm, 0, -1, int(m), -1, -1});
    ops.push_back({Op::kForward, m});
    if (s + 1 < S) ops.push_back({Op::kComm, 0, int(m), -1, -1, -1});
  }
  return ops;
}

// Layers per stage that minimise the slowest stage's time (layers / speed):
// each further layer goes where it ends soonest.
std::vector<uint32_t> balance_layers(uint32_t layers, const std::vector<double>& speed) {
  std::vector<uint32_t> out(speed.size(), 1);
  for (uint32_t given = static_cast<uint32_t>(speed.size()); given < layers; ++given) {
    size_t best = 0;
    for (size_t i = 1; i < speed.size(); ++i)
      if ((out[i] + 1) / speed[i] < (out[best] + 1) / speed[best]) best = i;
    ++out[best];
  }
  return out;
}

// Each local stage's blocks per second (forward and backward of one block
// on one micro-batch), timed with events while every rank runs.
std::vector<double> calibrate(const Shape& shape, const Ranks& ranks, const std::vector<Comm>& comms,
                              const HostData& data) {
  const uint32_t kLayers = std::min<uint32_t>(2, shape.layers);
  Shape probe = shape;
  probe.micro = std::max<uint32_t>(shape.micro, 1);
  std::vector<std::unique_ptr<Stage>> st;
  std::vector<xal_stream_t> streams;
  for (size_t i = 0; i < ranks.devices.size(); ++i) {
    // A lone stage (rank 0 of 1) reads its input from the batch.
    st.push_back(std::make_unique<Stage>(ranks.devices[i], probe, 0, 1, 0, kLayers, data));
    streams.push_back(st.back()->stream.get());
  }
  const std::vector<double> best =
      best_ms_per_rank(ranks.devices, streams, comms, [&](size_t i) {
        st[i]->forward(probe, 0, 0, true);
        st[i]->backward(probe, 0, 0);
      });
  std::vector<double> speed;
  for (double ms : best) speed.push_back(kLayers / std::max(ms, 1e-3));
  return gather_scalar(comms, ranks.devices, streams, speed, ranks.total);
}

}  // namespace

Result run_pipeline(const Shape& shape, const Ranks& ranks, const Split& split) {
  const auto local = static_cast<uint32_t>(ranks.devices.size());
  const uint32_t S = ranks.total, M = shape.micro;
  if (M == 0 || shape.batch % M != 0)
    throw Failure("the batch (" + std::to_string(shape.batch) +
                  ") must be a multiple of the micro-batches (" + std::to_string(M) + ")");
  if (shape.layers < S)
    throw Failure("the pipeline needs at least one block per stage (" +
                  std::to_string(shape.layers) + " blocks, " + std::to_string(S) + " stages)");
  const HostData data = make_host_data(shape);
  std::vector<Comm> comms = make_comms(ranks);
  Result result;

  std::vector<uint32_t> layers;
  if (split.kind == Split::kEqual) layers = proportional(shape.layers, std::vector<double>(S, 1.0));
  if (split.kind == Split::kFixed) layers = proportional(shape.layers, split.weights);
  if (split.kind == Split::kBalanced) {
    result.speed = calibrate(shape, ranks, comms, data);
    layers = balance_layers(shape.layers, result.speed);
  }
  result.split.assign(layers.begin(), layers.end());
  std::vector<uint32_t> start(S + 1, 0);
  for (uint32_t r = 0; r < S; ++r) start[r + 1] = start[r] + layers[r];

  std::vector<std::unique_ptr<Stage>> st;
  std::vector<xal_stream_t> streams;
  std::vector<std::vector<Op>> train_ops, eval_ops;
  for (uint32_t i = 0; i < local; ++i) {
    const uint32_t r = ranks.first + i;
    st.push_back(std::make_unique<Stage>(ranks.devices[i], shape, r, S, start[r], layers[r], data));
    streams.push_back(st.back()->stream.get());
    train_ops.push_back(schedule(r, S, M));
    eval_ops.push_back(forward_schedule(r, S, M));
  }
  const std::vector<xal_device_t> devs = ranks.devices;

  auto step = [&](uint32_t s) {
    const uint32_t batch = s % shape.batches;
    for (const auto& stage : st)
      check(xal_memset(stage->stream.get(), stage->grads.ptr(), 0, stage->grads.bytes()),
            "xal_memset");
    issue(shape, st, comms, train_ops, batch, true);
    for (const auto& stage : st)
      stage->kernels.saxpy(stage->stream.get(), stage->params.ptr(), stage->grads.ptr(),
                           -shape.lr, stage->params.bytes() / sizeof(float));
  };

  for (uint32_t s = 0; s < shape.warmup; ++s) step(s);
  synchronize(streams, comms);
  reduce_scalar(comms, devs, streams, std::vector<double>(local, 0.0), XAL_OP_SUM);  // barrier
  const auto t0 = Clock::now();
  for (uint32_t s = shape.warmup; s < shape.warmup + shape.steps; ++s) step(s);
  synchronize(streams, comms);
  const double mine = std::chrono::duration<double>(Clock::now() - t0).count();
  result.seconds = reduce_scalar(comms, devs, streams, std::vector<double>(local, mine), XAL_OP_MAX);
  result.samples_per_s = double(shape.batch) * shape.steps / result.seconds;

  // The loss on batch 0: a forward pass through the pipeline; the last
  // stage adds up the squared errors.
  issue(shape, st, comms, eval_ops, 0, false);
  synchronize(streams, comms);
  std::vector<double> sse(local, 0.0);
  for (uint32_t i = 0; i < local; ++i) {
    const Stage& stage = *st[i];
    if (stage.rank + 1 != S) continue;
    for (uint32_t m = 0; m < M; ++m)
      sse[i] += squared_error(stage.stream.get(), stage.output(shape, m),
                              data.t[0].data() + size_t{m} * stage.mb * shape.width,
                              size_t{stage.mb} * shape.width);
  }
  result.loss = reduce_scalar(comms, devs, streams, sse, XAL_OP_SUM) / (double(shape.batch) * shape.width);
  return result;
}

}  // namespace xal::bench::train
