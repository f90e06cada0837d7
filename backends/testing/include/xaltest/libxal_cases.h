// Cases every vendor backend runs through libxal's public ABI on its
// simulated driver: what xal-info and the conformance suite see. A
// backend's test instantiates both suites with its LibxalCase, e.g.
//   INSTANTIATE_TEST_SUITE_P(Hip, ThroughLibxal, ::testing::Values(kHip),
//                            xaltest::case_name);
// The cases live in backends/testing/src/libxal_cases.cpp (TESTS ONLY).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace xaltest {

// What differs between the backends' simulated drivers. The strings are
// static (not owned).
struct LibxalCase {
  const char* backend;             // xal name: "hip", "levelzero"
  const char* vendor;              // the devices' vendor: "AMD", "Intel"
  const char* library_variable;    // selects the runtime: "XAL_HIP_LIBRARY"
  const char* simulated_library;   // the simulated runtime's path
  const char* missing_library;     // a path that does not exist
  const char* fail_variable;       // injected errors: "XALSIM_HIP_FAIL"
  const char* alloc_failure;       // makes every allocation fail
  int64_t out_of_memory_code;      // the vendor code it fails with
  const char* out_of_memory_name;  // and that code's name
};

// "hip" for the case of the HIP backend (GoogleTest's name generator).
std::string case_name(const ::testing::TestParamInfo<LibxalCase>& info);

// libxal started on the backend's simulated runtime (two devices).
class ThroughLibxal : public ::testing::TestWithParam<LibxalCase> {
 protected:
  void SetUp() override;
  void TearDown() override;
};

// libxal started with the backend's runtime missing.
class ThroughLibxalUnavailable : public ::testing::TestWithParam<LibxalCase> {};

}  // namespace xaltest
