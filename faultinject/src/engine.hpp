// The rule engine: decides, for each call, whether a rule fires. Same plan,
// seed and call sequence give the same decisions: every rule has its own
// PRNG (std::mt19937_64) seeded from the plan seed and the rule's index.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "plan.hpp"

namespace xal::fault {

struct BitFlip {
  uint64_t offset;  // byte offset in the output buffer
  uint8_t mask;     // the bit to flip
};

// What a firing rule injects into one call.
struct Decision {
  size_t rule_index = 0;
  std::string rule_name;
  Action action = Action::error;
  ErrorSpec error;
  uint64_t delay_ms = 0;
  uint64_t timeout_ms = 0;     // the rule's, else its plan's; 0: neither
  std::vector<BitFlip> flips;  // bitflip: computed from the output size
  int64_t device = -1;         // the device the rule matched (-1: none)
  uint64_t call = 0;           // the backend's call number (from 1)
  uint64_t match = 0;          // the rule's match number (from 1)
};

struct RuleInfo {
  std::string name, operation, action;
  bool enabled = true;
  uint64_t matched = 0, fired = 0;
};

class Engine {
 public:
  Engine();

  // Installs `plan`'s rules (replacing or appended). `seed` seeds the PRNGs.
  // A rule without a timeout_ms gets the plan's (0 when it has none).
  void load(const Plan& plan, bool append, uint64_t seed);
  void clear();
  // False when no rule has that name. Every rule of that name changes.
  bool set_enabled(const std::string& name, bool enabled);
  size_t rule_count() const;
  std::optional<RuleInfo> rule_info(size_t index) const;
  // Counts a call that never reached the rules (sticky device).
  void note_call() { calls_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  uint64_t injected() const { return injected_.load(std::memory_order_relaxed); }

  // Counts the call and returns the decision of the first rule that fires.
  // `device` is -1 for calls without a device; `bytes` the call's size
  // (nullopt when it has none); `output_bytes` the size of the buffer that
  // bitflip may corrupt.
  std::optional<Decision> decide(Op op, int64_t device,
                                 std::optional<uint64_t> bytes,
                                 uint64_t output_bytes);
  // The same for one call on several devices (comm_create): a rule for one
  // device matches when that device is one of `devices`; the decision's
  // device is that one, or the first of `devices` for a rule for any.
  std::optional<Decision> decide(Op op, std::span<const int64_t> devices,
                                 std::optional<uint64_t> bytes,
                                 uint64_t output_bytes);

  // Milliseconds since the engine was created.
  double elapsed_ms() const;

 private:
  struct State {
    Rule rule;
    std::mt19937_64 rng;
    std::chrono::steady_clock::time_point loaded;
    uint64_t matched = 0;
    uint64_t fired = 0;
  };
  // The static filters (device, size) of the enabled rules, per operation:
  // a call that passes none of them skips the lock. Published by pointer;
  // old snapshots are kept until the engine goes (plans change
  // rarely; an identical snapshot is reused, so toggling rules does not
  // grow memory).
  struct Filter {
    int64_t device;
    uint64_t min_bytes, max_bytes;
    bool size_filter;
    bool operator==(const Filter&) const = default;
  };
  struct Snapshot {
    std::array<std::vector<Filter>, kOpCount> by_op;
  };
  void rebuild_index_locked();

  mutable std::mutex mutex_;
  std::vector<State> rules_;
  std::vector<std::unique_ptr<Snapshot>> snapshots_;
  std::atomic<const Snapshot*> snapshot_{nullptr};
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> injected_{0};
  std::chrono::steady_clock::time_point start_;
};

}  // namespace xal::fault
