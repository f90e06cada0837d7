// xal-bench train: data parallel. Every rank holds the whole model and
// computes forward and backward on its share of the global batch; the
// gradients are summed with xal_allreduce per bucket of blocks on a second
// stream, each bucket as soon as the backward pass has produced it, while
// the backward pass goes on with the blocks below. Each rank scales its
// loss gradient by 2/B (B the global batch), so that the sum over ranks is
// the gradient of the mean loss over the global batch whatever the shares:
// a mixed job computes what a homogeneous one does.
#include <algorithm>
#include <chrono>
#include <memory>

#include "train_model.hpp"

namespace xal::bench::train {

namespace {

using Clock = std::chrono::steady_clock;

// One rank of this process: its streams, kernels and buffers for `rows`
// samples.
struct DpRank {
  DpRank(xal_device_t d, const Shape& shape, uint32_t rows_)
      : dev(d),
        rows(rows_),
        kernels(d),
        compute(make_stream(d)),
        comm(make_stream(d)),
        params(d, shape.layers * block_params(shape) * sizeof(float)),
        grads(d, params.bytes()),
        acts(d, size_t{shape.layers} * rows * shape.width * sizeof(float)),
        hidden(d, size_t{shape.layers} * rows * shape.ffn * sizeof(float)),
        dh(d, size_t{rows} * shape.ffn * sizeof(float)),
        g(d, size_t{rows} * shape.width * sizeof(float)) {}

  xal_device_t dev;
  uint32_t rows;
  Kernels kernels;
  Stream compute, comm;
  DeviceBuffer params, grads, acts, hidden, dh, g;
  std::vector<DeviceBuffer> x, t;  // this rank's rows of every batch
  std::vector<Event> grad_ready, reduced;

  xal_devptr_t act(const Shape& s, uint32_t layer) const {
    return acts.at(size_t{layer} * rows * s.width);
  }
  xal_devptr_t hid(const Shape& s, uint32_t layer) const {
    return hidden.at(size_t{layer} * rows * s.ffn);
  }
  // Input of block `layer` for batch `batch`.
  xal_devptr_t input(const Shape& s, uint32_t layer, uint32_t batch) const {
    return layer == 0 ? x[batch].ptr() : act(s, layer - 1);
  }

  void forward(const Shape& s, uint32_t batch, uint32_t layers) const {
    for (uint32_t l = 0; l < layers; ++l)
      block_forward(kernels, compute.get(), s, rows, input(s, l, batch), hid(s, l), act(s, l),
                    params.at(w1_offset(s, l)), params.at(w2_offset(s, l)));
  }
  void backward_block(const Shape& s, uint32_t batch, uint32_t l) const {
    block_backward(kernels, compute.get(), s, rows, input(s, l, batch), hid(s, l), g.ptr(),
                   dh.ptr(), params.at(w1_offset(s, l)), params.at(w2_offset(s, l)),
                   grads.at(w1_offset(s, l)), grads.at(w2_offset(s, l)), false);
  }
};

// Each local rank's samples per second on forward and backward of a few
// blocks, timed with events on its stream while every rank runs: the
// calibration step. Returns every rank's speed (allgather).
std::vector<double> calibrate(const Shape& shape, const std::vector<std::unique_ptr<DpRank>>& ranks,
                              const std::vector<Comm>& comms, uint32_t total) {
  const uint32_t layers = std::min<uint32_t>(shape.layers, 4);
  std::vector<xal_stream_t> streams;
  std::vector<xal_device_t> devs;
  for (const auto& r : ranks) {
    streams.push_back(r->compute.get());
    devs.push_back(r->dev);
  }
  const std::vector<double> best = best_ms_per_rank(devs, streams, comms, [&](size_t i) {
    const DpRank& r = *ranks[i];
    r.forward(shape, 0, layers);
    for (uint32_t l = layers; l-- > 0;) r.backward_block(shape, 0, l);
  });
  std::vector<double> speed;
  for (size_t i = 0; i < ranks.size(); ++i)
    speed.push_back(ranks[i]->rows / std::max(best[i], 1e-3));
  return gather_scalar(comms, devs, streams, speed, total);
}

}  // namespace

Result run_data_parallel(const Shape& shape, const Ranks& ranks, const Split& split) {
  const auto local = static_cast<uint32_t>(ranks.devices.size());
  const uint32_t total = ranks.total;
  if (shape.batch < total) throw Failure("the batch is smaller than the number of ranks");
  const HostData data = make_host_data(shape);
  std::vector<Comm> comms = make_comms(ranks);
  Result result;

  // Shares of the batch: equal, fixed weights, or calibrated speeds (the
  // calibration ranks hold an equal share).
  std::vector<double> weights(total, 1.0);
  if (split.kind == Split::kFixed) weights = split.weights;
  if (split.kind == Split::kBalanced) {
    const std::vector<uint32_t> equal = proportional(shape.batch, weights);
    std::vector<std::unique_ptr<DpRank>> probe;
    for (uint32_t i = 0; i < local; ++i) {
      probe.push_back(std::make_unique<DpRank>(ranks.devices[i], shape, equal[ranks.first + i]));
      probe.back()->x.emplace_back(ranks.devices[i],
                                   size_t{probe.back()->rows} * shape.width * sizeof(float));
      check(xal_memcpy_htod(probe.back()->compute.get(), probe.back()->x[0].ptr(),
                            data.x[0].data(), probe.back()->x[0].bytes()),
            "xal_memcpy_htod");
      check(xal_memcpy_htod(probe.back()->compute.get(), probe.back()->params.ptr(),
                            data.params.data(), probe.back()->params.bytes()),
            "xal_memcpy_htod");
      check(xal_memset(probe.back()->compute.get(), probe.back()->g.ptr(), 0,
                       probe.back()->g.bytes()),
            "xal_memset");
    }
    weights = calibrate(shape, probe, comms, total);
    result.speed = weights;
  }
  const std::vector<uint32_t> rows = proportional(shape.batch, weights);
  std::vector<uint32_t> offset(total + 1, 0);
  for (uint32_t r = 0; r < total; ++r) offset[r + 1] = offset[r] + rows[r];
  result.split.assign(rows.begin(), rows.end());

  // The ranks of this process, with their rows of every batch.
  const uint32_t bl = std::max<uint32_t>(1, std::min(shape.bucket_layers, shape.layers));
  const uint32_t buckets = (shape.layers + bl - 1) / bl;
  std::vector<std::unique_ptr<DpRank>> rk;
  std::vector<xal_stream_t> streams;  // compute and comm of every rank
  std::vector<xal_stream_t> computes;
  for (uint32_t i = 0; i < local; ++i) {
    const uint32_t gr = ranks.first + i;
    auto r = std::make_unique<DpRank>(ranks.devices[i], shape, rows[gr]);
    const size_t bytes = size_t{r->rows} * shape.width * sizeof(float);
    const size_t from = size_t{offset[gr]} * shape.width;
    for (uint32_t b = 0; b < shape.batches; ++b) {
      r->x.emplace_back(r->dev, bytes);
      r->t.emplace_back(r->dev, bytes);
      check(xal_memcpy_htod(r->compute.get(), r->x[b].ptr(), data.x[b].data() + from, bytes),
            "xal_memcpy_htod");
      check(xal_memcpy_htod(r->compute.get(), r->t[b].ptr(), data.t[b].data() + from, bytes),
            "xal_memcpy_htod");
    }
    check(xal_memcpy_htod(r->compute.get(), r->params.ptr(), data.params.data(),
                          r->params.bytes()),
          "xal_memcpy_htod");
    for (uint32_t q = 0; q < buckets; ++q) {
      r->grad_ready.push_back(make_event(r->dev));
      r->reduced.push_back(make_event(r->dev));
    }
    streams.push_back(r->compute.get());
    streams.push_back(r->comm.get());
    computes.push_back(r->compute.get());
    rk.push_back(std::move(r));
  }
  std::vector<xal_device_t> devs = ranks.devices;

  const size_t bp = block_params(shape);
  auto step = [&](uint32_t s) {
    const uint32_t batch = s % shape.batches;
    for (uint32_t i = 0; i < local; ++i) {
      DpRank& r = *rk[i];
      r.forward(shape, batch, shape.layers);
      // The wrong weighting (--unweighted): each rank's mean, then the mean
      // of those, which over-weights the ranks with fewer samples.
      const float factor = shape.unweighted ? 2.0f / (float(r.rows) * float(total) * float(shape.width))
                                            : 2.0f / (float(shape.batch) * float(shape.width));
      loss_gradient(r.kernels, r.compute.get(), shape, r.rows, r.act(shape, shape.layers - 1),
                    r.t[batch].ptr(), r.g.ptr(), factor);
    }
    for (uint32_t l = shape.layers; l-- > 0;) {
      for (uint32_t i = 0; i < local; ++i) rk[i]->backward_block(shape, batch, l);
      if (l % bl != 0) continue;
      // Bucket q (blocks l .. l+bl-1) is done: sum it on the comm stream.
      const uint32_t q = l / bl;
      const uint32_t nl = std::min(bl, shape.layers - l);
      for (uint32_t i = 0; i < local; ++i) {
        check(xal_event_record(rk[i]->grad_ready[q].get(), rk[i]->compute.get()),
              "xal_event_record");
        check(xal_stream_wait_event(rk[i]->comm.get(), rk[i]->grad_ready[q].get()),
              "xal_stream_wait_event");
      }
      check(xal_group_start(), "xal_group_start");
      for (uint32_t i = 0; i < local; ++i) {
        const xal_devptr_t p = rk[i]->grads.at(l * bp);
        const xal_status_t st = xal_allreduce(comms[i].get(), p, p, nl * bp, XAL_DTYPE_F32,
                                              XAL_OP_SUM, rk[i]->comm.get());
        if (st != XAL_SUCCESS) {
          xal_group_end();
          check(st, "xal_allreduce");
        }
      }
      check(xal_group_end(), "xal_group_end");
      for (uint32_t i = 0; i < local; ++i)
        check(xal_event_record(rk[i]->reduced[q].get(), rk[i]->comm.get()), "xal_event_record");
    }
    // SGD once each bucket is summed (the last one, blocks 0.., first).
    for (uint32_t q = 0; q < buckets; ++q)
      for (uint32_t i = 0; i < local; ++i) {
        DpRank& r = *rk[i];
        const uint32_t l = q * bl, nl = std::min(bl, shape.layers - l);
        check(xal_stream_wait_event(r.compute.get(), r.reduced[q].get()), "xal_stream_wait_event");
        r.kernels.saxpy(r.compute.get(), r.params.at(l * bp), r.grads.at(l * bp), -shape.lr,
                        uint64_t{nl} * bp);
      }
  };

  for (uint32_t s = 0; s < shape.warmup; ++s) step(s);
  synchronize(streams, comms);
  reduce_scalar(comms, devs, computes, std::vector<double>(local, 0.0), XAL_OP_SUM);  // barrier
  const auto t0 = Clock::now();
  for (uint32_t s = shape.warmup; s < shape.warmup + shape.steps; ++s) step(s);
  synchronize(streams, comms);
  const double mine = std::chrono::duration<double>(Clock::now() - t0).count();
  result.seconds = reduce_scalar(comms, devs, computes, std::vector<double>(local, mine), XAL_OP_MAX);
  result.samples_per_s = double(shape.batch) * shape.steps / result.seconds;

  // The loss of the trained model on batch 0, over every rank's rows.
  std::vector<double> sse(local, 0.0);
  for (uint32_t i = 0; i < local; ++i) {
    DpRank& r = *rk[i];
    r.forward(shape, 0, shape.layers);
    sse[i] = squared_error(r.compute.get(), r.act(shape, shape.layers - 1),
                           data.t[0].data() + size_t{offset[ranks.first + i]} * shape.width,
                           size_t{r.rows} * shape.width);
  }
  result.loss = reduce_scalar(comms, devs, computes, sse, XAL_OP_SUM) / (double(shape.batch) * shape.width);
  synchronize(streams, comms);
  return result;
}

}  // namespace xal::bench::train
