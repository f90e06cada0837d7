#include "backend.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "backend_ops.hpp"
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
  // This host's ranks meet in one segment; its lowest rank creates it.
  const int host = host_of_rank[static_cast<size_t>(rank)];
  uint32_t local_rank = 0, local_size = 0;
  for (int r = 0; r < size; ++r)
    if (host_of_rank[static_cast<size_t>(r)] == host) {
      if (r < rank) ++local_rank;
      ++local_size;
    }
  dev_ = process_device(static_cast<int>(local_rank));
  gdev_ = GroupDevice::of(dev_);
  const long long ms = std::clamp<long long>(timeout.count(), 1, UINT32_MAX);
  const auto timeout_ms = static_cast<uint32_t>(ms);
  const size_t slot = slot_bytes_from_env();
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

}  // namespace xal::torch_backend
