// Parts of the backend that need no OpenCL runtime: the status mapping and
// the device address table.
#include "address_map.h"
#include "status_map.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace xal::opencl {
namespace {

TEST(StatusMap, NamesAndStatuses) {
  EXPECT_STREQ(cl_error_name(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_STREQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_STREQ(cl_error_name(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");
  EXPECT_STREQ(cl_error_name(CL_PLATFORM_NOT_FOUND_KHR), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_STREQ(cl_error_name(-12345), "CL_UNKNOWN_ERROR");

  EXPECT_EQ(cl_to_status(CL_SUCCESS), XAL_SUCCESS);
  EXPECT_EQ(cl_to_status(CL_OUT_OF_RESOURCES), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cl_to_status(CL_MEM_OBJECT_ALLOCATION_FAILURE), XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cl_to_status(CL_OUT_OF_HOST_MEMORY), XAL_ERROR_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(cl_to_status(CL_INVALID_VALUE), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(cl_to_status(CL_INVALID_MEM_OBJECT), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cl_to_status(CL_INVALID_COMMAND_QUEUE), XAL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cl_to_status(CL_BUILD_PROGRAM_FAILURE), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(cl_to_status(CL_COMPILER_NOT_AVAILABLE), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cl_to_status(CL_DEVICE_NOT_FOUND), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(cl_to_status(CL_PLATFORM_NOT_FOUND_KHR), XAL_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(cl_to_status(-12345), XAL_ERROR_BACKEND);
}

TEST(StatusMap, EveryCodeOfClHIsNamed) {
  // cl.h defines -1..-19 and -30..-72 (3.0).
  for (cl_int code = -1; code >= -72; --code) {
    if (code < -19 && code > -30) continue;
    EXPECT_STRNE(cl_error_name(code), "CL_UNKNOWN_ERROR") << code;
    EXPECT_LT(cl_to_status(code), 0) << code;
  }
}

struct Recorded {
  xal_status_t status = XAL_SUCCESS;
  int64_t code = 0;
  std::string name, message;
};
thread_local Recorded t_rec;

xal_status_t record(xal_status_t s, int64_t code, const char* name, const char* msg) {
  t_rec = {s, code, name != nullptr ? name : "", msg};
  return s;
}

TEST(StatusMap, ReportKeepsVendorCodeAndName) {
  xal_backend_services_t services{};
  services.struct_size = sizeof(services);
  services.set_error = record;
  EXPECT_EQ(report_cl(&services, CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel", "kernel 'k'"),
            XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(t_rec.status, XAL_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(t_rec.code, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(t_rec.name, "CL_OUT_OF_RESOURCES");
  EXPECT_NE(t_rec.message.find("clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES (-5): kernel 'k'"),
            std::string::npos)
      << t_rec.message;
  EXPECT_EQ(report(&services, XAL_ERROR_INVALID_ARGUMENT, "plain"), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t_rec.code, 0);
  EXPECT_EQ(t_rec.message, "plain");
  EXPECT_EQ(report(nullptr, XAL_ERROR_INTERNAL, "nobody listens"), XAL_ERROR_INTERNAL);
}

cl_mem fake(uintptr_t v) { return reinterpret_cast<cl_mem>(v); }

TEST(AddressSpace, AlignedResolvableAndReused) {
  const uint64_t base = uint64_t{1} << kAddressSpaceShift;
  AddressSpace space(base, uint64_t{1} << 20);
  bool over = true;
  auto a = space.insert(fake(1), 1000, UINT64_MAX, &over);
  auto b = space.insert(fake(2), 1, UINT64_MAX, &over);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(over);
  EXPECT_EQ(*a % kAllocationAlignment, 0u);
  EXPECT_EQ(*b % kAllocationAlignment, 0u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(space.contains_address(*a));
  EXPECT_EQ(space.allocated_bytes(), 1001u);

  auto r = space.resolve(*a + 10, 990);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mem, fake(1));
  EXPECT_EQ(r->offset, 10u);
  EXPECT_EQ(r->base, *a);
  EXPECT_EQ(r->alloc_size, 1000u);
  EXPECT_FALSE(space.resolve(*a + 10, 991));  // one past the end
  EXPECT_FALSE(space.resolve(*a + 1000, 1));  // the alignment gap
  EXPECT_FALSE(space.resolve(base - 1, 1));
  EXPECT_TRUE(space.resolve(*b, 1));

  EXPECT_EQ(space.erase(*a + 1), nullptr);  // not a start
  EXPECT_EQ(space.erase(*a), fake(1));
  EXPECT_EQ(space.erase(*a), nullptr);      // double free
  EXPECT_FALSE(space.resolve(*a, 1));       // freed
  auto c = space.insert(fake(3), 512, UINT64_MAX, &over);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, *a);  // first fit reuses the freed range
  EXPECT_EQ(space.allocation_count(), 2u);
}

TEST(AddressSpace, LimitAndExhaustion) {
  AddressSpace space(uint64_t{1} << kAddressSpaceShift, 4096);
  bool over = false;
  EXPECT_FALSE(space.insert(fake(1), 2000, 1000, &over));
  EXPECT_TRUE(over);
  auto a = space.insert(fake(1), 2048, UINT64_MAX, &over);
  auto b = space.insert(fake(2), 2048, UINT64_MAX, &over);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(space.insert(fake(3), 1, UINT64_MAX, &over));  // range is full
  EXPECT_FALSE(over);
  // Freeing both coalesces the range so that one allocation fills it.
  EXPECT_EQ(space.erase(*b), fake(2));
  EXPECT_EQ(space.erase(*a), fake(1));
  EXPECT_TRUE(space.insert(fake(4), 4096, UINT64_MAX, &over));
  EXPECT_EQ(space.take_all().size(), 1u);
  EXPECT_EQ(space.allocated_bytes(), 0u);
}

// Imported buffers take addresses like allocations but count against
// neither the allocated total nor its limit.
TEST(AddressSpace, ImportsAreOutsideTheAllocatedTotal) {
  AddressSpace space(uint64_t{1} << kAddressSpaceShift, 8192);
  bool over = false;
  auto a = space.insert(fake(1), 1000, 1000, &over);
  ASSERT_TRUE(a);
  auto i = space.insert_imported(fake(2), 3000);
  ASSERT_TRUE(i);
  EXPECT_NE(*i, *a);
  EXPECT_EQ(space.allocated_bytes(), 1000u);
  auto r = space.resolve(*i + 100, 2900);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mem, fake(2));
  EXPECT_FALSE(space.resolve(*i, 3001));
  EXPECT_FALSE(space.insert_imported(fake(3), 0));
  EXPECT_FALSE(space.insert_imported(fake(3), 8192));  // no room left
  EXPECT_EQ(space.erase(*i), fake(2));
  EXPECT_EQ(space.allocated_bytes(), 1000u);
  EXPECT_EQ(space.erase(*a), fake(1));
  EXPECT_EQ(space.allocated_bytes(), 0u);
}

// A release that fails leaves the allocation live (the free is retried);
// one that succeeds removes it.
TEST(AddressSpace, ReleaseRemovesOnlyWhatWasReleased) {
  AddressSpace space(uint64_t{1} << kAddressSpaceShift, 1 << 20);
  bool over = false;
  auto a = space.insert(fake(1), 512, UINT64_MAX, &over);
  ASSERT_TRUE(a);
  int calls = 0;
  auto failing = [&](cl_mem m) {
    ++calls;
    EXPECT_EQ(m, fake(1));
    return CL_OUT_OF_RESOURCES;
  };
  EXPECT_EQ(space.release(*a, failing), std::optional<cl_int>(CL_OUT_OF_RESOURCES));
  EXPECT_TRUE(space.resolve(*a, 512));
  EXPECT_EQ(space.allocated_bytes(), 512u);
  auto ok = [&](cl_mem) {
    ++calls;
    return CL_SUCCESS;
  };
  EXPECT_EQ(space.release(*a + 1, ok), std::nullopt);  // not a start
  EXPECT_EQ(space.release(*a, ok), std::optional<cl_int>(CL_SUCCESS));
  EXPECT_FALSE(space.resolve(*a, 1));
  EXPECT_EQ(space.allocated_bytes(), 0u);
  EXPECT_EQ(space.release(*a, ok), std::nullopt);  // double free
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace xal::opencl
