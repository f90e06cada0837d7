#include "engine.hpp"

#include <algorithm>
#include <unordered_set>

namespace xal::fault {
namespace {

// splitmix64: spreads (seed + index) over the 64 bits of the PRNG seed.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Whether a rule for `rule_device` (-1: any) matches a call on `devices`.
bool device_matches(int64_t rule_device, std::span<const int64_t> devices) {
  if (rule_device < 0) return true;
  for (const int64_t d : devices) {
    if (d == rule_device) return true;
  }
  return false;
}

// `bits` distinct bits of a buffer of `bytes` bytes (every bit once when it
// has fewer), so that no two flips cancel: Floyd's sampling, one draw per
// bit, in the order drawn.
std::vector<BitFlip> draw_flips(std::mt19937_64& rng, uint32_t bits,
                                uint64_t bytes) {
  const uint64_t total = bytes > (UINT64_MAX >> 3) ? UINT64_MAX : bytes * 8;
  const uint64_t k = std::min<uint64_t>(bits, total);
  std::vector<BitFlip> flips;
  flips.reserve(k);
  std::unordered_set<uint64_t> taken;
  for (uint64_t j = total - k; j < total; ++j) {
    uint64_t bit = std::uniform_int_distribution<uint64_t>(0, j)(rng);
    if (!taken.insert(bit).second) {  // j could not be drawn before: free
      bit = j;
      taken.insert(j);
    }
    flips.push_back(BitFlip{bit >> 3, static_cast<uint8_t>(1u << (bit & 7u))});
  }
  return flips;
}

}  // namespace

Engine::Engine() : start_(std::chrono::steady_clock::now()) {}

double Engine::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start_)
      .count();
}

void Engine::load(const Plan& plan, bool append, uint64_t seed) {
  std::lock_guard lock(mutex_);
  if (!append) rules_.clear();
  const auto now = std::chrono::steady_clock::now();
  for (const Rule& r : plan.rules) {
    const uint64_t index = rules_.size();
    rules_.push_back(State{r, std::mt19937_64(mix(seed + index)), now, 0, 0});
    // A rule without its own hang time-out takes its plan's.
    if (rules_.back().rule.timeout_ms == 0) {
      rules_.back().rule.timeout_ms = plan.timeout_ms;
    }
  }
  rebuild_index_locked();
}

void Engine::clear() {
  std::lock_guard lock(mutex_);
  rules_.clear();
  rebuild_index_locked();
}

bool Engine::set_enabled(const std::string& name, bool enabled) {
  std::lock_guard lock(mutex_);
  bool found = false;
  for (auto& s : rules_) {
    if (s.rule.name == name) {
      s.rule.enabled = enabled;
      found = true;
    }
  }
  rebuild_index_locked();
  return found;
}

size_t Engine::rule_count() const {
  std::lock_guard lock(mutex_);
  return rules_.size();
}

std::optional<RuleInfo> Engine::rule_info(size_t index) const {
  std::lock_guard lock(mutex_);
  if (index >= rules_.size()) return std::nullopt;
  const State& s = rules_[index];
  return RuleInfo{s.rule.name, s.rule.operation,
                  std::string(action_name(s.rule.action)), s.rule.enabled,
                  s.matched, s.fired};
}

void Engine::rebuild_index_locked() {
  auto snap = std::make_unique<Snapshot>();
  for (const auto& s : rules_) {
    if (!s.rule.enabled) continue;
    for (size_t op = 0; op < kOpCount; ++op) {
      if (s.rule.ops.test(op)) {
        snap->by_op[op].push_back(Filter{s.rule.device, s.rule.min_bytes,
                                         s.rule.max_bytes, s.rule.size_filter});
      }
    }
  }
  for (const auto& old : snapshots_) {
    if (old->by_op == snap->by_op) {
      snapshot_.store(old.get(), std::memory_order_release);
      return;
    }
  }
  snapshot_.store(snap.get(), std::memory_order_release);
  snapshots_.push_back(std::move(snap));
}

std::optional<Decision> Engine::decide(Op op, int64_t device,
                                       std::optional<uint64_t> bytes,
                                       uint64_t output_bytes) {
  return decide(op, std::span<const int64_t>(&device, 1), bytes, output_bytes);
}

std::optional<Decision> Engine::decide(Op op,
                                       std::span<const int64_t> devices,
                                       std::optional<uint64_t> bytes,
                                       uint64_t output_bytes) {
  const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
  const auto opi = static_cast<size_t>(op);
  const Snapshot* snap = snapshot_.load(std::memory_order_acquire);
  if (snap == nullptr) return std::nullopt;
  bool candidate = false;
  for (const Filter& f : snap->by_op[opi]) {
    if (!device_matches(f.device, devices)) continue;
    if (f.size_filter &&
        (!bytes || *bytes < f.min_bytes || *bytes > f.max_bytes)) {
      continue;
    }
    candidate = true;
    break;
  }
  if (!candidate) return std::nullopt;

  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < rules_.size(); ++i) {
    State& s = rules_[i];
    const Rule& r = s.rule;
    if (!r.enabled || !r.ops.test(opi)) continue;
    if (!device_matches(r.device, devices)) continue;
    if (r.size_filter &&
        (!bytes || *bytes < r.min_bytes || *bytes > r.max_bytes)) {
      continue;
    }
    if (r.after_ms > 0 &&
        now - s.loaded < std::chrono::milliseconds(r.after_ms)) {
      continue;
    }
    const uint64_t match = ++s.matched;
    if (s.fired >= r.count) continue;
    if (r.nth != 0 && match != r.nth) continue;
    if (r.every != 0 && match % r.every != 0) continue;
    if (r.probability < 1.0) {
      const double u = std::generate_canonical<double, 53>(s.rng);
      if (u >= r.probability) continue;
    }
    if (r.action == Action::bitflip && output_bytes == 0) continue;
    ++s.fired;
    injected_.fetch_add(1, std::memory_order_relaxed);
    Decision d;
    d.rule_index = i;
    d.rule_name = r.name;
    d.action = r.action;
    d.error = r.error;
    d.delay_ms = r.delay_ms;
    d.timeout_ms = r.timeout_ms;
    d.device = r.device >= 0 ? r.device : devices.empty() ? -1 : devices[0];
    d.call = call;
    d.match = match;
    if (r.action == Action::bitflip) d.flips = draw_flips(s.rng, r.bits, output_bytes);
    return d;
  }
  return std::nullopt;
}

}  // namespace xal::fault
