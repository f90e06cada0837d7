// Which RCCL the HIP plugin takes on the simulated runtime (SIMULATION
// ONLY): never a real one (it would drive the real runtime), not even the
// default librccl.so.1 to say why, and never one too old for the plugin.
// Then the table has no collective entries and the core runs collectives
// over the HIP devices. Each case runs in its own process with its own
// environment (CTest sets XAL_TEST_RCCL_CASE and a stand-in RCCL,
// rccl_stand_in.c); a case not chosen is skipped.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "plugin_fixture.h"

namespace xal::hip::testing {
namespace {

// Skips unless CTest runs `name`.
bool chosen(const char* name) {
  const char* value = std::getenv("XAL_TEST_RCCL_CASE");
  return value != nullptr && std::string(value) == name;
}

// The table has no collectives and a started instance says "no RCCL".
void expect_no_rccl() {
  const xal_backend_table_t* table = plugin_table();
  ASSERT_NE(table, nullptr) << dlerror();
  EXPECT_EQ(table->comm_create, nullptr);
  EXPECT_EQ(table->allreduce, nullptr);
  EXPECT_EQ(table->group_start, nullptr);
  xal_backend_t* backend = nullptr;
  ASSERT_EQ(xaltest::init_instance(table, &backend), XAL_SUCCESS) << last_error().message;
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table->describe(backend, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("; no RCCL"), std::string::npos) << d.note;
  EXPECT_EQ(table->shutdown(backend), XAL_SUCCESS);
}

TEST(HipRcclChoice, RealRcclIsNotUsedOnTheSimulatedRuntime) {
  if (!chosen("real")) GTEST_SKIP() << "XAL_TEST_RCCL_CASE=real";
  ASSERT_NE(std::getenv("XAL_RCCL_LIBRARY"), nullptr);
  expect_no_rccl();
  EXPECT_NE(std::getenv("XAL_TEST_RCCL_LOADED"), nullptr) << "the named library was not tried";
}

TEST(HipRcclChoice, DefaultRcclIsNotOpenedOnTheSimulatedRuntime) {
  if (!chosen("default")) GTEST_SKIP() << "XAL_TEST_RCCL_CASE=default";
  ASSERT_EQ(std::getenv("XAL_RCCL_LIBRARY"), nullptr);
  expect_no_rccl();
  EXPECT_EQ(std::getenv("XAL_TEST_RCCL_LOADED"), nullptr)
      << "the plugin opened librccl.so.1 with the simulated runtime";
  // The stand-in is there to be found: otherwise the check proves nothing.
  void* rccl = dlopen("librccl.so.1", RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(rccl, nullptr) << dlerror();
  EXPECT_NE(std::getenv("XAL_TEST_RCCL_LOADED"), nullptr);
  dlclose(rccl);
}

TEST(HipRcclChoice, IncompleteRcclLeavesCollectivesToTheCore) {
  if (!chosen("incomplete")) GTEST_SKIP() << "XAL_TEST_RCCL_CASE=incomplete";
  ASSERT_NE(std::getenv("XAL_RCCL_LIBRARY"), nullptr);
  expect_no_rccl();
}

}  // namespace
}  // namespace xal::hip::testing
