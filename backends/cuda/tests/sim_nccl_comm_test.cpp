// What only the NCCL path of the CUDA plugin (nccl.cpp) does, through its
// table on the simulated driver and the simulated NCCL (SIMULATION ONLY:
// XAL_CUDA_NCCL names backends/cuda/testing's libxalsim-nccl.so): the note,
// NCCL's errors with their code and detail, the hint when NCCL cannot
// start. What every native path does is in sim_comm_test.cpp, built into
// this test too.
#include <string>

#include "comm_fixture.h"

namespace xal::cuda::test {
namespace {

using CudaNcclComm = CudaComm;

TEST_F(CudaNcclComm, DescribeNamesTheSimulatedNccl) {
  xal_backend_describe_t d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(table_->describe(backend_, &d), XAL_SUCCESS);
  EXPECT_NE(std::string(d.note).find("simulated NCCL 2.27.3"), std::string::npos) << d.note;
  EXPECT_EQ(std::string(d.note).find("core's path"), std::string::npos) << d.note;
}

// NCCL that cannot start (a runtime newer than the driver, say): the error
// keeps NCCL's code and says how to run without it.
TEST_F(CudaNcclComm, InitFailureSaysHowToRunWithoutNccl) {
  ScopedEnv fail("XALSIM_NCCL_FAIL", "ncclCommInitAll");
  xal_bdevice_t* devices[2] = {dev0_, dev1_};
  xal_bcomm_t* out[2] = {nullptr, nullptr};
  EXPECT_EQ(table_->comm_create(devices, 2, nullptr, out), XAL_ERROR_BACKEND);
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(last_error().vendor_code, 1);  // ncclUnhandledCudaError
  EXPECT_EQ(last_error().vendor_name, "ncclUnhandledCudaError");
  const std::string& m = last_error().message;
  EXPECT_NE(m.find("cuda: ncclCommInitAll failed: unhandled cuda error (simulated): injected "
                   "failure of ncclCommInitAll"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("XAL_CUDA_NCCL=off runs collectives on xal's own path"), std::string::npos) << m;
}

TEST_F(CudaNcclComm, FailedCallKeepsNcclsCodeAndDetail) {
  xal_devptr_t a = alloc(dev0_, 64);
  {
    ScopedEnv fail("XALSIM_NCCL_FAIL", "ncclAllReduce");
    EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_ERROR_BACKEND);
  }
  EXPECT_EQ(last_error().vendor_name, "ncclUnhandledCudaError");
  EXPECT_NE(last_error().message.find("cuda: ncclAllReduce failed: unhandled cuda error "
                                      "(simulated): injected failure of ncclAllReduce"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(async_error(0), XAL_SUCCESS);  // nothing was queued
  table_->mem_free(dev0_, a);
}

// NCCL's asynchronous errors reach comm_get_async_error (the simulated
// NCCL reports ranks that disagree as ncclInvalidUsage; a real one may
// hang instead).
TEST_F(CudaNcclComm, AsynchronousErrorIsMapped) {
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  allreduce_disagreeing(a, b);
  EXPECT_EQ(async_error(0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(async_error(1), XAL_ERROR_INVALID_ARGUMENT);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

TEST_F(CudaNcclComm, GroupEndWithoutStartIsNcclsInvalidUsage) {
  EXPECT_EQ(table_->group_end(backend_), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "ncclInvalidUsage");
  EXPECT_NE(last_error().message.find("ncclGroupEnd without ncclGroupStart"), std::string::npos)
      << last_error().message;
}

}  // namespace
}  // namespace xal::cuda::test
