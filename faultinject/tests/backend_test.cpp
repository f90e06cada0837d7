// The fault plugin through its own table, over a fake target (no core):
// wrapping, refusals, the control extension, determinism, fallbacks.
#include <set>
#include <thread>

#include "backend_fixture.hpp"

namespace xal::fault::testing {
namespace {

TEST_F(FaultBackendTest, WrapsTheTarget) {
  ASSERT_EQ(start(""), XAL_SUCCESS);
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(t->describe(b, &d), XAL_SUCCESS);
  EXPECT_STREQ(d.name, "fault(fake)");
  EXPECT_EQ(d.flags, XAL_BACKEND_FLAG_WRAPPER | XAL_BACKEND_FLAG_SIMULATED);
  uint32_t n = 0;
  ASSERT_EQ(t->device_count(b, &n), XAL_SUCCESS);
  EXPECT_EQ(n, 2u);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(t->device_get_properties(dev(0), &p), XAL_SUCCESS);
  EXPECT_STREQ(p.name, "Fake device");
  // A round trip with no rule.
  xal_devptr_t ptr = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 64, &ptr), XAL_SUCCESS);
  auto* s = stream(dev(0));
  std::vector<uint8_t> in(64, 0x5a), out(64, 0);
  ASSERT_EQ(t->memcpy_htod(s, ptr, in.data(), 64), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), ptr, 64), XAL_SUCCESS);
  ASSERT_EQ(t->stream_synchronize(s), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), ptr), XAL_SUCCESS);
  EXPECT_TRUE(log_lines().empty());
}

TEST_F(FaultBackendTest, MissingTargetIsReported) {
  EXPECT_EQ(start("", "nosuchbackend"), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(last_error().message.find(
                "fault: target backend 'nosuchbackend' could not be loaded"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(start("", "fault"), XAL_ERROR_BACKEND_UNAVAILABLE);
}

TEST_F(FaultBackendTest, TargetFromThePlan) {
  const std::string path = ::testing::TempDir() + "/fault_target_plan.json";
  {
    std::ofstream out(path);
    out << R"({"target": "fake", "rules": []})";
  }
  config()["XAL_FAULT_PLAN"] = path;
  EXPECT_EQ(start(nullptr, nullptr), XAL_SUCCESS);
  stop();
  {
    std::ofstream out(path);
    out << R"({"target": "elsewhere", "rules": []})";
  }
  EXPECT_EQ(start(nullptr, nullptr), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().message.find("'elsewhere'"), std::string::npos);
  std::remove(path.c_str());
}

TEST_F(FaultBackendTest, BadPlansAreRefusedAtInit) {
  const std::string path = ::testing::TempDir() + "/fault_bad_plan.json";
  {
    std::ofstream out(path);
    out << R"({"rules": [{"name": "r", "operation": "mem_alloc",
               "error": "OUT_OF_MEMORY", "probability": 7}]})";
  }
  config()["XAL_FAULT_PLAN"] = path;
  EXPECT_EQ(start(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find(path + ": rule 0 ('r'): probability"),
            std::string::npos)
      << last_error().message;
  config().clear();
  EXPECT_EQ(start("mem_alloc=device(2)TIMEOUT"), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("device 2 does not exist"),
            std::string::npos);
  EXPECT_EQ(start("mem_alloc=WHAT"), XAL_ERROR_INVALID_ARGUMENT);
  config()["XAL_FAULT_SEED"] = "x";
  EXPECT_EQ(start(""), XAL_ERROR_INVALID_ARGUMENT);
  config().erase("XAL_FAULT_SEED");
  config()["XAL_FAULT_LOG"] = "/no/such/dir/log";
  xal_backend_init_args_t args{sizeof args, services(), "fake"};
  EXPECT_EQ(t->init(&args, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b, nullptr);
}

// nlohmann's out_of_range (a number beyond a double) is a refused plan too:
// INVALID_ARGUMENT naming the file, and the start_failed log line.
TEST_F(FaultBackendTest, PlanNumberBeyondADoubleIsRefusedAndLogged) {
  const std::string path = ::testing::TempDir() + "/fault_huge_seed.json";
  {
    std::ofstream out(path);
    out << R"({"seed": 1e400, "rules": []})";
  }
  config()["XAL_FAULT_PLAN"] = path;
  EXPECT_EQ(start(nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find(path + ": invalid JSON"), std::string::npos)
      << last_error().message;
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["event"], "start_failed");
  EXPECT_EQ(lines[0]["status"], "XAL_ERROR_INVALID_ARGUMENT");
  std::remove(path.c_str());
}

// A destroy that failed has not released the object (xal_backend.h,
// "Releases"): the core retries with the same handle, which must still
// reach the same target object.
TEST_F(FaultBackendTest, FailedDestroyKeepsTheObjectForTheRetry) {
  ASSERT_EQ(start(""), XAL_SUCCESS);
  auto* s = stream(dev(0));
  const int streams = fake_stream_destroys();
  fail_next_destroys(1);
  EXPECT_EQ(t->stream_destroy(s), XAL_ERROR_BACKEND);
  const void* native = fake_last_destroyed();
  EXPECT_EQ(t->stream_destroy(s), XAL_SUCCESS);
  EXPECT_EQ(fake_last_destroyed(), native);
  EXPECT_EQ(fake_stream_destroys(), streams + 1);

  xal_bevent_t* e = nullptr;
  ASSERT_EQ(t->event_create(dev(1), 0, &e), XAL_SUCCESS);
  const int events = fake_event_destroys();
  fail_next_destroys(1);
  EXPECT_EQ(t->event_destroy(e), XAL_ERROR_BACKEND);
  native = fake_last_destroyed();
  EXPECT_EQ(t->event_destroy(e), XAL_SUCCESS);
  EXPECT_EQ(fake_last_destroyed(), native);
  EXPECT_EQ(fake_event_destroys(), events + 1);
}

// The core forgets host memory and communicators whatever their release
// returns: an injected error is returned, but they are released.
TEST_F(FaultBackendTest, InjectedErrorStillReleasesWhatTheCoreForgets) {
  use_fake(FakeKind::queued);  // the fake with host_alloc
  ASSERT_EQ(start("host_free=nth(1)BACKEND;comm_destroy=nth(1)BACKEND"),
            XAL_SUCCESS);
  const int allocations = fake_host_allocations();
  void* h = nullptr;
  ASSERT_EQ(t->host_alloc(b, 64, 0, &h), XAL_SUCCESS);
  EXPECT_EQ(fake_host_allocations(), allocations + 1);
  EXPECT_EQ(t->host_free(b, h), XAL_ERROR_BACKEND);
  EXPECT_EQ(fake_host_allocations(), allocations);
  xal_bdevice_t* devs[2] = {dev(0), dev(1)};
  xal_bcomm_t* comms[2] = {};
  ASSERT_EQ(t->comm_create(devs, 2, nullptr, comms), XAL_SUCCESS);
  const int released = fake_comm_destroys();
  EXPECT_EQ(t->comm_destroy(comms[0]), XAL_ERROR_BACKEND);
  EXPECT_EQ(fake_comm_destroys(), released + 1);
  EXPECT_EQ(t->comm_destroy(comms[1]), XAL_SUCCESS);
  EXPECT_EQ(fake_comm_destroys(), released + 2);
}

// Default names of appended rules count the rules already loaded: two
// threads appending at once never give two rules one name.
TEST_F(FaultBackendTest, ConcurrentAppendsGetUniqueNames) {
  ASSERT_EQ(start(""), XAL_SUCCESS);
  constexpr int kPerThread = 200;
  auto append = [&] {
    for (int i = 0; i < kPerThread; ++i) {
      EXPECT_EQ(control()->load_plan(b, "mem_alloc=nth(1000000)delay(1)",
                                     XAL_FAULT_PLAN_APPEND),
                XAL_SUCCESS);
    }
  };
  std::thread other(append);
  append();
  other.join();
  uint32_t n = 0;
  ASSERT_EQ(control()->rule_count(b, &n), XAL_SUCCESS);
  ASSERT_EQ(n, 2u * kPerThread);
  std::set<std::string> names;
  for (uint32_t i = 0; i < n; ++i) {
    xal_fault_rule_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(control()->rule_get_info(b, i, &info), XAL_SUCCESS);
    names.insert(info.name);
  }
  EXPECT_EQ(names.size(), n);
}

TEST_F(FaultBackendTest, ControlExtension) {
  ASSERT_EQ(start(""), XAL_SUCCESS);
  const auto* c = control();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(t->get_extension(b, "other"), nullptr);
  uint32_t n = 99;
  ASSERT_EQ(c->rule_count(b, &n), XAL_SUCCESS);
  EXPECT_EQ(n, 0u);
  ASSERT_EQ(c->load_plan(b, "mem_alloc=name(oom)OUT_OF_MEMORY", 0), XAL_SUCCESS);
  ASSERT_EQ(c->load_plan(b,
                         R"({"rules": [{"name": "slow", "operation": "memset",
                             "action": "delay", "delay_ms": 1}]})",
                         XAL_FAULT_PLAN_APPEND),
            XAL_SUCCESS);
  ASSERT_EQ(c->rule_count(b, &n), XAL_SUCCESS);
  EXPECT_EQ(n, 2u);
  // A bad plan changes nothing.
  EXPECT_EQ(c->load_plan(b, "mem_alloc=BOGUS", 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("unknown error name 'BOGUS'"),
            std::string::npos);
  EXPECT_EQ(c->load_plan(b, nullptr, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->load_plan(b, "mem_alloc=TIMEOUT", 0x80), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(c->rule_count(b, &n), XAL_SUCCESS);
  EXPECT_EQ(n, 2u);

  xal_devptr_t p = 0;
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(c->set_rule_enabled(b, "oom", 0), XAL_SUCCESS);
  EXPECT_EQ(c->set_rule_enabled(b, "nope", 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->set_rule_enabled(b, nullptr, 0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);

  xal_fault_rule_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(c->rule_get_info(b, 0, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, "oom");
  EXPECT_STREQ(info.operation, "mem_alloc");
  EXPECT_STREQ(info.action, "error");
  EXPECT_EQ(info.enabled, 0);
  EXPECT_EQ(info.matched, 1u);
  EXPECT_EQ(info.fired, 1u);
  ASSERT_EQ(c->rule_get_info(b, 1, &info), XAL_SUCCESS);
  EXPECT_STREQ(info.name, "slow");
  EXPECT_STREQ(info.action, "delay");
  EXPECT_EQ(c->rule_get_info(b, 2, &info), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->rule_get_info(b, 0, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  info.struct_size = 4;
  EXPECT_EQ(c->rule_get_info(b, 0, &info), XAL_ERROR_INVALID_ARGUMENT);

  xal_fault_counters_t counters{};
  counters.struct_size = sizeof counters;
  ASSERT_EQ(c->get_counters(b, &counters), XAL_SUCCESS);
  EXPECT_EQ(counters.injected, 1u);
  EXPECT_GE(counters.calls, 3u);
  EXPECT_EQ(c->get_counters(b, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(c->clear(b), XAL_SUCCESS);
  ASSERT_EQ(c->rule_count(b, &n), XAL_SUCCESS);
  EXPECT_EQ(n, 0u);
}

TEST_F(FaultBackendTest, SameSeedSameFaults) {
  auto run = [&](const char* seed) {
    config()["XAL_FAULT_SEED"] = seed;
    std::remove(log_path.c_str());
    EXPECT_EQ(start("mem_alloc=20%OUT_OF_MEMORY;memset=10%bitflip(2)"),
              XAL_SUCCESS);
    auto* s = stream(dev(0));
    std::vector<int> seen;
    for (int i = 0; i < 200; ++i) {
      xal_devptr_t p = 0;
      const auto st = t->mem_alloc(dev(i % 2), 32, &p);
      seen.push_back(st);
      if (st == XAL_SUCCESS && i % 2 == 0) {
        t->memset(s, p, 0, 32);
        t->stream_synchronize(s);
      }
      if (st == XAL_SUCCESS) t->mem_free(dev(i % 2), p);
    }
    t->stream_destroy(s);
    stop();
    std::vector<std::string> lines;
    for (auto l : log_lines()) {
      l.erase("time_ms");
      lines.push_back(l.dump());
    }
    return std::make_pair(seen, lines);
  };
  const auto a = run("11");
  const auto b2 = run("11");
  const auto c = run("12");
  EXPECT_EQ(a, b2);
  EXPECT_FALSE(a.second.empty());
  EXPECT_NE(a.second, c.second);
}

TEST_F(FaultBackendTest, MinimalTargetFallbacks) {
  use_minimal_fake(true);
  ASSERT_EQ(start(""), XAL_SUCCESS);
  void* h = nullptr;
  ASSERT_EQ(t->host_alloc(b, 8192, 0, &h), XAL_SUCCESS);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(t->host_register(b, h, 8192), XAL_SUCCESS);
  EXPECT_EQ(t->host_unregister(b, h), XAL_SUCCESS);
  EXPECT_EQ(t->host_free(b, h), XAL_SUCCESS);
  int x = 0;
  EXPECT_EQ(t->host_free(b, &x), XAL_ERROR_INVALID_ARGUMENT);
  auto* s = stream(dev(0));
  int called = 0;
  EXPECT_EQ(t->stream_enqueue_host_func(
                s, [](void* u) { ++*static_cast<int*>(u); }, &called),
            XAL_SUCCESS);
  EXPECT_EQ(called, 1);
  // Peer copy staged through host memory.
  xal_devptr_t a = 0, d = 0;
  ASSERT_EQ(t->mem_alloc(dev(0), 100, &a), XAL_SUCCESS);
  ASSERT_EQ(t->mem_alloc(dev(1), 100, &d), XAL_SUCCESS);
  std::vector<uint8_t> in(100, 0x33), out(100, 0);
  ASSERT_EQ(t->memcpy_htod(s, a, in.data(), 100), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_peer(s, dev(1), d, dev(0), a, 100), XAL_SUCCESS);
  ASSERT_EQ(t->memcpy_dtoh(s, out.data(), d, 100), XAL_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(t->device_ptr_to_host(dev(0), a, 100), nullptr);
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  EXPECT_EQ(t->device_get_metrics(dev(0), &m), XAL_SUCCESS);
  EXPECT_TRUE(m.valid & XAL_METRIC_HEALTH);
  xal_bmodule_t* mod = nullptr;
  EXPECT_EQ(t->module_load(dev(0), XAL_MODULE_FORMAT_NATIVE, "x", 1, &mod),
            XAL_ERROR_NOT_SUPPORTED);
  xal_bdevice_t* devs[2] = {dev(0), dev(1)};
  xal_bcomm_t* comms[2] = {};
  EXPECT_EQ(t->comm_create(devs, 2, nullptr, comms), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("does not support collectives"),
            std::string::npos);
  EXPECT_EQ(t->group_start(b), XAL_SUCCESS);
  EXPECT_EQ(t->group_end(b), XAL_SUCCESS);
  // Reset without a target reset still clears the fault state.
  EXPECT_EQ(t->device_reset(dev(0)), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(1), d), XAL_SUCCESS);
}

TEST_F(FaultBackendTest, RuleNameThatIsNotUtf8IsLogged) {
  ASSERT_EQ(start("mem_alloc=name(\xff)delay(1)"), XAL_SUCCESS);
  xal_devptr_t p = 0;
  EXPECT_EQ(t->mem_alloc(dev(0), 8, &p), XAL_SUCCESS);
  EXPECT_EQ(t->mem_free(dev(0), p), XAL_SUCCESS);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["rule"], "\xef\xbf\xbd");  // U+FFFD
}

TEST_F(FaultBackendTest, ConcurrentCallsAreSafe) {
  ASSERT_EQ(start("mem_alloc=every(7)OUT_OF_MEMORY;memset=every(5)delay(1)"),
            XAL_SUCCESS);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      auto* d = dev(k % 2);
      xal_bstream_t* s = nullptr;
      t->stream_create(d, 0, &s);
      for (int i = 0; i < 100; ++i) {
        xal_devptr_t p = 0;
        if (t->mem_alloc(d, 64, &p) != XAL_SUCCESS) {
          ++failures;
          continue;
        }
        t->memset(s, p, 1, 64);
        t->stream_synchronize(s);
        t->mem_free(d, p);
      }
      t->stream_destroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 400 / 7);
  EXPECT_EQ(log_lines().size(), static_cast<size_t>(400 / 7 + (400 - 400 / 7) / 5));
}


// The table is made to cover the entry list (xal_backend.h): every function
// entry has a wrapper, so a new entry cannot be left out.
TEST_F(FaultBackendTest, EveryEntryOfTheListIsWrapped) {
  std::vector<std::string> missing;
  size_t wrapped = 0;
#define XAL_FAULT_TEST_ENTRY(name, presence, minor)             \
  if (presence != XAL_ENTRY_DATA) {                             \
    if (t->name == nullptr) missing.push_back(#name);           \
    else ++wrapped;                                             \
  }
  XAL_BACKEND_ENTRIES(XAL_FAULT_TEST_ENTRY)
#undef XAL_FAULT_TEST_ENTRY
  EXPECT_TRUE(missing.empty()) << "not wrapped: " << ::testing::PrintToString(missing);
  EXPECT_GE(wrapped, 50u);
  EXPECT_EQ(t->abi_minor, static_cast<uint32_t>(XAL_ABI_VERSION_MINOR));
  EXPECT_EQ(t->struct_size, sizeof(xal_backend_table_t));
}

}  // namespace
}  // namespace xal::fault::testing
