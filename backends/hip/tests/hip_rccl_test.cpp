// The HIP plugin's RCCL entries through libxal, on the simulated runtime
// and the simulated RCCL (SIMULATION ONLY: XAL_RCCL_LIBRARY names
// backends/hip/testing's libxalsim-rccl.so): the native path is taken, an
// aborted communicator wakes a waiting rank and is destroyed cleanly
// (ncclCommAbort frees RCCL's part; it is not destroyed twice), and xal's
// rules hold where RCCL's differ. Every op, dtype and in-place kind is the
// conformance suite's collectives group (hip_simulation_rccl_conformance).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "xal/xal.h"

namespace {

std::string last_message() {
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  return xal_last_error(&e) == XAL_SUCCESS ? e.message : "";
}

class HipRccl : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(xal_init(nullptr), XAL_SUCCESS) << last_message();
    uint32_t n = 0;
    ASSERT_EQ(xal_device_count(&n), XAL_SUCCESS);
    ASSERT_EQ(n, 2u) << "needs XALSIM_HIP_DEVICES=2";
    for (uint32_t i = 0; i < 2; ++i) {
      ASSERT_EQ(xal_device_get(i, &devs_[i]), XAL_SUCCESS);
      ASSERT_EQ(xal_stream_create(devs_[i], 0, &streams_[i]), XAL_SUCCESS);
      ASSERT_EQ(xal_mem_alloc(devs_[i], 64 * sizeof(float), &bufs_[i]), XAL_SUCCESS);
    }
    ASSERT_EQ(xal_comm_create(devs_, 2, nullptr, comms_), XAL_SUCCESS) << last_message();
  }
  void TearDown() override {
    for (int i = 0; i < 2; ++i) {
      if (comms_[i] != nullptr) {
        EXPECT_EQ(xal_comm_destroy(comms_[i]), XAL_SUCCESS);
      }
      if (bufs_[i] != 0) {
        EXPECT_EQ(xal_mem_free(devs_[i], bufs_[i]), XAL_SUCCESS);
      }
      if (streams_[i] != nullptr) {
        EXPECT_EQ(xal_stream_destroy(streams_[i]), XAL_SUCCESS);
      }
    }
    EXPECT_EQ(xal_shutdown(), XAL_SUCCESS);
  }

  xal_device_t devs_[2] = {};
  xal_stream_t streams_[2] = {};
  xal_devptr_t bufs_[2] = {};
  xal_comm_t comms_[2] = {};
};

TEST_F(HipRccl, TheNativePathIsRccl) {
  xal_backend_info_t backend{};
  backend.struct_size = sizeof backend;
  ASSERT_EQ(xal_backend_get_info(0, &backend), XAL_SUCCESS);
  EXPECT_NE(std::string(backend.note).find("; simulated RCCL"), std::string::npos) << backend.note;
  xal_comm_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(xal_comm_get_info(comms_[0], &info), XAL_SUCCESS);
  EXPECT_EQ(info.path, static_cast<uint32_t>(XAL_COMM_PATH_NATIVE)) << info.description;
}

TEST_F(HipRccl, AbortWakesAWaitingRankAndDestroyIsClean) {
  ASSERT_EQ(xal_broadcast(comms_[0], bufs_[0], bufs_[0], 16, XAL_DTYPE_F32, 0, streams_[0]),
            XAL_SUCCESS);
  EXPECT_EQ(xal_stream_query(streams_[0]), XAL_NOT_READY);  // waiting for rank 1
  ASSERT_EQ(xal_comm_abort(comms_[0]), XAL_SUCCESS);
  EXPECT_EQ(xal_stream_synchronize(streams_[0]), XAL_SUCCESS);
  xal_status_t async = XAL_SUCCESS;
  ASSERT_EQ(xal_comm_get_async_error(comms_[0], &async), XAL_SUCCESS);
  EXPECT_EQ(async, XAL_ERROR_ABORTED);
  EXPECT_EQ(xal_broadcast(comms_[0], bufs_[0], bufs_[0], 16, XAL_DTYPE_F32, 0, streams_[0]),
            XAL_ERROR_ABORTED);
  // TearDown destroys both communicators: RCCL's part only once.
}

TEST_F(HipRccl, InPlaceAlltoallExchangesTheBlocks) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  ASSERT_EQ(xal_memcpy_htod(streams_[0], bufs_[0], a.data(), 16), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_htod(streams_[1], bufs_[1], b.data(), 16), XAL_SUCCESS);
  ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(xal_alltoall(comms_[i], bufs_[i], bufs_[i], 2, XAL_DTYPE_F32, streams_[i]),
              XAL_SUCCESS)
        << last_message();
  }
  ASSERT_EQ(xal_group_end(), XAL_SUCCESS);
  std::vector<float> ra(4), rb(4);
  ASSERT_EQ(xal_memcpy_dtoh(streams_[0], ra.data(), bufs_[0], 16), XAL_SUCCESS);
  ASSERT_EQ(xal_memcpy_dtoh(streams_[1], rb.data(), bufs_[1], 16), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(streams_[0]), XAL_SUCCESS);
  ASSERT_EQ(xal_stream_synchronize(streams_[1]), XAL_SUCCESS);
  EXPECT_EQ(ra, (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(rb, (std::vector<float>{3, 4, 7, 8}));
}

// Two in-place all-to-alls in one group: RCCL runs them at the group's end,
// and each still sends its own blocks.
TEST_F(HipRccl, TwoInPlaceAlltoallsInOneGroupKeepTheirOwnData) {
  xal_devptr_t second[2] = {};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(xal_mem_alloc(devs_[i], 16, &second[i]), XAL_SUCCESS);
  }
  const std::vector<float> in[2][2] = {{{1, 2, 3, 4}, {10, 20, 30, 40}},
                                       {{5, 6, 7, 8}, {50, 60, 70, 80}}};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(xal_memcpy_htod(streams_[i], bufs_[i], in[i][0].data(), 16), XAL_SUCCESS);
    ASSERT_EQ(xal_memcpy_htod(streams_[i], second[i], in[i][1].data(), 16), XAL_SUCCESS);
  }
  ASSERT_EQ(xal_group_start(), XAL_SUCCESS);
  for (xal_devptr_t* b : {bufs_, second}) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(xal_alltoall(comms_[i], b[i], b[i], 2, XAL_DTYPE_F32, streams_[i]), XAL_SUCCESS)
          << last_message();
    }
  }
  ASSERT_EQ(xal_group_end(), XAL_SUCCESS);
  std::vector<float> out[2][2];
  for (int i = 0; i < 2; ++i) {
    out[i][0].resize(4);
    out[i][1].resize(4);
    ASSERT_EQ(xal_memcpy_dtoh(streams_[i], out[i][0].data(), bufs_[i], 16), XAL_SUCCESS);
    ASSERT_EQ(xal_memcpy_dtoh(streams_[i], out[i][1].data(), second[i], 16), XAL_SUCCESS);
    ASSERT_EQ(xal_stream_synchronize(streams_[i]), XAL_SUCCESS);
  }
  EXPECT_EQ(out[0][0], (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(out[1][0], (std::vector<float>{3, 4, 7, 8}));
  EXPECT_EQ(out[0][1], (std::vector<float>{10, 20, 50, 60}));
  EXPECT_EQ(out[1][1], (std::vector<float>{30, 40, 70, 80}));
  for (int i = 0; i < 2; ++i) EXPECT_EQ(xal_mem_free(devs_[i], second[i]), XAL_SUCCESS);
}

TEST_F(HipRccl, XalsRulesHoldWhereRcclsDiffer) {
  EXPECT_EQ(xal_allreduce(comms_[0], bufs_[0], bufs_[0], 4, XAL_DTYPE_I32, XAL_OP_AVG,
                          streams_[0]),
            XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_message().find("avg"), std::string::npos) << last_message();
  EXPECT_EQ(xal_broadcast(comms_[0], bufs_[0], bufs_[0], 4, XAL_DTYPE_F32, 2, streams_[0]),
            XAL_ERROR_INVALID_ARGUMENT);
  xal_status_t async = XAL_ERROR_INTERNAL;
  ASSERT_EQ(xal_comm_get_async_error(comms_[0], &async), XAL_SUCCESS);
  EXPECT_EQ(async, XAL_SUCCESS);  // nothing was queued
}

// A failed RCCL call keeps RCCL's code and its enumerator's name, and
// RCCL's own text (the simulated RCCL's XALSIM_NCCL_FAIL injects one).
TEST_F(HipRccl, FailedCallKeepsRcclsCodeAndName) {
  ASSERT_EQ(setenv("XALSIM_NCCL_FAIL", "ncclAllReduce", 1), 0);
  const xal_status_t s =
      xal_allreduce(comms_[0], bufs_[0], bufs_[0], 4, XAL_DTYPE_F32, XAL_OP_SUM, streams_[0]);
  unsetenv("XALSIM_NCCL_FAIL");
  EXPECT_EQ(s, XAL_ERROR_BACKEND);
  xal_error_info_t e{};
  e.struct_size = sizeof e;
  ASSERT_EQ(xal_last_error(&e), XAL_SUCCESS);
  EXPECT_EQ(e.vendor_code, 1);  // ncclUnhandledCudaError, RCCL's "unhandled device error"
  EXPECT_STREQ(e.vendor_name, "ncclUnhandledCudaError");
  EXPECT_NE(std::string(e.message).find("ncclAllReduce failed: unhandled cuda error (simulated)"),
            std::string::npos)
      << e.message;
}

}  // namespace
