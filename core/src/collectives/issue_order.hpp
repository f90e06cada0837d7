// One rank's collectives kept in the order they were issued, whichever
// streams of its device they are queued on (the core's paths: hierarchical
// and across processes).
//
// A call's part runs as host functions on the caller's stream. Calls of a
// rank on one stream are ordered by the stream; calls on two streams would
// run at once, meet their peers out of order and share the rank's staging
// buffers. So each call takes a Turn, numbered in issue order (the
// caller's order, or xal_group_end's), and keeps it until its work is over:
// whatever holds the Turn (the call's shared state, or a host function
// queued after the call's work) is destroyed then. A call queued on
// another stream than the rank's previous call while earlier calls are
// unfinished is preceded on its stream by a gate: a host function that
// waits until every earlier call of the rank has finished. Calls on one
// stream need no gate.
//
// The gate waits as long as the earlier calls make progress (one of them
// finishes at least every `limit`, counted from when the gate starts
// waiting): a long call is not cut short. Past that (the caller made the
// earlier call's stream wait for this one, say) it gives up: the stream
// reports TIMEOUT and `on_stuck` breaks the communicator. It also stops
// waiting once `broken` says the communicator is broken: the call's own
// work then fails.
//
// Thread-safe: begin() on the issuing thread (one at a time per rank, as
// for every call of one communicator); Turns end and gates wait on any
// thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "../error.hpp"
#include "../stream_failures.hpp"
#include "xal/xal_backend.h"

namespace xal::core {

class IssueOrder {
 public:
  using Clock = std::chrono::steady_clock;
  // How often a waiting host function looks at `broken`.
  static constexpr std::chrono::milliseconds kPoll{100};

  struct Hooks {
    std::chrono::milliseconds limit{0};
    std::function<bool()> broken;                      // the communicator is broken
    std::function<void(const std::string&)> on_stuck;  // breaks it with TIMEOUT
  };

 private:
  struct State {
    explicit State(Hooks h) : hooks(std::move(h)) {}
    const Hooks hooks;
    std::mutex mu;
    std::condition_variable cv;
    uint64_t finished = 0;     // calls [0, finished) are over
    std::set<uint64_t> early;  // over before an earlier one (a gate gave up)
    Clock::time_point progress_at = Clock::now();  // when `finished` last grew

    void finish(uint64_t n) noexcept {
      std::lock_guard lock(mu);
      if (n < finished) return;
      if (n > finished) {
        try {
          early.insert(n);
        } catch (...) {
          // Out of memory: the gates of later calls wait until their limit.
        }
        return;
      }
      for (++finished; !early.empty() && *early.begin() == finished; ++finished)
        early.erase(early.begin());
      progress_at = Clock::now();
      cv.notify_all();
    }

    // The gate of call `n` on `stream` (`what`: its collective's name).
    void wait_turn(uint64_t n, xal_bstream_t* stream, const char* what) {
      std::unique_lock lock(mu);
      const Clock::time_point began = Clock::now();
      while (finished < n) {
        if (hooks.broken && hooks.broken()) return;
        const Clock::time_point deadline = std::max(began, progress_at) + hooks.limit;
        const Clock::time_point now = Clock::now();
        if (now >= deadline) {
          lock.unlock();
          const std::string m =
              cat(what, ": the rank's earlier collective, queued on another stream, made no ",
                  "progress for ", hooks.limit.count(), " ms (does its stream wait for this ",
                  "one?); the communicator is broken");
          note_stream_failure(stream, XAL_ERROR_TIMEOUT, m);
          if (hooks.on_stuck) hooks.on_stuck(m);
          return;
        }
        cv.wait_until(lock, std::min(deadline, now + kPoll));
      }
    }
  };

 public:
  // Marks its call over when destroyed; an empty Turn does nothing.
  class Turn {
   public:
    Turn() = default;
    Turn(Turn&& o) noexcept = default;
    Turn& operator=(Turn&& o) noexcept {
      if (this != &o) {
        reset();
        state_ = std::move(o.state_);
        n_ = o.n_;
      }
      return *this;
    }
    ~Turn() { reset(); }
    void reset() noexcept {
      if (state_) state_->finish(n_);
      state_.reset();
    }

   private:
    friend class IssueOrder;
    Turn(std::shared_ptr<State> s, uint64_t n) : state_(std::move(s)), n_(n) {}
    std::shared_ptr<State> state_;
    uint64_t n_ = 0;
  };

  explicit IssueOrder(Hooks hooks) : state_(std::make_shared<State>(std::move(hooks))) {}

  // Numbers the rank's next call, about to be queued on `stream`, into
  // `out`, and queues its gate when it needs one. An error (the detail
  // left by the backend) when the gate cannot be queued; `out` is then
  // still the call's Turn, to drop.
  xal_status_t begin(const xal_backend_table_t* t, xal_bstream_t* stream, const char* what,
                     Turn* out) {
    uint64_t n;
    bool pending;
    {
      std::lock_guard lock(state_->mu);
      n = next_++;
      pending = state_->finished < n;
    }
    const bool other = last_stream_ != stream;
    last_stream_ = stream;
    *out = Turn(state_, n);
    if (!other || !pending || !t->stream_enqueue_host_func) return XAL_SUCCESS;
    auto gate = std::make_unique<Gate>(Gate{state_, n, stream, what});
    const xal_status_t s = t->stream_enqueue_host_func(stream, &run_gate, gate.get());
    if (s == XAL_SUCCESS) static_cast<void>(gate.release());  // owned by run_gate
    return s;
  }

  // Queues a host function on `stream` that ends `turn` (after the work
  // queued there before it); ends it now when that cannot be queued.
  static void finish_on_stream(const xal_backend_table_t* t, xal_bstream_t* stream,
                               Turn turn) {
    if (!t->stream_enqueue_host_func) return;
    auto held = std::make_unique<Turn>(std::move(turn));
    if (t->stream_enqueue_host_func(stream, &end_turn, held.get()) == XAL_SUCCESS)
      static_cast<void>(held.release());
    else
      clear_pending();
  }

 private:
  struct Gate {
    std::shared_ptr<State> state;
    uint64_t n;
    xal_bstream_t* stream;
    const char* what;  // a string literal
  };
  static void run_gate(void* user) noexcept {
    std::unique_ptr<Gate> g(static_cast<Gate*>(user));
    try {
      g->state->wait_turn(g->n, g->stream, g->what);
    } catch (...) {
      // A failed wait lets the call run: its own steps report.
    }
  }
  static void end_turn(void* user) noexcept { std::unique_ptr<Turn> t(static_cast<Turn*>(user)); }

  std::shared_ptr<State> state_;
  xal_bstream_t* last_stream_ = nullptr;  // of the rank's previous call
  uint64_t next_ = 0;
};

}  // namespace xal::core
