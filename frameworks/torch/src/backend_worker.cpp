// XalBackend's queue: the calls in issue order on one worker thread,
// sends and receives queued back to back as one xal group, and the calls
// collected between startCoalescing and endCoalescing run as one item.
#include "backend.hpp"

#include <ATen/ATen.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>

#include "xal_runtime.hpp"

namespace xal::torch_backend {

c10::intrusive_ptr<c10d::Work> XalBackend::enqueue(c10d::OpType type,
                                                   std::vector<at::Tensor> outputs,
                                                   CallPlace place, Fn fn,
                                                   std::shared_ptr<P2pOp> p2p) {
  auto work = c10::make_intrusive<XalWork>(type, std::move(outputs), timeout_);
  {
    std::lock_guard lock(mu_);
    TORCH_CHECK(!stop_, "xal: the process group was shut down");
    Item item{work, std::move(fn), std::move(p2p), nullptr, std::move(place)};
    if (coalescing_) coalesced_.push_back(std::move(item));
    else queue_.push_back(std::move(item));
  }
  cv_.notify_one();
  return work;
}

void XalBackend::startCoalescing() {
  std::lock_guard lock(mu_);
  TORCH_CHECK(!coalescing_, "xal: startCoalescing called twice without endCoalescing");
  coalescing_ = true;
}

c10::intrusive_ptr<c10d::Work> XalBackend::endCoalescing() {
  std::vector<Item> items;
  {
    std::lock_guard lock(mu_);
    TORCH_CHECK(coalescing_, "xal: endCoalescing called without startCoalescing");
    coalescing_ = false;
    items.swap(coalesced_);
  }
  std::vector<at::Tensor> outputs;
  for (const Item& i : items)
    for (const at::Tensor& t : i.work->result()) outputs.push_back(t);
  auto work = c10::make_intrusive<XalWork>(c10d::OpType::COALESCED, std::move(outputs), timeout_);
  {
    std::lock_guard lock(mu_);
    TORCH_CHECK(!stop_, "xal: the process group was shut down");
    queue_.push_back(
        Item{work, {}, nullptr, std::make_shared<std::vector<Item>>(std::move(items)), {}});
  }
  cv_.notify_one();
  return work;
}

std::exception_ptr XalBackend::guarded(const Fn& fn) {
  clear_thrown_status();
  try {
    fn();
    return nullptr;
  } catch (...) {
    // A device that is lost (or broken) will not join the group's next
    // calls: abort the communicator, so that the other ranks' pending and
    // later calls fail at once (ABORTED, naming this process) instead of
    // waiting for the timeout.
    const xal_status_t s = last_thrown_status();
    if (s == XAL_ERROR_DEVICE_LOST || s == XAL_ERROR_HARDWARE) xal_comm_abort(comm_);
    return std::current_exception();
  }
}

void XalBackend::worker() {
  c10::AutoGradMode no_grad(false);
  for (;;) {
    Item item;
    std::vector<Item> run;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped, and every queued call ran
      item = std::move(queue_.front());
      queue_.pop_front();
      // Sends and receives queued back to back run as one group.
      const auto groups = [](const Item& i) {
        return i.p2p && i.p2p->kind != P2pOp::Kind::kRecvAny;
      };
      if (!item.batch && groups(item))
        while (!queue_.empty() && !queue_.front().batch && groups(queue_.front())) {
          run.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
    }
    if (item.batch) {
      item.work->complete(run_items(*item.batch));
    } else {
      run.insert(run.begin(), std::move(item));
      static_cast<void>(run_items(run));
    }
  }
}

std::exception_ptr XalBackend::run_items(std::vector<Item>& items) {
  std::exception_ptr first;
  for (size_t i = 0; i < items.size();) {
    std::vector<std::exception_ptr> errors;
    size_t end = i + 1;
    // The call's place: torch's work on the caller's stream, xal's on the
    // group's stream or that stream imported (sends and receives grouped
    // with it share the first one's).
    place_ = items[i].place;
    const c10::OptionalStreamGuard on_callers_stream(place_.torch_stream);
    if (std::exception_ptr e = guarded([&] { call_stream_ = stream_at(place_); })) {
      calls_run_.fetch_add(1);
      items[i].work->complete(e);
      if (!first) first = e;
      ++i;
      continue;
    }
    if (items[i].p2p && items[i].p2p->kind != P2pOp::Kind::kRecvAny) {
      std::vector<P2pOp*> ops;
      for (end = i; end < items.size() && items[end].p2p &&
                    items[end].p2p->kind != P2pOp::Kind::kRecvAny;
           ++end)
        ops.push_back(items[end].p2p.get());
      std::exception_ptr all = guarded([&] { errors = run_p2p(ops); });
      if (all) errors.assign(ops.size(), all);
      for (size_t k = i; k < end; ++k)
        if (items[k].p2p->kind == P2pOp::Kind::kRecv && !errors[k - i])
          items[k].work->setSourceRank(items[k].p2p->peer);
    } else if (items[i].p2p) {
      Item& it = items[i];
      errors.push_back(guarded([&] { run_recv_any(*it.p2p, *it.work); }));
    } else {
      errors.push_back(guarded(items[i].fn));
    }
    for (size_t k = i; k < end; ++k) {
      calls_run_.fetch_add(1);
      items[k].work->complete(errors[k - i]);
      if (!first) first = errors[k - i];
    }
    i = end;
  }
  return first;
}

}  // namespace xal::torch_backend
