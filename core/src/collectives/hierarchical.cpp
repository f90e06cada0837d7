#include "hierarchical.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "../host_memory.hpp"
#include "../stream_failures.hpp"
#include "group_outcome.hpp"
#include "comm_split.hpp"
#include "group_plan.hpp"
#include "issue_order.hpp"
#include "p2p_rank.hpp"
#include "pipeline.hpp"
#include "xal_common/host_collective.hpp"
#include "xal_common/reduce.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

namespace {

using common::CollDesc;
using common::CollKind;

// State every rank of one xal_comm_create shares.
struct Shared {
  struct NativeGroup {
    const xal_backend_table_t* table = nullptr;
    std::vector<xal_bcomm_t*> comms;  // by position in the group; empty: not native
    // Per grouped call (numbered per rank): the rank that takes the group's
    // slot as the first member saw it, how many members have checked, and
    // the outcome of the taker's step that the other members wait for
    // (when the leaders' exchange has more than one slot).
    struct Claim {
      uint32_t taker = 0;
      size_t checked = 0;
      std::shared_ptr<GroupOutcome> outcome;
    };
    struct Claims {
      std::mutex mu;
      std::map<uint64_t, Claim> taker;
    };
    std::shared_ptr<Claims> claims = std::make_shared<Claims>();
  };

  ~Shared() {
    for (NativeGroup& g : native)
      for (xal_bcomm_t* c : g.comms)
        if (c) g.table->comm_destroy(c);
  }

  void abort() { break_with(XAL_ERROR_ABORTED, "the communicator was aborted (xal_comm_abort)"); }

  // Breaks both exchanges with `status` (sticky) and aborts the native
  // groups: every pending and later call fails.
  void break_with(xal_status_t status, const std::string& message) {
    if (p2p) p2p->mailbox.break_with(status, message);
    flat->rendezvous.break_with(status, message);
    if (leaders) leaders->rendezvous.break_with(status, message);
    for (NativeGroup& g : native)
      for (xal_bcomm_t* c : g.comms)
        if (c && g.table->comm_abort) g.table->comm_abort(c);
    error->record(status);
  }
  bool broken() const {
    return flat->rendezvous.error() != XAL_SUCCESS ||
           (leaders && leaders->rendezvous.error() != XAL_SUCCESS);
  }

  GroupPlan plan;
  size_t chunk_bytes = 0;
  bool native_reduce = false;  // every native group's backend has reduce
  std::shared_ptr<AsyncError> error = std::make_shared<AsyncError>();
  std::shared_ptr<Exchange> flat;     // every rank
  std::shared_ptr<Exchange> leaders;  // one slot per group leader or lone rank
  std::vector<NativeGroup> native;    // per group of the plan
  std::string description;
  std::shared_ptr<P2pShared> p2p;     // point-to-point (p2p_rank.hpp)
  std::shared_ptr<SplitMeet> meet;    // xal_comm_split (comm_split.hpp)
};

// The rank's IssueOrder: a gate waits as long as a call's staging waits
// (pipeline.hpp), and one that gives up breaks the communicator.
IssueOrder::Hooks order_hooks(const std::shared_ptr<Shared>& shared) {
  IssueOrder::Hooks h;
  h.limit = std::chrono::milliseconds(2 * uint64_t{shared->flat->rendezvous.timeout_ms()} + 1000);
  h.broken = [shared] { return shared->broken(); };
  h.on_stuck = [shared](const std::string& m) { shared->break_with(XAL_ERROR_TIMEOUT, m); };
  return h;
}

class HierComm final : public CommImpl {
 public:
  HierComm(DeviceObj* device, uint32_t rank, std::shared_ptr<Shared> shared, HostMemory& host)
      : device_(device), t_(device->hdr.table), rank_(rank), shared_(std::move(shared)),
        order_(order_hooks(shared_)), step_(device, host, shared_->chunk_bytes),
        p2p_(device, rank, this, shared_->p2p) {
    const GroupPlan& p = shared_->plan;
    const auto& g = shared_->native[p.group_of[rank]];
    if (!g.comms.empty()) sub_ = g.comms[p.local_of[rank]];
  }

  ~HierComm() override {
    // Queued staging copies may still use the buffers: drain the device.
    t_->device_synchronize(device_->native);
    clear_pending();
    for (xal_devptr_t p : scratch_) t_->mem_free(device_->native, p);
  }

  uint32_t path() const override { return XAL_COMM_PATH_HIERARCHICAL; }
  std::string description() const override { return shared_->description; }
  void* native() override { return nullptr; }

  xal_status_t abort() override {
    shared_->abort();
    clear_pending();
    return XAL_SUCCESS;
  }
  xal_status_t async_error(xal_status_t* out) override {
    *out = shared_->error->get();
    if (*out == XAL_SUCCESS && sub_ && t_->comm_get_async_error) {
      xal_status_t e = XAL_SUCCESS;
      if (t_->comm_get_async_error(sub_, &e) == XAL_SUCCESS) *out = e;
      clear_pending();
    }
    return XAL_SUCCESS;
  }

  xal_status_t allreduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         xal_op_t op, StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kAllreduce, n, dt, op, 0), s, r, st);
  }
  xal_status_t broadcast(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         uint32_t root, StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kBroadcast, n, dt, XAL_OP_SUM, root), s, r, st);
  }
  xal_status_t reduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt, xal_op_t op,
                      uint32_t root, StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kReduce, n, dt, op, root), s, r, st);
  }
  xal_status_t allgather(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kAllgather, n, dt, XAL_OP_SUM, 0), s, r, st);
  }
  xal_status_t reduce_scatter(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                              xal_op_t op, StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kReduceScatter, n, dt, op, 0), s, r, st);
  }
  xal_status_t alltoall(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                        StreamObj* st) override {
    return submit(common::coll_desc(CollKind::kAlltoall, n, dt, XAL_OP_SUM, 0), s, r, st);
  }
  // Point-to-point through host memory (p2p_rank.hpp); native groups play
  // no part: every rank posts and takes its own messages.
  xal_status_t p2p(std::span<const P2pOp> ops, StreamObj* st) override {
    return p2p_.submit(ops, st);
  }
  SplitMeet* split_meet() override { return shared_->meet.get(); }

 private:
  // Whether `d` runs through the groups' native collectives and the
  // leaders' exchange (otherwise every rank meets at the flat exchange).
  bool grouped(const CollDesc& d) const {
    if (!shared_->leaders) return false;
    return d.kind == CollKind::kAllreduce || d.kind == CollKind::kBroadcast ||
           (d.kind == CollKind::kReduce && shared_->native_reduce);
  }

  // The op of a grouped call's native step. An avg sums inside each group
  // and divides once, in the leaders' exchange, by the communicator's rank
  // count (leaders_desc); with a single slot the one group is the whole
  // communicator and its native avg does it all.
  xal_op_t native_op(const CollDesc& d) const {
    return d.op == XAL_OP_AVG && shared_->leaders->rendezvous.size() > 1 ? XAL_OP_SUM : d.op;
  }

  // `d` as the leaders' exchange runs it: the root as a slot, an avg
  // dividing by every rank of the communicator rather than by the slots.
  CollDesc leaders_desc(const CollDesc& d) const {
    const GroupPlan& p = shared_->plan;
    CollDesc ld = d;
    ld.root = p.slot_of[d.root];
    if (d.op == XAL_OP_AVG) ld.avg_divisor = static_cast<uint32_t>(p.group_of.size());
    return ld;
  }

  // Device memory of at least `bytes` that a group leader reduces into when
  // the root is in another group. Grown, never shrunk; earlier buffers stay
  // allocated (queued work may still use them) until the destructor.
  xal_status_t scratch(size_t bytes, xal_devptr_t* out) {
    if (scratch_.empty() || scratch_bytes_ < bytes) {
      const size_t want = std::max({bytes, scratch_bytes_ * 2, size_t{256}});
      xal_devptr_t p = 0;
      if (xal_status_t s = t_->mem_alloc(device_->native, want, &p); s < 0) return backend(s);
      scratch_.push_back(p);
      scratch_bytes_ = want;
    }
    *out = scratch_.back();
    return XAL_SUCCESS;
  }

  xal_status_t backend(xal_status_t s) {
    return s >= 0 ? XAL_SUCCESS : fail_backend(device_->backend, device_, s);
  }

  xal_status_t submit(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv, StreamObj* st) {
    const char* name = common::coll_name(d.kind);
    std::string why;
    if (xal_status_t s = common::check_coll_dtype_op(d, &why); s)
      return fail(device_, s, cat(name, ": ", why));
    try {
      shared_->flat->rendezvous.throw_if_broken(d.kind);
    } catch (const common::CollError& e) {
      return fail(device_, e.status(), e.what());
    }
    if (shared_->leaders) try {
        shared_->leaders->rendezvous.throw_if_broken(d.kind);
      } catch (const common::CollError& e) {
        return fail(device_, e.status(),
                    cat(e.what(), " [leaders' exchange: ", shared_->plan.describe_slots(), "]"));
      }
    // The rest queues work on the stream, in the rank's issue order (see
    // issue_order.hpp). Inside a group it runs at xal_group_end (see
    // defer_to_group_end).
    auto work = [this, d, send, recv, stream = st->native] {
      IssueOrder::Turn turn;
      if (xal_status_t s = order_.begin(t_, stream, common::coll_name(d.kind), &turn); s)
        return backend(s);
      if (!grouped(d))
        return step_.enqueue(shared_->flat, rank_, d, send, recv, stream, CallTies{std::move(turn), {}});
      const xal_status_t s = enqueue_grouped(d, send, recv, stream);
      IssueOrder::finish_on_stream(t_, stream, std::move(turn));
      return s;
    };
    if (defer_to_group_end(this, work)) return XAL_SUCCESS;
    return work();
  }

  // Each member of a native group states which rank takes the group's slot
  // in the leaders' exchange for its next grouped call (the leader, or a
  // reduce's root). Members that disagree (different roots or operations)
  // would put two ranks or none in one slot: the communicator is aborted
  // and COLLECTIVE_MISMATCH returned instead.
  // `outcome` is the call's outcome (see Shared::NativeGroup::Claim), or
  // null when the leaders' exchange has one slot.
  xal_status_t claim_slot(const CollDesc& d, uint32_t taker, std::shared_ptr<GroupOutcome>* outcome) {
    const GroupPlan& p = shared_->plan;
    Shared::NativeGroup& g = shared_->native[p.group_of[rank_]];
    const uint64_t call = grouped_calls_++;
    uint32_t other = taker;
    {
      std::lock_guard lock(g.claims->mu);
      auto [it, fresh] = g.claims->taker.try_emplace(call);
      if (fresh) {
        it->second.taker = taker;
        if (shared_->leaders->rendezvous.size() > 1)
          it->second.outcome = std::make_shared<GroupOutcome>();
      }
      other = it->second.taker;
      *outcome = it->second.outcome;
      if (other == taker && ++it->second.checked == g.comms.size()) g.claims->taker.erase(it);
    }
    if (other == taker) return XAL_SUCCESS;
    shared_->abort();
    return fail(device_, XAL_ERROR_COLLECTIVE_MISMATCH,
                cat(common::coll_name(d.kind), ": ranks of the ", p.groups[p.group_of[rank_]].backend->name,
                    " group disagree on the collective or its root (rank ", rank_,
                    " expects rank ", taker, " in the leaders' exchange, another member rank ",
                    other, "); the communicator was aborted"));
  }

  // A grouped call: the native parts and the leaders' exchange. The rank
  // that takes its group's slot reports its step's outcome; every other
  // member of the group then waits for it on its stream (after its native
  // part), so that a failure of the exchange reaches every member's stream.
  xal_status_t enqueue_grouped(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                               xal_bstream_t* st) {
    const GroupPlan& p = shared_->plan;
    std::shared_ptr<GroupOutcome> outcome;
    bool taker_here = false;
    if (sub_) {
      const bool root_here = d.kind == CollKind::kReduce && p.group_of[d.root] == p.group_of[rank_];
      const uint32_t taker = root_here ? d.root : p.groups[p.group_of[rank_]].ranks[0];
      if (xal_status_t e = claim_slot(d, taker, &outcome); e) return e;
      taker_here = taker == rank_;
    }
    OutcomeReport report(taker_here ? outcome : nullptr);
    const xal_status_t s = enqueue_grouped_parts(d, send, recv, st, report);
    if (s != XAL_SUCCESS) {
      xal_error_info_t e{};
      e.struct_size = sizeof e;
      xal_last_error(&e);
      report.fail(s, e.message);
    } else if (outcome && !taker_here) {
      wait_for_outcome(std::move(outcome), d.kind, st);
    }
    return s;
  }

  struct OutcomeWait {
    std::shared_ptr<GroupOutcome> outcome;
    std::shared_ptr<Exchange> leaders;
    CollKind kind;
    xal_bstream_t* stream;
  };
  // Queues on `st` a host function that waits for the taker's outcome and
  // reports its failure on `st`. Best effort: without host functions (or
  // when the backend refuses it) the member's stream is not told.
  void wait_for_outcome(std::shared_ptr<GroupOutcome> outcome, CollKind kind, xal_bstream_t* st) {
    if (!t_->stream_enqueue_host_func) return;
    auto w = std::make_unique<OutcomeWait>(OutcomeWait{std::move(outcome), shared_->leaders, kind, st});
    if (t_->stream_enqueue_host_func(st, &run_outcome_wait, w.get()) == XAL_SUCCESS)
      static_cast<void>(w.release());
    else
      clear_pending();
  }
  static void run_outcome_wait(void* user) noexcept {
    std::unique_ptr<OutcomeWait> w(static_cast<OutcomeWait*>(user));
    try {
      std::string message;
      const xal_status_t s = w->outcome->wait(
          [&](std::string* m) -> xal_status_t {
            try {
              w->leaders->rendezvous.throw_if_broken(w->kind);
              return XAL_SUCCESS;
            } catch (const common::CollError& e) {
              *m = e.what();
              return e.status();
            }
          },
          &message);
      if (s != XAL_SUCCESS) note_stream_failure(w->stream, s, message);
    } catch (...) {
      // Out of memory: the failure stays in the communicator's async error.
    }
  }

  xal_status_t enqueue_grouped_parts(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                                     xal_bstream_t* st, OutcomeReport& report) {
    const GroupPlan& p = shared_->plan;
    const uint32_t slot = p.slot_of[rank_];
    const bool leader = p.local_of[rank_] == 0;
    const auto& ex = shared_->leaders;
    const CollDesc ld = leaders_desc(d);
    // A leader alone in the exchange (one group) has nothing to exchange.
    auto leaders_step = [&](xal_devptr_t in) {
      if (ex->rendezvous.size() == 1 && in == recv) return XAL_SUCCESS;
      return step_.enqueue(ex, slot, ld, in, recv, st, CallTies{{}, std::move(report)});
    };
    if (d.kind == CollKind::kAllreduce) {
      if (!sub_) return step_.enqueue(ex, slot, ld, send, recv, st, CallTies{{}, std::move(report)});
      const xal_op_t op = native_op(d);
      xal_status_t s = t_->reduce
          ? t_->reduce(sub_, send, recv, d.count, d.dtype, op, 0, st)
          : t_->allreduce(sub_, send, recv, d.count, d.dtype, op, st);
      if (s < 0) return backend(s);
      if (leader)
        if (xal_status_t e = leaders_step(recv); e) return e;
      return backend(t_->broadcast(sub_, recv, recv, d.count, d.dtype, 0, st));
    }
    if (d.kind == CollKind::kReduce) return enqueue_grouped_reduce(d, send, recv, st, report);
    // Broadcast: the root's group first, then the leaders, then the others.
    if (!sub_) return step_.enqueue(ex, slot, ld, send, recv, st, CallTies{{}, std::move(report)});
    if (p.group_of[d.root] == p.group_of[rank_]) {
      const xal_status_t s =
          t_->broadcast(sub_, send, recv, d.count, d.dtype, p.local_of[d.root], st);
      if (s < 0) return backend(s);
      return leader ? leaders_step(recv) : XAL_SUCCESS;
    }
    if (leader)
      if (xal_status_t e = step_.enqueue(ex, slot, ld, 0, recv, st, CallTies{{}, std::move(report)}); e)
        return e;
    return backend(t_->broadcast(sub_, recv, recv, d.count, d.dtype, 0, st));
  }

  // Reduce: inside the root's group a native reduce to the root itself,
  // inside every other group a native reduce to the leader's scratch memory;
  // then the leaders' reduce to the root's slot, which the root takes. Only
  // the root's receive buffer is written.
  xal_status_t enqueue_grouped_reduce(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                                      xal_bstream_t* st, OutcomeReport& report) {
    const GroupPlan& p = shared_->plan;
    const auto& ex = shared_->leaders;
    const uint32_t slot = p.slot_of[rank_];
    const CollDesc ld = leaders_desc(d);
    if (!sub_)
      return step_.enqueue(ex, slot, ld, send, rank_ == d.root ? recv : 0, st,
                           CallTies{{}, std::move(report)});
    const xal_op_t op = native_op(d);
    if (p.group_of[d.root] == p.group_of[rank_]) {
      const xal_status_t s =
          t_->reduce(sub_, send, recv, d.count, d.dtype, op, p.local_of[d.root], st);
      if (s < 0) return backend(s);
      if (rank_ != d.root || ex->rendezvous.size() == 1) return XAL_SUCCESS;
      return step_.enqueue(ex, slot, ld, recv, recv, st, CallTies{{}, std::move(report)});
    }
    const bool leader = p.local_of[rank_] == 0;
    xal_devptr_t out = recv;  // not written at a non-root rank
    if (leader)
      if (xal_status_t e = scratch(d.count * common::dtype_size(d.dtype), &out); e) return e;
    const xal_status_t s = t_->reduce(sub_, send, out, d.count, d.dtype, op, 0, st);
    if (s < 0) return backend(s);
    return leader ? step_.enqueue(ex, slot, ld, out, 0, st, CallTies{{}, std::move(report)})
                  : XAL_SUCCESS;
  }

  DeviceObj* device_;
  const xal_backend_table_t* t_;
  const uint32_t rank_;
  std::shared_ptr<Shared> shared_;
  xal_bcomm_t* sub_ = nullptr;  // the group's native sub-communicator, if any
  uint64_t grouped_calls_ = 0;         // see claim_slot()
  IssueOrder order_;
  std::vector<xal_devptr_t> scratch_;  // see scratch(); the last is the current one
  size_t scratch_bytes_ = 0;
  HostStep step_;
  P2pRank p2p_;
};

std::string describe(const Shared& s, std::span<DeviceObj* const> devices) {
  std::string list, native;
  for (const auto& g : s.plan.groups) {
    const std::string& name = g.backend->name;
    list += (list.empty() ? "" : ", ") + name;
    if (g.native) native += cat(native.empty() ? "" : ", ", name, " (", g.ranks.size(), " ranks)");
  }
  std::string d = cat("core collectives through host memory over ", devices.size(),
                      " devices of backend(s) ", list);
  if (!native.empty())
    d += cat("; native groups: ", native, "; leaders' exchange of ", s.plan.slots(), " slots");
  d += s.chunk_bytes ? cat("; chunks of ", common::format_bytes(s.chunk_bytes)) : "; unchunked";
  return d;
}

}  // namespace

xal_status_t create_hierarchical_comms(std::span<DeviceObj* const> devices, uint32_t timeout_ms,
                                       std::vector<std::unique_ptr<CommImpl>>& out,
                                       std::set<const Backend*> no_native) {
  Runtime* rt = runtime();
  if (!rt || !rt->host) return not_initialized();
  const auto n = static_cast<uint32_t>(devices.size());
  std::shared_ptr<Shared> shared;
  // Each pass plans without the backends whose library failed so far: at
  // most one more pass per backend.
  for (bool planned = false; !planned;) {
    shared = std::make_shared<Shared>();
    if (xal_status_t s = chunk_bytes_from_env(&shared->chunk_bytes); s) return s;
    shared->plan = make_group_plan(devices, no_native);
    shared->flat = std::make_shared<Exchange>(n, timeout_ms, shared->error);
    if (shared->plan.hierarchical())
      shared->leaders = std::make_shared<Exchange>(shared->plan.slots(), timeout_ms, shared->error);
    shared->native.resize(shared->plan.groups.size());
    shared->native_reduce = true;
    planned = true;
    for (size_t gi = 0; gi < shared->plan.groups.size() && planned; ++gi) {
      const GroupPlan::Group& g = shared->plan.groups[gi];
      if (!g.native) continue;
      DeviceObj* first = devices[g.ranks[0]];
      std::vector<xal_bdevice_t*> natives;
      for (uint32_t r : g.ranks) natives.push_back(devices[r]->native);
      Shared::NativeGroup& ng = shared->native[gi];
      ng.table = first->hdr.table;
      shared->native_reduce = shared->native_reduce && ng.table->reduce;
      std::vector<xal_bcomm_t*> comms(natives.size(), nullptr);
      xal_bcomm_options_t opts{};
      opts.struct_size = sizeof opts;
      opts.timeout_ms = timeout_ms;
      const xal_status_t s = ng.table->comm_create(
          natives.data(), static_cast<uint32_t>(natives.size()), &opts, comms.data());
      if (s != XAL_SUCCESS) {
        fail_backend(first->backend, first, s);
        if (!native_failure_can_fall_back(s)) return s;
        warn_native_fallback(first->backend);
        no_native.insert(first->backend);
        planned = false;  // the groups made so far go with this Shared
        continue;
      }
      ng.comms = std::move(comms);
    }
  }
  clear_pending();
  shared->p2p = std::make_shared<P2pShared>(timeout_ms, shared->error);
  shared->meet = std::make_shared<SplitMeet>(
      std::vector<DeviceObj*>(devices.begin(), devices.end()), timeout_ms);
  shared->description = describe(*shared, devices);
  for (const Backend* b : no_native)
    shared->description += cat("; native collectives of ", b->name, " failed (see the log)");
  out.clear();
  for (uint32_t i = 0; i < n; ++i)
    out.push_back(std::make_unique<HierComm>(devices[i], i, shared, *rt->host));
  return XAL_SUCCESS;
}

}  // namespace xal::core
