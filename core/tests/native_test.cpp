// Introspection: backend tables and the native objects behind handles.
#include "test_util.hpp"
#include "xal/xal_backend.h"

using namespace xal_test;

using Native = Xal;

TEST_F(Native, BackendAndHandles) {
  const xal_backend_table_t* t = nullptr;
  xal_backend_t* b = nullptr;
  ASSERT_XAL_OK(xal_backend_get_native(0, &t, &b));
  ASSERT_NE(t, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_STREQ(t->name, "testdev");
  EXPECT_EQ(t->abi_major, 1u);
  // The device handle's native object is the backend's device.
  const xal_backend_table_t* ht = nullptr;
  void* native = nullptr;
  ASSERT_XAL_OK(xal_handle_get_native(dev1, &ht, &native));
  EXPECT_EQ(ht, t);
  xal_bdevice_t* direct = nullptr;
  ASSERT_EQ(t->device_get(b, 1, &direct), XAL_SUCCESS);
  EXPECT_EQ(native, direct);
  // Calling straight through the table works on the native stream.
  ASSERT_XAL_OK(xal_handle_get_native(stream0, &ht, &native));
  EXPECT_EQ(t->stream_query(static_cast<xal_bstream_t*>(native)), XAL_SUCCESS);
  xal_event_t e;
  ASSERT_XAL_OK(xal_event_create(dev0, 0, &e));
  ASSERT_XAL_OK(xal_handle_get_native(e, &ht, &native));
  EXPECT_NE(native, nullptr);
  xal_device_t devs[] = {dev0};
  xal_comm_t c;
  ASSERT_XAL_OK(xal_comm_create(devs, 1, nullptr, &c));
  ASSERT_XAL_OK(xal_handle_get_native(c, &ht, &native));
  EXPECT_NE(native, nullptr);

  EXPECT_XAL_ERROR(xal_backend_get_native(1, &t, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_backend_get_native(0, nullptr, &b), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_backend_get_native(0, &t, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_handle_get_native(nullptr, &ht, &native), XAL_ERROR_INVALID_HANDLE);
  int local = 0;
  EXPECT_XAL_ERROR(xal_handle_get_native(&local, &ht, &native), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_handle_get_native(dev0, nullptr, &native), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_handle_get_native(dev0, &ht, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  ASSERT_XAL_OK(xal_event_destroy(e));
  EXPECT_XAL_ERROR(xal_handle_get_native(e, &ht, &native), XAL_ERROR_INVALID_HANDLE);
}

TEST(NativeFailed, BackendThatDidNotLoad) {
  ASSERT_XAL_OK(init(plugin("major2")));
  const xal_backend_table_t* t = nullptr;
  xal_backend_t* b = nullptr;
  EXPECT_XAL_ERROR(xal_backend_get_native(0, &t, &b), XAL_ERROR_BACKEND_UNAVAILABLE);
  ASSERT_XAL_OK(xal_shutdown());
}
