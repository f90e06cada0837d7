// Communicators: the native path and argument checks.
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace xal_test;

namespace {

class Comm : public Xal {
 protected:
  void SetUp() override {
    Xal::SetUp();
    ASSERT_XAL_OK(xal_stream_create(dev1, 0, &stream1));
    xal_device_t devs[] = {dev0, dev1};
    ASSERT_XAL_OK(xal_comm_create(devs, 2, nullptr, comms));
    for (int r = 0; r < 2; ++r) {
      ASSERT_XAL_OK(xal_mem_alloc(r ? dev1 : dev0, kCount * 4, &send[r]));
      ASSERT_XAL_OK(xal_mem_alloc(r ? dev1 : dev0, kCount * 4 * 2, &recv[r]));
    }
  }
  xal_stream_t stream(int r) { return r ? stream1 : stream0; }
  void upload(int r, const std::vector<float>& v) {
    ASSERT_XAL_OK(xal_memcpy_htod(stream(r), send[r], v.data(), v.size() * 4));
    ASSERT_XAL_OK(xal_stream_synchronize(stream(r)));
  }
  std::vector<float> download(int r, size_t n) {
    std::vector<float> v(n);
    EXPECT_EQ(xal_memcpy_dtoh(stream(r), v.data(), recv[r], n * 4), XAL_SUCCESS);
    EXPECT_EQ(xal_stream_synchronize(stream(r)), XAL_SUCCESS);
    return v;
  }

  static constexpr size_t kCount = 257;
  xal_stream_t stream1 = nullptr;
  xal_comm_t comms[2] = {};
  xal_devptr_t send[2] = {}, recv[2] = {};
};

}  // namespace

TEST_F(Comm, AllreduceBroadcastAllgather) {
  upload(0, std::vector<float>(kCount, 1.5f));
  upload(1, std::vector<float>(kCount, 2.0f));
  ASSERT_XAL_OK(xal_group_start());
  for (int r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allreduce(comms[r], send[r], recv[r], kCount, XAL_DTYPE_F32,
                                XAL_OP_SUM, stream(r)));
  ASSERT_XAL_OK(xal_group_end());
  EXPECT_EQ(download(0, kCount), std::vector<float>(kCount, 3.5f));
  EXPECT_EQ(download(1, kCount), std::vector<float>(kCount, 3.5f));

  ASSERT_XAL_OK(xal_group_start());
  for (int r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_broadcast(comms[r], send[r], recv[r], kCount, XAL_DTYPE_F32, 1, stream(r)));
  ASSERT_XAL_OK(xal_group_end());
  EXPECT_EQ(download(0, kCount), std::vector<float>(kCount, 2.0f));

  ASSERT_XAL_OK(xal_group_start());
  for (int r = 0; r < 2; ++r)
    ASSERT_XAL_OK(xal_allgather(comms[r], send[r], recv[r], kCount, XAL_DTYPE_F32, stream(r)));
  ASSERT_XAL_OK(xal_group_end());
  const auto all = download(1, 2 * kCount);
  EXPECT_EQ(all[0], 1.5f);
  EXPECT_EQ(all[kCount], 2.0f);

  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_XAL_OK(xal_device_get_metrics(dev0, &m));
  EXPECT_EQ(m.xal_collective_calls, 3u);
  EXPECT_GT(m.xal_collective_bytes, 0u);
}

TEST_F(Comm, InfoAbortAndMissingEntries) {
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(comms[1], &info));
  EXPECT_EQ(info.rank, 1u);
  EXPECT_EQ(info.size, 2u);
  EXPECT_EQ(info.device, dev1);
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE));
  EXPECT_GT(info.timeout_ms, 0u);
  EXPECT_STRNE(info.description, "");
  xal_status_t async = XAL_ERROR_INTERNAL;
  ASSERT_XAL_OK(xal_comm_get_async_error(comms[0], &async));
  EXPECT_EQ(async, XAL_SUCCESS);
  // testdev has no reduce / abort entries: NOT_SUPPORTED with a message.
  EXPECT_XAL_ERROR(xal_reduce(comms[0], send[0], recv[0], 4, XAL_DTYPE_F32, XAL_OP_SUM, 0, stream0),
                   XAL_ERROR_NOT_SUPPORTED);
  // A refused call is not counted as a collective (only its error is).
  xal_device_metrics_t m{};
  m.struct_size = sizeof m;
  ASSERT_XAL_OK(xal_device_get_metrics(dev0, &m));
  EXPECT_EQ(m.xal_collective_calls, 0u);
  EXPECT_EQ(m.xal_collective_bytes, 0u);
  EXPECT_EQ(m.xal_errors[-XAL_ERROR_NOT_SUPPORTED], 1u);
  EXPECT_XAL_ERROR(xal_comm_abort(comms[0]), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_XAL_ERROR(xal_comm_get_info(comms[0], nullptr), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_comm_get_async_error(comms[0], nullptr), XAL_ERROR_INVALID_ARGUMENT);
}

TEST_F(Comm, CreateBadInput) {
  xal_comm_t out[3];
  xal_device_t twice[] = {dev0, dev0};
  EXPECT_XAL_ERROR(xal_comm_create(twice, 2, nullptr, out), XAL_ERROR_INVALID_ARGUMENT);
  xal_device_t with_null[] = {dev0, nullptr};
  EXPECT_XAL_ERROR(xal_comm_create(with_null, 2, nullptr, out), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_comm_create(nullptr, 2, nullptr, out), XAL_ERROR_INVALID_ARGUMENT);
  xal_device_t devs[] = {dev0, dev1};
  EXPECT_XAL_ERROR(xal_comm_create(devs, 0, nullptr, out), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_comm_create(devs, 2, nullptr, nullptr), XAL_ERROR_INVALID_ARGUMENT);
  xal_comm_options_t small{};
  small.struct_size = 4;
  EXPECT_XAL_ERROR(xal_comm_create(devs, 2, &small, out), XAL_ERROR_INVALID_ARGUMENT);
  xal_comm_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.timeout_ms = 1234;
  ASSERT_XAL_OK(xal_comm_create(devs, 1, &opts, out));
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_XAL_OK(xal_comm_get_info(out[0], &info));
  EXPECT_EQ(info.timeout_ms, 1234u);
  EXPECT_EQ(info.size, 1u);
  ASSERT_XAL_OK(xal_comm_destroy(out[0]));
  EXPECT_XAL_ERROR(xal_comm_destroy(out[0]), XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_comm_get_info(out[0], &info), XAL_ERROR_INVALID_HANDLE);
}

TEST_F(Comm, CollectiveBadInput) {
  const auto F = XAL_DTYPE_F32;
  EXPECT_XAL_ERROR(xal_allreduce(nullptr, send[0], recv[0], 4, F, XAL_OP_SUM, stream0),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_allreduce(reinterpret_cast<xal_comm_t>(stream0), send[0], recv[0], 4, F,
                                 XAL_OP_SUM, stream0),
                   XAL_ERROR_INVALID_HANDLE);
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[0], recv[0], 4, F, XAL_OP_SUM, nullptr),
                   XAL_ERROR_INVALID_HANDLE);
  // Stream of the other rank's device.
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[0], recv[0], 4, F, XAL_OP_SUM, stream1),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[0], recv[0], 4, static_cast<xal_dtype_t>(10),
                                 XAL_OP_SUM, stream0),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[0], recv[0], 4, F, static_cast<xal_op_t>(5),
                                 stream0),
                   XAL_ERROR_INVALID_ARGUMENT);
  // Values far outside the enums are checked in c_api_test.c (in C++ they
  // cannot even be passed).
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[0], recv[0], kCount + 1, F, XAL_OP_SUM, stream0),
                   XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_allreduce(comms[0], send[1], recv[0], 4, F, XAL_OP_SUM, stream0),
                   XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_broadcast(comms[0], send[0], recv[0], 4, F, 2, stream0),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_reduce(comms[0], send[0], recv[0], 4, F, XAL_OP_SUM, 7, stream0),
                   XAL_ERROR_INVALID_ARGUMENT);
  // recv holds 2 * kCount floats: allgather of kCount fits, of kCount+1 not.
  EXPECT_XAL_ERROR(xal_allgather(comms[0], send[0], recv[0], kCount + 1, F, stream0),
                   XAL_ERROR_OUT_OF_BOUNDS);
  // send holds kCount floats: reduce_scatter needs 2 * recv_count.
  EXPECT_XAL_ERROR(xal_reduce_scatter(comms[0], send[0], recv[0], kCount, F, XAL_OP_SUM, stream0),
                   XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_alltoall(comms[0], send[0], recv[0], kCount, F, stream0),
                   XAL_ERROR_OUT_OF_BOUNDS);
  EXPECT_XAL_ERROR(xal_alltoall(comms[0], send[0], recv[0], SIZE_MAX / 2, F, stream0),
                   XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_XAL_ERROR(xal_group_end(), XAL_ERROR_INVALID_ARGUMENT);
}

namespace {

// Two ranks on the core's hierarchical path, which keeps a group's
// collectives until xal_group_end (XAL_TESTDEV_ASYNC: the testdev streams
// run their work on a thread of their own).
class GroupedComm : public Comm {
 protected:
  xal_status_t allreduce(int r) {
    return xal_allreduce(comms[r], send[r], send[r], 16, XAL_DTYPE_F32, XAL_OP_SUM, stream(r));
  }
  ScopedEnv path_{"XAL_COMM_FORCE_PATH", "hierarchical"};
};

}  // namespace

// A communicator destroyed between the collective and xal_group_end: the
// group's end reports it and runs none of the group's collectives.
TEST_F(GroupedComm, CommunicatorDestroyedInAGroupIsReportedAtItsEnd) {
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(allreduce(0));
  ASSERT_XAL_OK(allreduce(1));
  ASSERT_XAL_OK(xal_comm_destroy(comms[0]));
  EXPECT_XAL_ERROR(xal_group_end(), XAL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(last_error().message).find("destroyed before xal_group_end"),
            std::string::npos)
      << last_error().message;
  ASSERT_XAL_OK(xal_comm_destroy(comms[1]));
  ASSERT_XAL_OK(xal_stream_synchronize(stream0));
  ASSERT_XAL_OK(xal_stream_synchronize(stream1));
}

TEST_F(GroupedComm, StreamDestroyedInAGroupIsReportedAtItsEnd) {
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(allreduce(0));
  ASSERT_XAL_OK(allreduce(1));
  ASSERT_XAL_OK(xal_stream_destroy(stream1));
  EXPECT_XAL_ERROR(xal_group_end(), XAL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(last_error().message).find("the stream"), std::string::npos)
      << last_error().message;
  for (xal_comm_t c : comms) ASSERT_XAL_OK(xal_comm_destroy(c));
}

// A group left open across xal_shutdown belongs to the ended runtime: its
// end in the next one is refused, its work dropped, and new groups work.
TEST_F(GroupedComm, GroupLeftOpenAcrossShutdownIsDropped) {
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(allreduce(0));
  ASSERT_XAL_OK(allreduce(1));
  ASSERT_XAL_OK(xal_shutdown());
  ASSERT_XAL_OK(init(plugin("testdev")));
  EXPECT_XAL_ERROR(xal_group_end(), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error().message).find("before xal_shutdown"), std::string::npos)
      << last_error().message;
  ASSERT_XAL_OK(xal_group_start());
  ASSERT_XAL_OK(xal_group_end());
  EXPECT_XAL_ERROR(xal_group_end(), XAL_ERROR_INVALID_ARGUMENT);  // depth back at 0
}
