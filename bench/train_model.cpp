// xal-bench train: the model on one rank (train_model.hpp).
#include "train_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace xal::bench::train {

void check(xal_status_t s, const std::string& what) {
  if (s == XAL_SUCCESS) return;
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  xal_last_error(&e);
  throw Failure(what + ": " + xal_status_name(s) + ": " + e.message);
}

DeviceBuffer::DeviceBuffer(xal_device_t dev, size_t bytes) : dev_(dev), bytes_(bytes) {
  check(xal_mem_alloc(dev, std::max<size_t>(bytes, 4), &ptr_), "xal_mem_alloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) xal_mem_free(dev_, ptr_);
}

Stream make_stream(xal_device_t dev) {
  Stream s;
  check(xal_stream_create(dev, XAL_STREAM_NON_BLOCKING, s.out()), "xal_stream_create");
  return s;
}

Event make_event(xal_device_t dev) {
  Event e;
  check(xal_event_create(dev, XAL_EVENT_DEFAULT, e.out()), "xal_event_create");
  return e;
}

std::vector<Comm> make_comms(const Ranks& ranks) {
  const auto n = static_cast<uint32_t>(ranks.devices.size());
  std::vector<xal_comm_t> raw(n, nullptr);
  check(ranks.comm_create(ranks.devices.data(), n, raw.data()), "creating the communicator");
  std::vector<Comm> comms;
  for (xal_comm_t c : raw) comms.emplace_back(c);
  return comms;
}

HostData make_host_data(const Shape& shape) {
  const size_t d = shape.width, f = shape.ffn, b = shape.batch;
  std::mt19937_64 gen(shape.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  HostData data;
  // The teacher: t = tanh(x R) with a fixed D x D matrix R.
  std::vector<float> r(d * d);
  for (float& v : r) v = normal(gen) / std::sqrt(static_cast<float>(d));
  for (uint32_t i = 0; i < shape.batches; ++i) {
    std::vector<float> x(b * d), t(b * d, 0.0f);
    for (float& v : x) v = normal(gen);
    for (size_t row = 0; row < b; ++row)
      for (size_t j = 0; j < d; ++j) {
        float acc = 0;
        for (size_t p = 0; p < d; ++p) acc += x[row * d + p] * r[p * d + j];
        t[row * d + j] = std::tanh(acc);
      }
    data.x.push_back(std::move(x));
    data.t.push_back(std::move(t));
  }
  // W1 ~ N(0, 1/D); W2 ~ N(0, 1/(F L)): the residual stream stays bounded.
  data.params.resize(shape.layers * block_params(shape));
  const float s1 = 1.0f / std::sqrt(static_cast<float>(d));
  const float s2 = 1.0f / std::sqrt(static_cast<float>(f * shape.layers));
  for (uint32_t l = 0; l < shape.layers; ++l) {
    for (size_t i = 0; i < d * f; ++i) data.params[w1_offset(shape, l) + i] = normal(gen) * s1;
    for (size_t i = 0; i < f * d; ++i) data.params[w2_offset(shape, l) + i] = normal(gen) * s2;
  }
  return data;
}

Kernels::Kernels(xal_device_t dev) {
  static constexpr char kImage[] = "gemm_f32\nrelu_f32\nrelu_grad_f32\nsaxpy_f32\nscale_f32\n";
  const xal_status_t s =
      xal_module_load(dev, XAL_MODULE_FORMAT_NATIVE, kImage, sizeof kImage - 1, module_.out());
  if (s == XAL_ERROR_NOT_SUPPORTED || s == XAL_ERROR_INVALID_ARGUMENT)
    check(s, "loading the mock's compute kernels (xal-bench train needs the mock backend "
             "with gemm_f32)");
  check(s, "xal_module_load");
  check(xal_kernel_get(module_.get(), "gemm_f32", &gemm_), "xal_kernel_get gemm_f32");
  check(xal_kernel_get(module_.get(), "relu_f32", &relu_), "xal_kernel_get relu_f32");
  check(xal_kernel_get(module_.get(), "relu_grad_f32", &relu_grad_), "xal_kernel_get relu_grad_f32");
  check(xal_kernel_get(module_.get(), "saxpy_f32", &saxpy_), "xal_kernel_get saxpy_f32");
  check(xal_kernel_get(module_.get(), "scale_f32", &scale_), "xal_kernel_get scale_f32");
}

namespace {

xal_launch_config_t launch_config() {
  xal_launch_config_t c{};
  c.struct_size = sizeof c;
  c.grid[0] = c.grid[1] = c.grid[2] = 1;
  c.block[0] = c.block[1] = c.block[2] = 1;
  return c;
}

void launch(xal_stream_t s, xal_kernel_t k, void** args, size_t n, const char* name) {
  const xal_launch_config_t c = launch_config();
  check(xal_kernel_launch(s, k, &c, args, n), name);
}

}  // namespace

void Kernels::gemm(xal_stream_t s, xal_devptr_t c, xal_devptr_t a, xal_devptr_t b, uint32_t m,
                   uint32_t n, uint32_t k, uint32_t flags, float alpha, float beta) const {
  void* args[] = {&c, &a, &b, &m, &n, &k, &flags, &alpha, &beta};
  launch(s, gemm_, args, 9, "gemm_f32");
}

void Kernels::relu(xal_stream_t s, xal_devptr_t y, xal_devptr_t x, uint64_t count) const {
  void* args[] = {&y, &x, &count};
  launch(s, relu_, args, 3, "relu_f32");
}

void Kernels::relu_grad(xal_stream_t s, xal_devptr_t dx, xal_devptr_t dy, xal_devptr_t y,
                        uint64_t count) const {
  void* args[] = {&dx, &dy, &y, &count};
  launch(s, relu_grad_, args, 4, "relu_grad_f32");
}

void Kernels::saxpy(xal_stream_t s, xal_devptr_t y, xal_devptr_t x, float a,
                    uint64_t count) const {
  void* args[] = {&y, &x, &a, &count};
  launch(s, saxpy_, args, 4, "saxpy_f32");
}

void Kernels::scale(xal_stream_t s, xal_devptr_t x, float a, uint64_t count) const {
  void* args[] = {&x, &a, &count};
  launch(s, scale_, args, 3, "scale_f32");
}

void block_forward(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                   xal_devptr_t x, xal_devptr_t h, xal_devptr_t y, xal_devptr_t w1,
                   xal_devptr_t w2) {
  const uint32_t d = shape.width, f = shape.ffn;
  k.gemm(s, h, x, w1, rows, f, d, 0, 1.0f, 0.0f);
  k.relu(s, h, h, uint64_t{rows} * f);
  check(xal_memcpy_dtod(s, y, x, size_t{rows} * d * sizeof(float)), "xal_memcpy_dtod");
  k.gemm(s, y, h, w2, rows, d, f, 0, 1.0f, 1.0f);
}

void block_backward(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                    xal_devptr_t x, xal_devptr_t h, xal_devptr_t g, xal_devptr_t dh,
                    xal_devptr_t w1, xal_devptr_t w2, xal_devptr_t g1, xal_devptr_t g2,
                    bool accumulate) {
  const uint32_t d = shape.width, f = shape.ffn;
  const float beta = accumulate ? 1.0f : 0.0f;
  k.gemm(s, g2, h, g, f, d, rows, 1, 1.0f, beta);   // G2 = h^T g
  k.gemm(s, dh, g, w2, rows, f, d, 2, 1.0f, 0.0f);  // dh = g W2^T
  k.relu_grad(s, dh, dh, h, uint64_t{rows} * f);    // du
  k.gemm(s, g1, x, dh, d, f, rows, 1, 1.0f, beta);  // G1 = x^T du
  k.gemm(s, g, dh, w1, rows, d, f, 2, 1.0f, 1.0f);  // g += du W1^T
}

void loss_gradient(const Kernels& k, xal_stream_t s, const Shape& shape, uint32_t rows,
                   xal_devptr_t y, xal_devptr_t t, xal_devptr_t g, float factor) {
  const uint64_t n = uint64_t{rows} * shape.width;
  check(xal_memcpy_dtod(s, g, y, n * sizeof(float)), "xal_memcpy_dtod");
  k.saxpy(s, g, t, -1.0f, n);
  k.scale(s, g, factor, n);
}

double squared_error(xal_stream_t s, xal_devptr_t y, const float* t, size_t count) {
  std::vector<float> host(count);
  check(xal_memcpy_dtoh(s, host.data(), y, count * sizeof(float)), "xal_memcpy_dtoh");
  check(xal_stream_synchronize(s), "xal_stream_synchronize");
  double sum = 0;
  for (size_t i = 0; i < count; ++i) {
    const double e = double(host[i]) - t[i];
    sum += e * e;
  }
  return sum;
}

double host_initial_loss(const Shape& shape, const HostData& data) {
  const size_t d = shape.width, f = shape.ffn, b = shape.batch;
  std::vector<float> x = data.x[0], h(f);
  for (uint32_t l = 0; l < shape.layers; ++l) {
    const float* w1 = data.params.data() + w1_offset(shape, l);
    const float* w2 = data.params.data() + w2_offset(shape, l);
    for (size_t r = 0; r < b; ++r) {
      float* xr = x.data() + r * d;
      std::fill(h.begin(), h.end(), 0.0f);
      for (size_t p = 0; p < d; ++p)
        for (size_t j = 0; j < f; ++j) h[j] += xr[p] * w1[p * f + j];
      for (float& v : h) v = std::max(v, 0.0f);
      std::vector<float> add(d, 0.0f);
      for (size_t p = 0; p < f; ++p)
        for (size_t j = 0; j < d; ++j) add[j] += h[p] * w2[p * d + j];
      for (size_t j = 0; j < d; ++j) xr[j] += add[j];
    }
  }
  double sum = 0;
  for (size_t i = 0; i < b * d; ++i) {
    const double e = double(x[i]) - data.t[0][i];
    sum += e * e;
  }
  return sum / double(b * d);
}

void synchronize(const std::vector<xal_stream_t>& streams, const std::vector<Comm>& comms) {
  for (xal_stream_t s : streams) check(xal_stream_synchronize(s), "xal_stream_synchronize");
  for (const Comm& c : comms) {
    xal_status_t async = XAL_SUCCESS;
    check(xal_comm_get_async_error(c.get(), &async), "xal_comm_get_async_error");
    check(async, "a collective of the job");
  }
}

std::vector<double> best_ms_per_rank(const std::vector<xal_device_t>& devs,
                                     const std::vector<xal_stream_t>& streams,
                                     const std::vector<Comm>& comms,
                                     const std::function<void(size_t)>& work, int rounds) {
  std::vector<Event> begin, end;
  for (xal_device_t dev : devs) {
    begin.push_back(make_event(dev));
    end.push_back(make_event(dev));
  }
  std::vector<double> best(devs.size(), 1e30);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < devs.size(); ++i) {
      check(xal_event_record(begin[i].get(), streams[i]), "xal_event_record");
      work(i);
      check(xal_event_record(end[i].get(), streams[i]), "xal_event_record");
    }
    synchronize(streams, comms);
    for (size_t i = 0; i < devs.size(); ++i) {
      float ms = 0;
      check(xal_event_elapsed_ms(begin[i].get(), end[i].get(), &ms), "xal_event_elapsed_ms");
      if (round > 0) best[i] = std::min(best[i], static_cast<double>(ms));
    }
  }
  return best;
}

namespace {

// Runs `issue(i, send, recv)` for every local rank inside one group, on
// f64 buffers holding values[i], and reads back `out_count` doubles of
// local rank 0's receive buffer.
template <class Issue>
std::vector<double> scalar_collective(const std::vector<Comm>& comms,
                                      const std::vector<xal_device_t>& devs,
                                      const std::vector<xal_stream_t>& streams,
                                      const std::vector<double>& values, size_t out_count,
                                      Issue issue) {
  std::vector<DeviceBuffer> send, recv;
  for (size_t i = 0; i < devs.size(); ++i) {
    send.emplace_back(devs[i], sizeof(double));
    recv.emplace_back(devs[i], out_count * sizeof(double));
    check(xal_memcpy_htod(streams[i], send[i].ptr(), &values[i], sizeof(double)),
          "xal_memcpy_htod");
  }
  check(xal_group_start(), "xal_group_start");
  for (size_t i = 0; i < devs.size(); ++i) {
    const xal_status_t s = issue(i, send[i].ptr(), recv[i].ptr());
    if (s != XAL_SUCCESS) {
      xal_group_end();
      check(s, "a collective on a scalar");
    }
  }
  check(xal_group_end(), "xal_group_end");
  synchronize(streams, comms);
  std::vector<double> out(out_count);
  check(xal_memcpy_dtoh(streams[0], out.data(), recv[0].ptr(), out_count * sizeof(double)),
        "xal_memcpy_dtoh");
  check(xal_stream_synchronize(streams[0]), "xal_stream_synchronize");
  return out;
}

}  // namespace

double reduce_scalar(const std::vector<Comm>& comms, const std::vector<xal_device_t>& devs,
                     const std::vector<xal_stream_t>& streams, const std::vector<double>& values,
                     xal_op_t op) {
  return scalar_collective(comms, devs, streams, values, 1,
                           [&](size_t i, xal_devptr_t send, xal_devptr_t recv) {
                             return xal_allreduce(comms[i].get(), send, recv, 1, XAL_DTYPE_F64,
                                                  op, streams[i]);
                           })[0];
}

std::vector<double> gather_scalar(const std::vector<Comm>& comms,
                                  const std::vector<xal_device_t>& devs,
                                  const std::vector<xal_stream_t>& streams,
                                  const std::vector<double>& values, uint32_t total) {
  return scalar_collective(comms, devs, streams, values, total,
                           [&](size_t i, xal_devptr_t send, xal_devptr_t recv) {
                             return xal_allgather(comms[i].get(), send, recv, 1, XAL_DTYPE_F64,
                                                  streams[i]);
                           });
}

std::vector<uint32_t> proportional(uint32_t total, const std::vector<double>& weights) {
  const size_t n = weights.size();
  std::vector<uint32_t> out(n, 1);
  if (n == 0 || total <= n) return out;
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> ideal(n);
  uint64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    ideal[i] = sum > 0 ? total * weights[i] / sum : double(total) / n;
    out[i] = std::max<uint32_t>(1, static_cast<uint32_t>(std::floor(ideal[i])));
    given += out[i];
  }
  // Largest remainders first; take back from the smallest when the floors
  // of 1 overshot.
  while (given < total) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
      if (ideal[i] - out[i] > ideal[best] - out[best]) best = i;
    ++out[best];
    ++given;
  }
  while (given > total) {
    size_t worst = n;
    for (size_t i = 0; i < n; ++i)
      if (out[i] > 1 && (worst == n || ideal[i] - out[i] < ideal[worst] - out[worst])) worst = i;
    --out[worst];
    --given;
  }
  return out;
}

}  // namespace xal::bench::train
