#include "backend.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "hosts_transport.hpp"
#include "shm_transport.hpp"
#include "xal_runtime.hpp"

namespace xal::torch_backend {

namespace {

constexpr size_t kDefaultSlotBytes = size_t{4} << 20;  // fewer rounds (barriers) per call
constexpr const char* kShmKey = "xal/shm_name";

size_t slot_bytes_from_env() {
  const char* v = std::getenv("XAL_TORCH_SHM_SLOT_BYTES");
  if (!v || !*v) return kDefaultSlotBytes;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  TORCH_CHECK(end != v && *end == '\0' && n >= 4096 && n <= (1ull << 30),
              "xal: XAL_TORCH_SHM_SLOT_BYTES=", v, " is not a byte count in [4096, 1 GiB]");
  return static_cast<size_t>(n);
}

// Every tensor a call takes: a dense (strided) tensor, on any device.
void check_tensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined(), "xal: ", op, " got an undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, "xal: ", op, " supports dense tensors only, got ",
              t.layout());
}

void check_tensors(const std::vector<at::Tensor>& ts, const char* op) {
  for (const at::Tensor& t : ts) check_tensor(t, op);
}

const char* op_text(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

// A reduction as xal runs it, decided in the caller's thread so that an
// unsupported op or dtype raises at the call.
struct Reduction {
  xal_dtype_t dtype = XAL_DTYPE_F32;
  xal_op_t op = XAL_OP_SUM;
  bool premul = false;
  double factor = 1.0;
  at::Tensor tensor_factor;

  // in * factor for PREMUL_SUM (a new tensor unless in_place), else in.
  at::Tensor scaled(const at::Tensor& in, bool in_place) const {
    if (!premul) return in;
    const at::Scalar f(factor);
    if (tensor_factor.defined()) {
      const at::Tensor tf = tensor_factor.to(at::kCPU).to(in.scalar_type());
      return in_place ? in.mul_(tf) : in.mul(tf);
    }
    return in_place ? in.mul_(f) : in.mul(f);
  }
};

Reduction reduction(const c10d::ReduceOp& rop, at::ScalarType st, const char* name) {
  Reduction r;
  r.dtype = reduce_dtype(name, st);
  const bool is_bool = st == at::kBool;
  const bool is_float = at::isFloatingType(st);
  auto unsupported = [&](const char* why) {
    C10_THROW_ERROR(TypeError, std::string("xal: ") + name + " does not support ReduceOp." +
                                   op_text(rop.op_) + " on " + c10::toString(st) + ": " + why);
  };
  switch (rop.op_) {
    case c10d::ReduceOp::SUM: r.op = is_bool ? XAL_OP_MAX : XAL_OP_SUM; break;  // logical or
    case c10d::ReduceOp::PRODUCT: r.op = is_bool ? XAL_OP_MIN : XAL_OP_PROD; break;  // and
    case c10d::ReduceOp::MIN: r.op = XAL_OP_MIN; break;
    case c10d::ReduceOp::MAX: r.op = XAL_OP_MAX; break;
    case c10d::ReduceOp::AVG:
      if (!is_float) unsupported("xal averages floating-point dtypes only");
      r.op = XAL_OP_AVG;
      break;
    case c10d::ReduceOp::PREMUL_SUM: {
      if (!is_float) unsupported("a premultiplied sum needs a floating-point dtype");
      const auto* sup = dynamic_cast<const c10d::PreMulSumSupplement*>(rop.supplement_.get());
      TORCH_CHECK(sup, "xal: ", name, ": ReduceOp.PREMUL_SUM without its factor");
      r.op = XAL_OP_SUM;
      r.premul = true;
      r.factor = sup->double_factor;
      r.tensor_factor = sup->tensor_factor;
      break;
    }
    default: unsupported("xal has no bitwise reductions");
  }
  return r;
}

size_t nbytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// The bytes of a dense tensor as a 1-D uint8 view of it.
at::Tensor bytes_of(const at::Tensor& t) { return t.reshape({-1}).view(at::kByte); }
int64_t i64(size_t v) { return static_cast<int64_t>(v); }

}  // namespace

// ---------------------------------------------------------------- Work ---

XalWork::XalWork(c10d::OpType type, std::vector<at::Tensor> outputs,
                 std::chrono::milliseconds timeout)
    : c10d::Work(-1, type), outputs_(std::move(outputs)), timeout_(timeout),
      future_(c10::make_intrusive<at::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))) {}

void XalWork::complete(std::exception_ptr error) {
  if (error) {
    finish(error);
    future_->setError(error);
  } else {
    finish();
    future_->markCompleted(c10::IValue(outputs_));
  }
}

// ------------------------------------------------------------- Backend ---

XalBackend::XalBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout, std::vector<int> host_of_rank,
                       c10::intrusive_ptr<c10d::Backend> leaders,
                       c10::intrusive_ptr<c10d::Backend> everyone)
    : c10d::Backend(rank, size), timeout_(timeout) {
  if (host_of_rank.empty()) host_of_rank.assign(static_cast<size_t>(size), 0);
  TORCH_CHECK(static_cast<int>(host_of_rank.size()) == size,
              "xal: one host index per rank expected");
  dev_ = process_device();
  gdev_ = GroupDevice::of(dev_);
  const long long ms = std::clamp<long long>(timeout.count(), 1, UINT32_MAX);
  const auto timeout_ms = static_cast<uint32_t>(ms);
  const size_t slot = slot_bytes_from_env();
  // This host's ranks meet in one segment; its lowest rank creates it.
  const int host = host_of_rank[static_cast<size_t>(rank)];
  uint32_t local_rank = 0, local_size = 0;
  for (int r = 0; r < size; ++r)
    if (host_of_rank[static_cast<size_t>(r)] == host) {
      if (r < rank) ++local_rank;
      ++local_size;
    }
  hosts_ = *std::max_element(host_of_rank.begin(), host_of_rank.end()) + 1;
  const std::string key = std::string(kShmKey) + "/" + std::to_string(host);
  std::unique_ptr<ShmTransport> transport;
  if (local_rank == 0) {
    const std::string name = ShmTransport::unique_name();
    transport = ShmTransport::open(name, true, 0, local_size, slot);
    store->set(key, std::vector<uint8_t>(name.begin(), name.end()));
  } else {
    const std::vector<uint8_t> v = store->get(key);
    transport = ShmTransport::open(std::string(v.begin(), v.end()), false, local_rank, local_size,
                                   slot);
  }
  transport->wait_attached_and_unlink(timeout_ms);
  transport->set_split_timeout(timeout_ms);
  TORCH_CHECK(hosts_ == 1 || (local_rank == 0) == leaders.defined(),
              "xal: the leaders' backend between hosts must be given to each host's lowest rank "
              "and to no other");
  std::unique_ptr<HostsTransport> hosts;
  xal_comm_transport_t table{};
  if (hosts_ == 1) {
    table = transport->table();
    ShmTransport* shm = transport.get();  // the communicator's: lives as long as comm_
    shm_ = shm;
    offered_from_ = [shm](int first) { return shm->offered_from(static_cast<uint32_t>(first)); };
  } else {
    hosts = std::make_unique<HostsTransport>(std::move(transport), std::move(host_of_rank), rank,
                                             std::move(leaders), std::move(everyone));
    table = hosts->table();
    HostsTransport* h = hosts.get();
    offered_from_ = [h](int first) { return h->offered_from(first); };
  }
  xal_comm_options_t options{};
  options.struct_size = sizeof options;
  options.timeout_ms = timeout_ms;
  check_xal("creating the communicator (xal_comm_create_transport)",
            xal_comm_create_transport(&dev_, 1, &options, &table, &comm_));
  // The communicator owns the transport now.
  static_cast<void>(transport.release());
  static_cast<void>(hosts.release());
  start();
}

void XalBackend::start() {
  if (xal_status_t s = xal_stream_create(dev_, XAL_STREAM_DEFAULT, &stream_); s) {
    xal_comm_destroy(comm_);
    comm_ = nullptr;
    throw_xal("creating the group's stream (xal_stream_create)", s);
  }
  thread_ = std::thread([this] { worker(); });
}

XalBackend::~XalBackend() {
  stop();
  if (comm_) xal_comm_destroy(comm_);
  if (stream_) xal_stream_destroy(stream_);
  for (const auto& [native, s] : imported_streams_) xal_stream_destroy(s);
}

CallPlace XalBackend::place_for(const std::vector<at::Tensor>& tensors, const char* op) const {
  check_tensors(tensors, op);
  return place_of(gdev_, tensors, op);
}

xal_stream_t XalBackend::stream_at(const CallPlace& place) {
  if (!place.device_memory) return stream_;
  auto it = imported_streams_.find(place.native_stream);
  if (it != imported_streams_.end()) return it->second;
  xal_stream_t s = nullptr;
  check_xal("importing torch's current stream (xal_stream_import)",
            xal_stream_import(dev_, place.native_stream, 0, &s));
  imported_streams_.emplace(place.native_stream, s);
  return s;
}

std::string XalBackend::deviceDescription() const { return describe_device(dev_); }

void XalBackend::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void XalBackend::shutdown() { stop(); }

void XalBackend::abort() {
  aborted_.store(true);
  if (comm_) xal_comm_abort(comm_);
}

void XalBackend::sync(const char* name, xal_status_t issued) {
  if (issued != XAL_SUCCESS) throw_xal(name, issued);
  if (xal_status_t s = xal_stream_synchronize(call_stream_); s) throw_xal(name, s);
}

// --------------------------------------------------------- worker steps ---

void XalBackend::run_allreduce(at::Tensor& t, const c10d::ReduceOp& rop, const char* name) {
  const Reduction r = reduction(rop, t.scalar_type(), name);
  at::Tensor w = dense(t);
  if (w.numel()) {
    r.scaled(w, /*in_place=*/true);
    TensorMemory im = memory({&w}, {&w}, name);
    sync(name, xal_allreduce(comm_, im.ptr(w), im.ptr(w), static_cast<size_t>(w.numel()),
                             r.dtype, r.op, call_stream_));
    im.copy_out();
    last_staged_.store(im.staged_bytes());
  }
  write_back(t, w);
}

void XalBackend::run_reduce(at::Tensor& t, const c10d::ReduceOp& rop, int root) {
  const Reduction r = reduction(rop, t.scalar_type(), "reduce");
  at::Tensor w = dense(t);
  if (w.numel()) {
    at::Tensor in = r.scaled(w, /*in_place=*/false);
    TensorMemory im = memory({&in}, {&w}, "reduce");
    sync("reduce", xal_reduce(comm_, im.ptr(in), im.ptr(w), static_cast<size_t>(w.numel()),
                              r.dtype, r.op, static_cast<uint32_t>(root), call_stream_));
    im.copy_out();
  }
  write_back(t, w);
}

void XalBackend::run_broadcast(at::Tensor& t, int root) {
  at::Tensor w = dense(t);
  if (w.numel()) {
    TensorMemory im = memory({&w}, {&w}, "broadcast");
    sync("broadcast", xal_broadcast(comm_, im.ptr(w), im.ptr(w), nbytes(w), XAL_DTYPE_U8,
                                    static_cast<uint32_t>(root), call_stream_));
    im.copy_out();
  }
  write_back(t, w);
}

void XalBackend::run_allgather(at::Tensor& out, const at::Tensor& in_, const char* name) {
  const at::Tensor in = dense(in_);
  at::Tensor w = dense(out);
  if (in.numel()) {
    TensorMemory im = memory({&in}, {&w}, name);
    sync(name,
         xal_allgather(comm_, im.ptr(in), im.ptr(w), nbytes(in), XAL_DTYPE_U8, call_stream_));
    im.copy_out();
  }
  write_back(out, w);
}

void XalBackend::run_reduce_scatter(at::Tensor& out, const at::Tensor& in_,
                                    const c10d::ReduceOp& rop, const char* name) {
  const Reduction r = reduction(rop, in_.scalar_type(), name);
  const at::Tensor in = r.scaled(dense(in_), /*in_place=*/false);
  at::Tensor w = dense(out);
  if (w.numel()) {
    TensorMemory im = memory({&in}, {&w}, name);
    sync(name, xal_reduce_scatter(comm_, im.ptr(in), im.ptr(w), static_cast<size_t>(w.numel()),
                                  r.dtype, r.op, call_stream_));
    im.copy_out();
  }
  write_back(out, w);
}

int64_t XalBackend::group_max(int64_t v, const char* name) {
  at::Tensor t = at::full({1}, v, at::kLong);
  TensorMemory im = memory({&t}, {&t}, name);
  sync(name,
       xal_allreduce(comm_, im.ptr(t), im.ptr(t), 1, XAL_DTYPE_I64, XAL_OP_MAX, call_stream_));
  im.copy_out();
  return t.item<int64_t>();
}

void XalBackend::run_alltoall_bytes(at::Tensor& out, const at::Tensor& in, size_t block,
                                    const char* name) {
  if (block == 0) return;
  TensorMemory im = memory({&in}, {&out}, name);
  sync(name, xal_alltoall(comm_, im.ptr(in), im.ptr(out), block, XAL_DTYPE_U8, call_stream_));
  im.copy_out();
}

// ------------------------------------------------------------- the API ---

c10::intrusive_ptr<c10d::Work> XalBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                     const c10d::BroadcastOptions& opts) {
  check_tensors(tensors, "broadcast");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: broadcast: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, tensors, place_of(gdev_, tensors, "broadcast"), [this, tensors, root]() mutable {
    for (at::Tensor& t : tensors) run_broadcast(t, root);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceOptions& opts) {
  check_tensors(tensors, "allreduce");
  for (const at::Tensor& t : tensors) reduction(opts.reduceOp, t.scalar_type(), "allreduce");
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE, tensors, place_of(gdev_, tensors, "allreduce"), [this, tensors, op]() mutable {
    for (at::Tensor& t : tensors) run_allreduce(t, op, "allreduce");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  check_tensors(tensors, "allreduce_coalesced");
  for (const at::Tensor& t : tensors)
    reduction(opts.reduceOp, t.scalar_type(), "allreduce_coalesced");
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors,
                 place_of(gdev_, tensors, "allreduce_coalesced"), [this, tensors, op]() mutable {
    for (at::Tensor& t : tensors) run_allreduce(t, op, "allreduce_coalesced");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce(std::vector<at::Tensor>& tensors,
                                                  const c10d::ReduceOptions& opts) {
  check_tensors(tensors, "reduce");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: reduce: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  for (const at::Tensor& t : tensors) reduction(opts.reduceOp, t.scalar_type(), "reduce");
  c10d::ReduceOp op = opts.reduceOp;
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::REDUCE, tensors, place_of(gdev_, tensors, "reduce"), [this, tensors, op, root]() mutable {
    for (at::Tensor& t : tensors) run_reduce(t, op, root);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& /*opts*/) {
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1,
              "xal: allgather takes one input tensor and one list of outputs");
  check_tensor(inputs[0], "allgather");
  check_tensors(outputs[0], "allgather");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "xal: allgather: ", size_,
              " output tensors expected, got ", outputs[0].size());
  for (const at::Tensor& o : outputs[0])
    TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                "xal: allgather: every output must have the input's size and dtype");
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> outs = outputs[0];
  std::vector<at::Tensor> all = outs;
  all.push_back(in);
  return enqueue(c10d::OpType::ALLGATHER, outs, place_of(gdev_, all, "allgather"), [this, in, outs]() mutable {
    at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
    run_allgather(flat, in, "allgather");
    for (int r = 0; r < size_; ++r)
      outs[r].copy_(flat.narrow(0, r * in.numel(), in.numel()).view(outs[r].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                           const c10d::AllgatherOptions& /*opts*/) {
  check_tensor(input, "allgather_into_tensor");
  check_tensor(output, "allgather_into_tensor");
  TORCH_CHECK(output.numel() == input.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "xal: allgather_into_tensor: the output must hold ", size_,
              " times the input's elements, of its dtype");
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output},
                 place_of(gdev_, {output, input}, "allgather_into_tensor"), [this, out, in]() mutable {
    run_allgather(out, in, "allgather_into_tensor");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "xal: allgather_into_tensor_coalesced: as many outputs as inputs expected");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "allgather_into_tensor_coalesced");
    check_tensor(outputs[i], "allgather_into_tensor_coalesced");
    TORCH_CHECK(outputs[i].numel() == inputs[i].numel() * size_ &&
                    outputs[i].scalar_type() == inputs[i].scalar_type(),
                "xal: allgather_into_tensor_coalesced: output ", i, " must hold ", size_,
                " times its input's elements, of its dtype");
  }
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::COALESCED, outputs,
                 place_of(gdev_, all, "allgather_into_tensor_coalesced"),
                 [this, outputs, inputs]() mutable {
    for (size_t i = 0; i < inputs.size(); ++i)
      run_allgather(outputs[i], inputs[i], "allgather_into_tensor_coalesced");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1,
              "xal: reduce_scatter takes one output tensor and one list of inputs");
  check_tensor(outputs[0], "reduce_scatter");
  check_tensors(inputs[0], "reduce_scatter");
  TORCH_CHECK(static_cast<int>(inputs[0].size()) == size_, "xal: reduce_scatter: ", size_,
              " input tensors expected, got ", inputs[0].size());
  for (const at::Tensor& i : inputs[0])
    TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                "xal: reduce_scatter: every input must have the output's size and dtype");
  reduction(opts.reduceOp, outputs[0].scalar_type(), "reduce_scatter");
  at::Tensor out = outputs[0];
  std::vector<at::Tensor> ins = inputs[0];
  c10d::ReduceOp op = opts.reduceOp;
  std::vector<at::Tensor> all = ins;
  all.push_back(out);
  return enqueue(c10d::OpType::REDUCE_SCATTER, outputs, place_of(gdev_, all, "reduce_scatter"), [this, out, ins, op]() mutable {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& i : ins) flat.push_back(i.reshape({-1}));
    run_reduce_scatter(out, at::cat(flat), op, "reduce_scatter");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter_tensor");
  check_tensor(output, "reduce_scatter_tensor");
  TORCH_CHECK(input.numel() == output.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "xal: reduce_scatter_tensor: the input must hold ", size_,
              " times the output's elements, of its dtype");
  reduction(opts.reduceOp, input.scalar_type(), "reduce_scatter_tensor");
  at::Tensor out = output, in = input;
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {output},
                 place_of(gdev_, {output, input}, "reduce_scatter_tensor"), [this, out, in, op]() mutable {
    run_reduce_scatter(out, in, op, "reduce_scatter_tensor");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "xal: reduce_scatter_tensor_coalesced: as many outputs as inputs expected");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "reduce_scatter_tensor_coalesced");
    check_tensor(outputs[i], "reduce_scatter_tensor_coalesced");
    TORCH_CHECK(inputs[i].numel() == outputs[i].numel() * size_ &&
                    outputs[i].scalar_type() == inputs[i].scalar_type(),
                "xal: reduce_scatter_tensor_coalesced: input ", i, " must hold ", size_,
                " times its output's elements, of its dtype");
    reduction(opts.reduceOp, inputs[i].scalar_type(), "reduce_scatter_tensor_coalesced");
  }
  c10d::ReduceOp op = opts.reduceOp;
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::COALESCED, outputs,
                 place_of(gdev_, all, "reduce_scatter_tensor_coalesced"),
                 [this, outputs, inputs, op]() mutable {
    for (size_t i = 0; i < inputs.size(); ++i)
      run_reduce_scatter(outputs[i], inputs[i], op, "reduce_scatter_tensor_coalesced");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                         std::vector<int64_t>& output_splits,
                                                         std::vector<int64_t>& input_splits,
                                                         const c10d::AllToAllOptions& /*opts*/) {
  constexpr const char* kName = "alltoall_base";
  check_tensor(input, kName);
  check_tensor(output, kName);
  TORCH_CHECK(input.scalar_type() == output.scalar_type(), "xal: ", kName,
              ": input and output dtypes differ");
  // Splits in rows of dim 0; empty: equal parts.
  auto splits = [&](const std::vector<int64_t>& given, const at::Tensor& t, const char* which) {
    std::vector<int64_t> s = given;
    const int64_t rows = t.dim() ? t.size(0) : t.numel();
    if (s.empty()) {
      TORCH_CHECK(rows % size_ == 0, "xal: ", kName, ": ", which, " dim 0 (", rows,
                  ") does not split into ", size_, " equal parts");
      s.assign(static_cast<size_t>(size_), rows / size_);
    }
    TORCH_CHECK(static_cast<int>(s.size()) == size_, "xal: ", kName, ": ", which, " splits have ",
                s.size(), " entries, the group ", size_);
    int64_t sum = 0;
    for (int64_t v : s) {
      TORCH_CHECK(v >= 0, "xal: ", kName, ": negative split");
      sum += v;
    }
    TORCH_CHECK(sum == rows, "xal: ", kName, ": ", which, " splits add up to ", sum, ", dim 0 is ",
                rows);
    return s;
  };
  const std::vector<int64_t> in_s = splits(input_splits, input, "input");
  const std::vector<int64_t> out_s = splits(output_splits, output, "output");
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output}, place_of(gdev_, {output, input}, kName), [this, out, in, in_s, out_s]() mutable {
    const at::Tensor src = dense(in);
    at::Tensor dst = dense(out);
    const int64_t in_rows = src.dim() ? src.size(0) : src.numel();
    const int64_t out_rows = dst.dim() ? dst.size(0) : dst.numel();
    const size_t in_row = in_rows ? nbytes(src) / static_cast<size_t>(in_rows) : 0;
    const size_t out_row = out_rows ? nbytes(dst) / static_cast<size_t>(out_rows) : 0;
    int64_t local = 0;
    for (int q = 0; q < size_; ++q)
      local = std::max({local, in_s[q] * static_cast<int64_t>(in_row),
                        out_s[q] * static_cast<int64_t>(out_row)});
    // One block size for every pair (the largest piece of any rank):
    // pieces are padded to it where they differ.
    const auto block = static_cast<size_t>(group_max(local, kName));
    const size_t n = static_cast<size_t>(size_);
    bool send_packed = true, recv_packed = true;
    for (size_t q = 0; q < n; ++q) {
      send_packed = send_packed && static_cast<size_t>(in_s[q]) * in_row == block;
      recv_packed = recv_packed && static_cast<size_t>(out_s[q]) * out_row == block;
    }
    // Pieces are copied with torch (on the call's device: src and dst are
    // on the CPU, or both on the group's card).
    at::Tensor send = src, recv = dst;
    if (!send_packed) {
      send = at::empty({i64(n * block)}, src.options().dtype(at::kByte));
      const at::Tensor from = bytes_of(src);
      size_t off = 0;
      for (size_t q = 0; q < n; ++q) {
        const size_t b = static_cast<size_t>(in_s[q]) * in_row;
        if (b) send.narrow(0, i64(q * block), i64(b)).copy_(from.narrow(0, i64(off), i64(b)));
        off += b;
      }
    }
    if (!recv_packed) recv = at::empty({i64(n * block)}, dst.options().dtype(at::kByte));
    run_alltoall_bytes(recv, send, block, kName);
    if (!recv_packed) {
      at::Tensor to = bytes_of(dst);
      size_t off = 0;
      for (size_t p = 0; p < n; ++p) {
        const size_t b = static_cast<size_t>(out_s[p]) * out_row;
        if (b) to.narrow(0, i64(off), i64(b)).copy_(recv.narrow(0, i64(p * block), i64(b)));
        off += b;
      }
    }
    write_back(out, dst);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::AllToAllOptions& /*opts*/) {
  constexpr const char* kName = "alltoall";
  check_tensors(inputs, kName);
  check_tensors(outputs, kName);
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ &&
                  static_cast<int>(outputs.size()) == size_,
              "xal: alltoall: ", size_, " inputs and outputs expected");
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::ALLTOALL, outputs, place_of(gdev_, all, kName), [this, outputs, inputs]() mutable {
    const size_t n = static_cast<size_t>(size_);
    int64_t local = 0;
    for (size_t q = 0; q < n; ++q)
      local = std::max({local, static_cast<int64_t>(nbytes(inputs[q])),
                        static_cast<int64_t>(nbytes(outputs[q]))});
    const auto block = static_cast<size_t>(group_max(local, kName));
    // On the group's card when the tensors are, else on the CPU.
    const at::TensorOptions bytes = at::TensorOptions().dtype(at::kByte).device(
        place_.device_memory ? inputs[0].device() : at::Device(at::kCPU));
    at::Tensor send = at::empty({i64(n * block)}, bytes);
    at::Tensor recv = at::empty({i64(n * block)}, bytes);
    for (size_t q = 0; q < n; ++q) {
      const at::Tensor s = dense(inputs[q]);
      if (nbytes(s)) send.narrow(0, i64(q * block), i64(nbytes(s))).copy_(bytes_of(s));
    }
    run_alltoall_bytes(recv, send, block, kName);
    for (size_t p = 0; p < n; ++p) {
      at::Tensor d = dense(outputs[p]);
      if (nbytes(d)) bytes_of(d).copy_(recv.narrow(0, i64(p * block), i64(nbytes(d))));
      write_back(outputs[p], d);
    }
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                  std::vector<at::Tensor>& inputs,
                                                  const c10d::GatherOptions& opts) {
  constexpr const char* kName = "gather";
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: gather: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  TORCH_CHECK(inputs.size() == 1, "xal: gather takes one input tensor");
  check_tensor(inputs[0], kName);
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "xal: gather: the root takes one list of ", size_, " output tensors");
    check_tensors(outputs[0], kName);
    for (const at::Tensor& o : outputs[0])
      TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                  "xal: gather: every output must have the input's size and dtype");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "xal: gather: only the root takes output tensors");
  }
  at::Tensor in = inputs[0];
  // Through xal's all-gather (every rank receives; the root keeps it).
  std::vector<at::Tensor> all = outs;
  all.push_back(in);
  return enqueue(c10d::OpType::GATHER, outs, place_of(gdev_, all, kName), [this, in, outs]() mutable {
    at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
    run_allgather(flat, in, "gather");
    for (size_t r = 0; r < outs.size(); ++r)
      outs[r].copy_(flat.narrow(0, static_cast<int64_t>(r) * in.numel(), in.numel())
                        .view(outs[r].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::scatter(std::vector<at::Tensor>& outputs,
                                                   std::vector<std::vector<at::Tensor>>& inputs,
                                                   const c10d::ScatterOptions& opts) {
  constexpr const char* kName = "scatter";
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: scatter: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  TORCH_CHECK(outputs.size() == 1, "xal: scatter takes one output tensor");
  check_tensor(outputs[0], kName);
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "xal: scatter: the root takes one list of ", size_, " input tensors");
    check_tensors(inputs[0], kName);
    for (const at::Tensor& i : inputs[0])
      TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                  "xal: scatter: every input must have the output's size and dtype");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "xal: scatter: only the root takes input tensors");
  }
  at::Tensor out = outputs[0];
  // Through xal's broadcast of the root's pieces (each rank keeps its own).
  std::vector<at::Tensor> all = ins;
  all.push_back(out);
  return enqueue(c10d::OpType::SCATTER, outputs, place_of(gdev_, all, kName), [this, out, ins, root]() mutable {
    const int64_t n = out.numel();
    at::Tensor flat = at::empty({size_ * n}, out.options());
    for (size_t r = 0; r < ins.size(); ++r)
      flat.narrow(0, static_cast<int64_t>(r) * n, n).copy_(ins[r].reshape({-1}));
    run_broadcast(flat, root);
    out.copy_(flat.narrow(0, static_cast<int64_t>(rank_) * n, n).view(out.sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduceDeviceMemory(uint64_t ptr, int64_t count,
                                                                 at::ScalarType dtype,
                                                                 uint64_t native_stream) {
  TORCH_CHECK(ptr != 0 && count > 0, "xal: allreduceDeviceMemory: a pointer and a count > 0");
  TORCH_CHECK(gdev_.imports && (gdev_.backend == "cuda" || gdev_.backend == "hip"),
              "xal: allreduceDeviceMemory needs a CUDA or HIP card that imports memory and "
              "streams; the group runs on ", describe_device(dev_));
  // A CUDA tensor over the memory, as torch would hand it to allreduce.
  // (target_device: torch does not ask its CUDA runtime where the memory is.)
  const at::Device card(at::kCUDA, static_cast<c10::DeviceIndex>(gdev_.backend_index));
  at::Tensor t = at::for_blob(reinterpret_cast<void*>(ptr), {count})
                     .options(at::TensorOptions().dtype(dtype).device(card))
                     .target_device(card)
                     .make_tensor();
  CallPlace place;
  place.device_memory = true;
  place.native_stream = native_stream;
  const c10d::ReduceOp op(c10d::ReduceOp::SUM);
  return enqueue(c10d::OpType::ALLREDUCE, {t}, place,
                 [this, t, op]() mutable { run_allreduce(t, op, "allreduce"); });
}

c10::intrusive_ptr<c10d::Work> XalBackend::barrier(const c10d::BarrierOptions& /*opts*/) {
  return enqueue(c10d::OpType::BARRIER, {}, CallPlace{}, [this] {
    at::Tensor t = at::zeros({1}, at::kInt);
    run_allreduce(t, c10d::ReduceOp(c10d::ReduceOp::SUM), "barrier");
  });
}

}  // namespace xal::torch_backend
