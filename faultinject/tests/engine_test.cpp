// Rule timing: nth, every, count, probability determinism, size filters,
// after, device filter, enable/disable and the order of rules.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "engine.hpp"

namespace xal::fault {
namespace {

Plan compact(const std::string& text) {
  return parse_plan_compact(text, "XAL_FAULTS");
}

// Calls `op` n times and returns the 1-based numbers of the calls that fired.
std::vector<uint64_t> fired_calls(Engine& e, Op op, int n, int64_t device = 0,
                                  std::optional<uint64_t> bytes = 64) {
  std::vector<uint64_t> out;
  for (int i = 1; i <= n; ++i) {
    if (e.decide(op, device, bytes, bytes.value_or(0))) out.push_back(i);
  }
  return out;
}

TEST(Engine, Nth) {
  Engine e;
  e.load(compact("mem_alloc=nth(3)OUT_OF_MEMORY"), false, 0);
  EXPECT_EQ(fired_calls(e, Op::mem_alloc, 10), (std::vector<uint64_t>{3}));
  EXPECT_EQ(e.injected(), 1u);
  EXPECT_EQ(e.calls(), 10u);
  const auto info = e.rule_info(0);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->matched, 10u);
  EXPECT_EQ(info->fired, 1u);
}

TEST(Engine, EveryAndCount) {
  Engine e;
  e.load(compact("memset=every(3)2*TIMEOUT"), false, 0);
  EXPECT_EQ(fired_calls(e, Op::memset, 20), (std::vector<uint64_t>{3, 6}));
}

TEST(Engine, OtherOperationsDoNotMatch) {
  Engine e;
  e.load(compact("mem_alloc=TIMEOUT"), false, 0);
  EXPECT_TRUE(fired_calls(e, Op::mem_free, 5).empty());
  EXPECT_EQ(e.rule_info(0)->matched, 0u);
  EXPECT_EQ(fired_calls(e, Op::mem_alloc, 2).size(), 2u);
}

TEST(Engine, GlobMatchesSeveralOperations) {
  Engine e;
  e.load(compact("memcpy_*=TIMEOUT"), false, 0);
  EXPECT_TRUE(e.decide(Op::memcpy_htod, 0, 1, 1));
  EXPECT_TRUE(e.decide(Op::memcpy_peer, 0, 1, 1));
  EXPECT_FALSE(e.decide(Op::memset, 0, 1, 1));
}

TEST(Engine, DeviceFilter) {
  Engine e;
  e.load(compact("mem_alloc=device(1)TIMEOUT"), false, 0);
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, 8, 0));
  EXPECT_FALSE(e.decide(Op::mem_alloc, -1, 8, 0));
  EXPECT_TRUE(e.decide(Op::mem_alloc, 1, 8, 0));
}

TEST(Engine, SizeFilter) {
  Engine e;
  e.load(compact("mem_alloc=min(1KiB)max(4KiB)TIMEOUT"), false, 0);
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, 1023, 0));
  EXPECT_TRUE(e.decide(Op::mem_alloc, 0, 1024, 0));
  EXPECT_TRUE(e.decide(Op::mem_alloc, 0, 4096, 0));
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, 4097, 0));
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, std::nullopt, 0));
  EXPECT_EQ(e.rule_info(0)->matched, 2u);  // only calls inside the range
}

TEST(Engine, ProbabilityIsDeterministic) {
  auto run = [](uint64_t seed) {
    Engine e;
    e.load(compact("memcpy_htod=30%TIMEOUT"), false, seed);
    return fired_calls(e, Op::memcpy_htod, 2000);
  };
  const auto a = run(42);
  const auto b = run(42);
  const auto c = run(43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Roughly 30% fire (2000 draws: far from 0 and from all).
  EXPECT_GT(a.size(), 450u);
  EXPECT_LT(a.size(), 750u);
}

TEST(Engine, RulesHaveIndependentStreams) {
  // Adding a rule for another operation does not change the draws of the
  // first rule.
  Engine one, two;
  one.load(compact("memset=50%TIMEOUT"), false, 5);
  two.load(compact("memset=50%TIMEOUT;mem_alloc=50%TIMEOUT"), false, 5);
  std::vector<uint64_t> a, b;
  for (int i = 1; i <= 200; ++i) {
    if (one.decide(Op::memset, 0, 8, 8)) a.push_back(i);
    two.decide(Op::mem_alloc, 0, 8, 0);
    if (two.decide(Op::memset, 0, 8, 8)) b.push_back(i);
  }
  EXPECT_EQ(a, b);
}

TEST(Engine, After) {
  Engine e;
  e.load(compact("memset=after(60)TIMEOUT"), false, 0);
  EXPECT_FALSE(e.decide(Op::memset, 0, 8, 8));
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_TRUE(e.decide(Op::memset, 0, 8, 8));
}

TEST(Engine, FirstFiringRuleWins) {
  Engine e;
  e.load(compact("mem_alloc=nth(2)TIMEOUT;mem_*=OUT_OF_MEMORY"), false, 0);
  auto d1 = e.decide(Op::mem_alloc, 0, 8, 0);
  ASSERT_TRUE(d1);
  EXPECT_EQ(d1->rule_index, 1u);
  auto d2 = e.decide(Op::mem_alloc, 0, 8, 0);
  ASSERT_TRUE(d2);
  EXPECT_EQ(d2->rule_index, 0u);
  EXPECT_EQ(d2->error.status, XAL_ERROR_TIMEOUT);
  EXPECT_EQ(d2->call, 2u);
  EXPECT_EQ(d2->match, 2u);
}

TEST(Engine, EnableDisableClearAppend) {
  Engine e;
  e.load(compact("mem_alloc=name(a)TIMEOUT"), false, 0);
  EXPECT_TRUE(e.set_enabled("a", false));
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, 8, 0));
  EXPECT_FALSE(e.set_enabled("nope", false));
  EXPECT_TRUE(e.set_enabled("a", true));
  EXPECT_TRUE(e.decide(Op::mem_alloc, 0, 8, 0));
  e.load(parse_plan_compact("memset=TIMEOUT", "x", 1), true, 0);
  EXPECT_EQ(e.rule_count(), 2u);
  EXPECT_EQ(e.rule_info(1)->name, "rule1");
  e.clear();
  EXPECT_EQ(e.rule_count(), 0u);
  EXPECT_FALSE(e.decide(Op::mem_alloc, 0, 8, 0));
  EXPECT_EQ(e.calls(), 3u);  // counters survive clear
}

TEST(Engine, BitflipOffsetsInsideTheBuffer) {
  Engine e;
  e.load(compact("memcpy_dtoh=bitflip(16)"), false, 3);
  const auto d = e.decide(Op::memcpy_dtoh, 0, 10, 10);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->flips.size(), 16u);
  for (const auto& f : d->flips) {
    EXPECT_LT(f.offset, 10u);
    EXPECT_NE(f.mask, 0);
    EXPECT_EQ(f.mask & (f.mask - 1), 0);  // one bit
  }
}

// Two flips of one bit would cancel: the bits of one decision are distinct,
// whatever the seed, and a buffer with fewer bits has each flipped once.
TEST(Engine, BitflipsNeverCancel) {
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Engine e;
    e.load(compact("memset=bitflip(2);memcpy_dtoh=bitflip(9)"), false, seed);
    const auto two = e.decide(Op::memset, 0, 1, 1);
    ASSERT_TRUE(two);
    ASSERT_EQ(two->flips.size(), 2u);
    EXPECT_EQ(two->flips[0].offset, 0u);
    EXPECT_EQ(two->flips[1].offset, 0u);
    EXPECT_NE(two->flips[0].mask, two->flips[1].mask) << "seed " << seed;
    const auto all = e.decide(Op::memcpy_dtoh, 0, 1, 1);
    ASSERT_TRUE(all);
    uint8_t flipped = 0;
    for (const auto& f : all->flips) flipped ^= f.mask;
    EXPECT_EQ(all->flips.size(), 8u);
    EXPECT_EQ(flipped, 0xff) << "seed " << seed;
  }
}

TEST(Engine, HangTimeOutOfTheRuleElseOfItsPlan) {
  Engine e;
  e.load(compact("timeout=50;allreduce=nth(1)hang;broadcast=nth(1)hang(7)"),
         false, 0);
  // A plan loaded later keeps its own time-out; one without leaves 0.
  e.load(parse_plan_compact("timeout=80;reduce=hang", "x", 2), true, 0);
  e.load(parse_plan_compact("allgather=hang", "x", 3), true, 0);
  const auto timeout = [&](Op op) {
    const auto d = e.decide(op, 0, 64, 64);
    return d ? d->timeout_ms : ~uint64_t{0};
  };
  EXPECT_EQ(timeout(Op::allreduce), 50u);
  EXPECT_EQ(timeout(Op::broadcast), 7u);
  EXPECT_EQ(timeout(Op::reduce), 80u);
  EXPECT_EQ(timeout(Op::allgather), 0u);
}

TEST(Engine, ConcurrentCallsCountExactly) {
  Engine e;
  e.load(compact("mem_alloc=every(10)TIMEOUT"), false, 0);
  std::vector<std::thread> threads;
  std::atomic<int> fired{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (e.decide(Op::mem_alloc, 0, 8, 0)) ++fired;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fired.load(), 400);
  EXPECT_EQ(e.rule_info(0)->matched, 4000u);
}

}  // namespace
}  // namespace xal::fault
