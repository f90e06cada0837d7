// Plan parsing: JSON and compact syntax, and every kind of malformed plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "plan.hpp"
#include "profiles.hpp"

namespace xal::fault {
namespace {

std::string refusal_json(const std::string& text) {
  try {
    parse_plan_json(text, "plan.json");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

std::string refusal_compact(const std::string& text) {
  try {
    parse_plan_compact(text, "XAL_FAULTS");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanJson, FullRule) {
  const Plan p = parse_plan_json(R"({
    "target": "mock", "seed": 7, "profile": "cuda", "timeout_ms": 500,
    "rules": [
      {"name": "oom", "operation": "mem_alloc", "device": 1, "nth": 3,
       "count": 2, "min_bytes": "1KiB", "max_bytes": 4096,
       "error": "OUT_OF_MEMORY"},
      {"operation": "memcpy_*", "action": "bitflip", "bits": 3,
       "probability": 0.25},
      {"operation": "kernel_launch", "error": "cuda:CUDA_ERROR_ILLEGAL_ADDRESS"},
      {"operation": "allreduce", "action": "hang", "timeout_ms": 50},
      {"operation": "*", "action": "device_lost", "after_ms": 10,
       "device": "*"},
      {"operation": "memset", "action": "async_error",
       "error": "hipErrorLaunchFailure", "sticky": false},
      {"operation": "stream_synchronize", "action": "delay", "delay_ms": 2,
       "every": 4, "enabled": false}
    ]})",
                                 "plan.json");
  EXPECT_EQ(p.target, "mock");
  EXPECT_EQ(p.seed, 7u);
  EXPECT_EQ(p.timeout_ms, 500u);
  ASSERT_EQ(p.rules.size(), 7u);
  const Rule& oom = p.rules[0];
  EXPECT_EQ(oom.name, "oom");
  EXPECT_EQ(oom.device, 1);
  EXPECT_EQ(oom.nth, 3u);
  EXPECT_EQ(oom.count, 2u);
  EXPECT_TRUE(oom.size_filter);
  EXPECT_EQ(oom.min_bytes, 1024u);
  EXPECT_EQ(oom.max_bytes, 4096u);
  EXPECT_EQ(oom.error.status, XAL_ERROR_OUT_OF_MEMORY);
  // The plan's profile gives a plain status its vendor code.
  EXPECT_EQ(oom.error.vendor_code, 2);
  EXPECT_EQ(oom.error.vendor_name, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_FALSE(oom.error.sticky);
  EXPECT_TRUE(oom.ops.test(static_cast<size_t>(Op::mem_alloc)));
  EXPECT_EQ(oom.ops.count(), 1u);

  EXPECT_EQ(p.rules[1].name, "rule1");
  EXPECT_EQ(p.rules[1].action, Action::bitflip);
  EXPECT_EQ(p.rules[1].bits, 3u);
  EXPECT_DOUBLE_EQ(p.rules[1].probability, 0.25);
  EXPECT_EQ(p.rules[1].ops.count(), 4u);  // htod dtoh dtod peer

  EXPECT_EQ(p.rules[2].error.vendor_code, 700);
  EXPECT_EQ(p.rules[2].error.status, XAL_ERROR_DEVICE_LOST);
  EXPECT_TRUE(p.rules[2].error.sticky);

  EXPECT_EQ(p.rules[3].action, Action::hang);
  EXPECT_EQ(p.rules[3].timeout_ms, 50u);
  EXPECT_EQ(p.rules[3].error.status, XAL_ERROR_TIMEOUT);

  EXPECT_EQ(p.rules[4].action, Action::device_lost);
  EXPECT_EQ(p.rules[4].error.status, XAL_ERROR_DEVICE_LOST);
  EXPECT_TRUE(p.rules[4].error.sticky);
  EXPECT_EQ(p.rules[4].after_ms, 10u);
  EXPECT_EQ(p.rules[4].device, -1);

  EXPECT_EQ(p.rules[5].error.vendor_code, 719);
  EXPECT_FALSE(p.rules[5].error.sticky);  // explicit override
  EXPECT_FALSE(p.rules[6].enabled);
  EXPECT_EQ(p.rules[6].every, 4u);
}

TEST(PlanJson, ExplicitVendorCode) {
  const Plan p = parse_plan_json(
      R"({"rules": [{"operation": "mem_alloc", "error": "BACKEND",
          "vendor_code": 12345, "vendor_name": "MY_ERR", "sticky": true}]})",
      "p");
  EXPECT_EQ(p.rules[0].error.vendor_code, 12345);
  EXPECT_EQ(p.rules[0].error.vendor_name, "MY_ERR");
  EXPECT_TRUE(p.rules[0].error.sticky);
}

struct BadCase {
  const char* text;
  const char* expect;  // substring of the message
};

TEST(PlanJson, RefusesMalformedPlans) {
  const BadCase cases[] = {
      {"{", "invalid JSON at byte"},
      {"[1,2]", "must be a JSON object"},
      {R"({"rules": {}})", "\"rules\" must be an array"},
      {R"({"seed": 1})", "missing \"rules\""},
      {R"({"rules": [], "bogus": 1})", "unknown key \"bogus\""},
      {R"({"rules": [], "profile": "nvidia"})", "unknown vendor profile 'nvidia'"},
      {R"({"rules": [], "seed": -1})", "must not be negative"},
      {R"({"rules": [3]})", "rule 0 ('rule0'): a rule must be a JSON object"},
      {R"({"rules": [{"error": "TIMEOUT"}]})", "missing \"operation\""},
      {R"({"rules": [{"name": "x", "operation": "mem_allok", "error": "TIMEOUT"}]})",
       "rule 0 ('x'): unknown operation 'mem_allok'"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "NOPE"}]})",
       "unknown error name 'NOPE'"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "cuda:NOPE"}]})",
       "unknown cuda error 'NOPE'"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "amd:X"}]})",
       "unknown vendor profile 'amd'"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "probability": 1.5}]})",
       "outside [0, 1]"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "probability": -0.1}]})",
       "outside [0, 1]"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "probability": 0}]})",
       "can never fire"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "count": 0}]})",
       "count 0 can never fire"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "nth": 0}]})",
       "nth 0 can never fire"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "every": 0}]})",
       "every 0 can never fire"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "nth": 2, "every": 3}]})",
       "cannot be combined"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "min_bytes": 10, "max_bytes": 5}]})",
       "can never fire"},
      {R"({"rules": [{"operation": "stream_synchronize", "error": "TIMEOUT", "min_bytes": 10}]})",
       "carries no byte size"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "min_bytes": "lots"}]})",
       "bad byte size"},
      {R"({"rules": [{"operation": "mem_alloc", "action": "explode"}]})",
       "unknown action 'explode'"},
      {R"({"rules": [{"operation": "mem_alloc", "action": "error"}]})",
       "needs an error name"},
      {R"({"rules": [{"operation": "mem_alloc"}]})", "no action given"},
      {R"({"rules": [{"operation": "mem_alloc", "action": "bitflip"}]})",
       "writes no buffer"},
      {R"({"rules": [{"operation": "memcpy_htod", "action": "bitflip", "bits": 0}]})",
       "0 bits"},
      {R"({"rules": [{"operation": "mem_alloc", "action": "delay"}]})",
       "positive number of milliseconds"},
      {R"({"rules": [{"operation": "mem_alloc", "action": "device_lost", "error": "TIMEOUT"}]})",
       "needs a DEVICE_LOST error"},
      // Found by fuzz_fault_plan_json: "sticky": false made a lost device
      // that was not lost for good.
      {R"({"rules": [{"operation": "*", "action": "device_lost", "sticky": false}]})",
       "device_lost is always sticky"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "device": -2}]})",
       "must not be negative"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "device": "all"}]})",
       "non-negative integer"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "sticky": "yes"}]})",
       "true or false"},
      {R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "colour": 1}]})",
       "unknown key \"colour\""},
      {R"({"rules": [{"operation": "mem_alloc", "error": 5}]})", "must be a string"},
  };
  for (const auto& c : cases) {
    const std::string why = refusal_json(c.text);
    EXPECT_NE(why.find(c.expect), std::string::npos)
        << "plan: " << c.text << "\nmessage: " << why;
    EXPECT_EQ(why.rfind("plan.json", 0), 0u) << why;
  }
}

// nlohmann refuses numbers beyond a double with out_of_range, not
// parse_error: still a refused plan that names its file.
TEST(PlanJson, NumbersBeyondADoubleAreRefused) {
  EXPECT_THROW(parse_plan_json("{\"seed\":1e400,\"rules\":[]}", "x"), PlanError);
  const std::string big(400, '9');
  for (const std::string& text :
       {std::string(R"({"seed": 1e400, "rules": []})"),
        R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT", "nth": )" +
            big + "}]}"}) {
    const std::string why = refusal_json(text);
    EXPECT_EQ(why.rfind("plan.json: invalid JSON", 0), 0u) << why;
  }
}

TEST(PlanJson, DuplicateKeysAreRefused) {
  EXPECT_NE(refusal_json(R"({"rules": [{"operation": "bogus"}], "rules": []})")
                .find("plan.json: duplicate key \"rules\""),
            std::string::npos);
  EXPECT_NE(refusal_json(R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT",
                                        "nth": 1, "nth": 2}]})")
                .find("plan.json: duplicate key \"nth\""),
            std::string::npos);
  // The same key in two objects is no duplicate.
  const Plan p = parse_plan_json(
      R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT"},
                    {"operation": "memset", "error": "TIMEOUT"}]})",
      "p");
  EXPECT_EQ(p.rules.size(), 2u);
}

TEST(PlanJson, RuleIndexAndNameInMessage) {
  const std::string why = refusal_json(
      R"({"rules": [{"operation": "mem_alloc", "error": "TIMEOUT"},
                    {"name": "bad", "operation": "mem_alloc", "error": "TIMEOUT",
                     "probability": 2}]})");
  EXPECT_NE(why.find("plan.json: rule 1 ('bad'): probability"), std::string::npos)
      << why;
}

TEST(PlanCompact, Example) {
  const Plan p = parse_plan_compact(
      "mem_alloc=5%3*OUT_OF_MEMORY;allreduce=nth(10)TIMEOUT", "XAL_FAULTS");
  ASSERT_EQ(p.rules.size(), 2u);
  EXPECT_DOUBLE_EQ(p.rules[0].probability, 0.05);
  EXPECT_EQ(p.rules[0].count, 3u);
  EXPECT_EQ(p.rules[0].error.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(p.rules[1].nth, 10u);
  EXPECT_EQ(p.rules[1].error.status, XAL_ERROR_TIMEOUT);
  EXPECT_EQ(p.rules[1].action, Action::error);
}

TEST(PlanCompact, EveryTerm) {
  const Plan p = parse_plan_compact(
      "seed=9; profile=levelzero; target=mock; timeout=250;"
      "memcpy_dtoh=every(3) min(1KiB) max(1MiB) device(1) bitflip(2) name(flip);"
      "mem_*=after(100) device_lost;"
      "kernel_launch=async(cuda:CUDA_ERROR_LAUNCH_FAILED);"
      "stream_synchronize=hang(20);"
      "memset=delay(5);"
      "event_query=abort;"
      "mem_free=code(0x10)sticky error(BACKEND);"
      "memcpy_htod=OUT_OF_MEMORY transient",
      "XAL_FAULTS");
  EXPECT_EQ(p.seed, 9u);
  EXPECT_EQ(p.target, "mock");
  EXPECT_EQ(p.timeout_ms, 250u);
  ASSERT_EQ(p.rules.size(), 8u);
  const Rule& flip = p.rules[0];
  EXPECT_EQ(flip.name, "flip");
  EXPECT_EQ(flip.every, 3u);
  EXPECT_EQ(flip.min_bytes, 1024u);
  EXPECT_EQ(flip.max_bytes, 1024u * 1024u);
  EXPECT_EQ(flip.device, 1);
  EXPECT_EQ(flip.action, Action::bitflip);
  EXPECT_EQ(flip.bits, 2u);
  EXPECT_EQ(p.rules[1].action, Action::device_lost);
  EXPECT_EQ(p.rules[1].after_ms, 100u);
  // levelzero profile: DEVICE_LOST carries ZE_RESULT_ERROR_DEVICE_LOST.
  EXPECT_EQ(p.rules[1].error.vendor_code, 0x70000001);
  EXPECT_EQ(p.rules[2].action, Action::async_error);
  EXPECT_EQ(p.rules[2].error.vendor_code, 719);
  EXPECT_EQ(p.rules[3].action, Action::hang);
  EXPECT_EQ(p.rules[3].timeout_ms, 20u);
  EXPECT_EQ(p.rules[4].action, Action::delay);
  EXPECT_EQ(p.rules[4].delay_ms, 5u);
  EXPECT_EQ(p.rules[5].action, Action::abort_process);
  EXPECT_EQ(p.rules[6].error.vendor_code, 16);
  EXPECT_TRUE(p.rules[6].error.sticky);
  EXPECT_FALSE(p.rules[7].error.sticky);
}

TEST(PlanCompact, RefusesMalformedPlans) {
  const BadCase cases[] = {
      {"mem_alloc", "is not 'operation=terms'"},
      {"nosuchop=TIMEOUT", "unknown operation 'nosuchop'"},
      {"mem_alloc=NOPE", "unknown error name 'NOPE'"},
      {"mem_alloc=150%TIMEOUT", "outside [0, 1]"},
      {"mem_alloc=0*TIMEOUT", "count 0 can never fire"},
      {"mem_alloc=nth(0)TIMEOUT", "nth(0) can never fire"},
      {"mem_alloc=nth(x)TIMEOUT", "nth() expects a non-negative integer"},
      {"mem_alloc=nth(3", "missing ')'"},
      {"mem_alloc=5 TIMEOUT", "must be followed by % or *"},
      {"mem_alloc=TIMEOUT OUT_OF_MEMORY", "more than one action"},
      {"mem_alloc=delay(1)hang", "more than one action"},
      {"mem_alloc=min(9)max(3)TIMEOUT", "can never fire"},
      {"mem_alloc=bitflip", "writes no buffer"},
      {"*=device_lost transient", "device_lost is always sticky"},
      {"mem_alloc=frobnicate(2)", "unknown term"},
      {"mem_alloc=$TIMEOUT", "unexpected character '$'"},
      {"mem_alloc=after(99999999999999)TIMEOUT", "above one year"},
      {"mem_alloc=delay(18446744073709551615)", "above one year"},
      {"mem_alloc=hang(99999999999999)", "above one year"},
      {"mem_alloc=1.2.3%TIMEOUT", "bad percentage"},
      {"mem_alloc=99999999999999999999999*TIMEOUT", "must be an integer"},
      {"mem_alloc=", "no action given"},
      {"seed=abc;mem_alloc=TIMEOUT", "seed expects"},
      {"profile=amd;mem_alloc=TIMEOUT", "unknown vendor profile 'amd'"},
      {"mem_alloc=async()", "needs an error name"},
      {"mem_alloc=code(99999999999999999999)TIMEOUT", "outside the 64-bit signed range"},
      {"mem_alloc=code(-99999999999999999999)TIMEOUT", "outside the 64-bit signed range"},
  };
  for (const auto& c : cases) {
    const std::string why = refusal_compact(c.text);
    EXPECT_NE(why.find(c.expect), std::string::npos)
        << "plan: " << c.text << "\nmessage: " << why;
    EXPECT_EQ(why.rfind("XAL_FAULTS", 0), 0u) << why;
  }
}

TEST(PlanAny, DetectsJsonFileAndCompact) {
  EXPECT_EQ(parse_plan_any(R"( {"rules": []} )").rules.size(), 0u);
  EXPECT_EQ(parse_plan_any("mem_alloc=TIMEOUT").rules.size(), 1u);
  const std::string path = ::testing::TempDir() + "/fault_plan_any.json";
  {
    std::ofstream out(path);
    out << R"({"rules": [{"operation": "memset", "error": "TIMEOUT"}]})";
  }
  EXPECT_EQ(parse_plan_any(path).rules.size(), 1u);
  std::remove(path.c_str());
  try {
    parse_plan_any("/no/such/plan.json");
    FAIL() << "a missing file must be refused";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

TEST(PlanNumbers, OutOfRangeIsRefused) {
  // A device beyond 32 bits must not wrap to -1 (any device).
  EXPECT_NE(refusal_json(R"({"rules": [{"operation": "mem_alloc",
      "device": 18446744073709551615, "error": "TIMEOUT"}]})")
                .find("\"device\" 18446744073709551615 is out of range"),
            std::string::npos);
  EXPECT_NE(refusal_compact("mem_alloc=device(18446744073709551615)TIMEOUT")
                .find("device(18446744073709551615) is out of range"),
            std::string::npos);
  EXPECT_NE(refusal_json(R"({"rules": [{"operation": "mem_alloc",
      "error": "BACKEND", "vendor_code": 18446744073709551615}]})")
                .find("outside the 64-bit signed range"),
            std::string::npos);
  EXPECT_NE(refusal_json(R"({"rules": [{"operation": "mem_alloc",
      "error": "BACKEND", "vendor_code": 9223372036854775808}]})")
                .find("outside the 64-bit signed range"),
            std::string::npos);
  const Plan p = parse_plan_json(
      R"({"rules": [{"operation": "mem_alloc", "error": "BACKEND",
          "vendor_code": -9223372036854775808, "device": 4294967295}]})",
      "p");
  EXPECT_EQ(p.rules[0].error.vendor_code, INT64_MIN);
  EXPECT_EQ(p.rules[0].device, 4294967295);
}

TEST(PlanNumbers, CodeIsDecimalOrHex) {
  const auto code = [](const std::string& arg) {
    return parse_plan_compact("mem_alloc=code(" + arg + ")BACKEND", "XAL_FAULTS")
        .rules[0]
        .error.vendor_code;
  };
  EXPECT_EQ(code("010"), 10);  // not octal
  EXPECT_EQ(code("08"), 8);
  EXPECT_EQ(code("-5"), -5);
  EXPECT_EQ(code("0x70000001"), 0x70000001);
  EXPECT_EQ(code("-0x10"), -16);
  EXPECT_EQ(code("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"0x", "x10", "1e3", "--5", "- 5", "0b1", ""}) {
    EXPECT_NE(refusal_compact(std::string("mem_alloc=code(") + bad + ")BACKEND")
                  .find("code() expects a decimal or 0x integer"),
              std::string::npos)
        << bad;
  }
}

TEST(PlanDevices, RefusesMissingDevice) {
  const Plan p = parse_plan_compact("mem_alloc=device(3)TIMEOUT", "XAL_FAULTS");
  EXPECT_NO_THROW(check_plan_devices(p, 4, "XAL_FAULTS"));
  try {
    check_plan_devices(p, 2, "XAL_FAULTS");
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("device 3 does not exist (2 devices)"),
              std::string::npos);
  }
}

TEST(Profiles, VendorCodes) {
  struct Expect {
    const char* profile;
    const char* name;
    int64_t code;
    xal_status_t status;
    bool sticky;
  };
  const Expect cases[] = {
      {"cuda", "CUDA_ERROR_OUT_OF_MEMORY", 2, XAL_ERROR_OUT_OF_MEMORY, false},
      {"cuda", "CUDA_ERROR_ILLEGAL_ADDRESS", 700, XAL_ERROR_DEVICE_LOST, true},
      {"cuda", "CUDA_ERROR_LAUNCH_FAILED", 719, XAL_ERROR_DEVICE_LOST, true},
      {"cuda", "CUDA_ERROR_ECC_UNCORRECTABLE", 214, XAL_ERROR_HARDWARE, true},
      {"hip", "hipErrorOutOfMemory", 2, XAL_ERROR_OUT_OF_MEMORY, false},
      {"hip", "hipErrorIllegalAddress", 700, XAL_ERROR_DEVICE_LOST, true},
      {"levelzero", "ZE_RESULT_ERROR_DEVICE_LOST", 0x70000001,
       XAL_ERROR_DEVICE_LOST, true},
      {"levelzero", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000003,
       XAL_ERROR_OUT_OF_MEMORY, false},
      {"opencl", "CL_OUT_OF_RESOURCES", -5, XAL_ERROR_OUT_OF_MEMORY, false},
      {"opencl", "CL_MEM_OBJECT_ALLOCATION_FAILURE", -4,
       XAL_ERROR_OUT_OF_MEMORY, false},
  };
  for (const auto& c : cases) {
    const auto* p = find_profile(c.profile);
    ASSERT_NE(p, nullptr) << c.profile;
    const auto* e = find_vendor_error(*p, c.name);
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_EQ(e->code, c.code) << c.name;
    EXPECT_EQ(e->status, c.status) << c.name;
    EXPECT_EQ(e->sticky, c.sticky) << c.name;
  }
  EXPECT_EQ(vendor_profiles().size(), 4u);
  EXPECT_EQ(status_from_name("xal_error_timeout"), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(status_from_name("TIMEOUT"), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(status_from_name("SUCCESS"), XAL_SUCCESS);
  EXPECT_EQ(status_to_name(XAL_ERROR_DEVICE_LOST), "XAL_ERROR_DEVICE_LOST");
}

TEST(Profiles, BareStatusTakesThePlainCode) {
  struct Expect {
    const char* profile;
    xal_status_t status;
    const char* name;  // nullptr: the profile has no error with the status
  };
  const Expect cases[] = {
      {"cuda", XAL_ERROR_INVALID_ARGUMENT, "CUDA_ERROR_INVALID_VALUE"},
      {"cuda", XAL_ERROR_DEVICE_LOST, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {"cuda", XAL_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT"},
      {"cuda", XAL_ERROR_BACKEND, "CUDA_ERROR_UNKNOWN"},
      {"hip", XAL_ERROR_DEVICE_LOST, "hipErrorIllegalAddress"},
      {"levelzero", XAL_ERROR_INVALID_ARGUMENT,
       "ZE_RESULT_ERROR_INVALID_ARGUMENT"},
      {"opencl", XAL_ERROR_INVALID_ARGUMENT, "CL_INVALID_VALUE"},
      {"opencl", XAL_ERROR_DEVICE_LOST, nullptr},
  };
  for (const auto& c : cases) {
    const auto* p = find_profile(c.profile);
    ASSERT_NE(p, nullptr) << c.profile;
    const auto* e = find_vendor_error_for_status(*p, c.status);
    SCOPED_TRACE(std::string(c.profile) + " " + status_to_name(c.status));
    if (c.name == nullptr) {
      EXPECT_EQ(e, nullptr);
    } else {
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->name, c.name);
    }
  }
}

}  // namespace
}  // namespace xal::fault
