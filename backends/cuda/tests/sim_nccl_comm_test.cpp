// What only the NCCL path of the CUDA plugin (comm.cpp) does, through its
// table on the simulated driver and the simulated NCCL (SIMULATION ONLY:
// XAL_CUDA_NCCL names backends/cuda/testing's libxalsim-nccl.so): the note,
// NCCL's errors with their code and detail, the hint when NCCL cannot
// start. What every native path does is in sim_comm_test.cpp, built into
// this test too.
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "comm_fixture.h"
#include "watchdog.h"

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

// The simulated NCCL's counters (nccl_sim.cpp): the calls using a
// communicator now, and the misuses it saw (a communicator freed while a
// call used it, or used after it was freed).
struct SimNccl {
  int (*calls_in_flight)() = nullptr;
  int (*misuses)() = nullptr;
};

SimNccl sim_nccl() {
  SimNccl out;
  void* lib = dlopen(std::getenv("XAL_CUDA_NCCL"), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return out;
  out.calls_in_flight = reinterpret_cast<int (*)()>(dlsym(lib, "xalsim_nccl_calls_in_flight"));
  out.misuses = reinterpret_cast<int (*)()>(dlsym(lib, "xalsim_nccl_misuses"));
  return out;
}

// ncclCommAbort frees the communicator: an abort while another thread's
// call uses it (held inside the simulated NCCL, XALSIM_NCCL_HOLD_MS) waits
// for that call, which ends normally; then every rank is aborted.
TEST_F(CudaNcclComm, AbortWaitsForACallUsingTheCommunicator) {
  const SimNccl nccl = sim_nccl();
  ASSERT_NE(nccl.calls_in_flight, nullptr);
  ASSERT_NE(nccl.misuses, nullptr);
  const int misuses = nccl.misuses();
  xal_status_t status = XAL_ERROR_INTERNAL;
  xal_status_t seen = XAL_ERROR_INTERNAL;
  {
    const ScopedEnv hold("XALSIM_NCCL_HOLD_MS", "300");
    std::thread user([&] { status = table_->comm_get_async_error(comms_[0], &seen); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (nccl.calls_in_flight() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(nccl.calls_in_flight(), 1);  // the user's call is inside NCCL
    EXPECT_EQ(table_->comm_abort(comms_[0]), XAL_SUCCESS);
    user.join();
  }
  EXPECT_EQ(status, XAL_SUCCESS);
  EXPECT_EQ(seen, XAL_SUCCESS);  // it ended before the abort
  EXPECT_EQ(nccl.misuses(), misuses);
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  EXPECT_EQ(async_error(1), XAL_ERROR_ABORTED);
}

// NCCL keeps the communicators of an open group until ncclGroupEnd: an
// abort meanwhile aborts them once the group has ended, and the ranks'
// streams go on.
TEST_F(CudaNcclComm, AbortInAnOpenGroupWaitsForTheGroupsEnd) {
  const SimNccl nccl = sim_nccl();
  ASSERT_NE(nccl.misuses, nullptr);
  const int misuses = nccl.misuses();
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->group_start(backend_), XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  EXPECT_EQ(table_->comm_abort(comms_[0]), XAL_SUCCESS);
  EXPECT_EQ(table_->group_end(backend_), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(nccl.misuses(), misuses);
  {
    const Watchdog watchdog("the ranks' streams after the abort", std::chrono::seconds(30));
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_ABORTED);
  // (Not aborted, a call would wait for rank 0 for ever.)
  ASSERT_EQ(async_error(1), XAL_ERROR_ABORTED);
  EXPECT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_ERROR_ABORTED);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

TEST_F(CudaNcclComm, GroupEndWithoutStartIsNcclsInvalidUsage) {
  EXPECT_EQ(table_->group_end(backend_), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "ncclInvalidUsage");
  EXPECT_NE(last_error().message.find("ncclGroupEnd without ncclGroupStart"), std::string::npos)
      << last_error().message;
}

// ncclSend/ncclRecv through the table (the libxal cases are in
// sim_nccl_p2p_test.cpp). A group that holds both ranks of a pair must
// pair their messages: the simulated NCCL fails ncclGroupEnd, rather than
// hang as the real one would, and queues nothing.
TEST_F(CudaNcclComm, GroupOfSendsWithoutReceivesFailsAtItsEnd) {
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->group_start(backend_), XAL_SUCCESS);
  ASSERT_EQ(table_->comm_send(comms_[0], a, 4, XAL_DTYPE_F32, 1, stream0_), XAL_SUCCESS);
  ASSERT_EQ(table_->comm_send(comms_[1], b, 4, XAL_DTYPE_F32, 0, stream1_), XAL_SUCCESS);
  EXPECT_EQ(table_->group_end(backend_), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error().vendor_name, "ncclInvalidUsage");
  EXPECT_NE(last_error().message.find("rank 0 posted 1 ncclSend to rank 1, which posted 0 "
                                      "ncclRecv from it"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A send whose receive never comes, queued on its own: the simulated NCCL
// gives up after XALSIM_NCCL_P2P_TIMEOUT_MS (the real one would wait for
// ever) and reports it as the rank's asynchronous error.
TEST_F(CudaNcclComm, SendWithoutReceiveIsAnAsynchronousError) {
  xal_devptr_t a = alloc(dev0_, 64);
  const ScopedEnv timeout("XALSIM_NCCL_P2P_TIMEOUT_MS", "200");
  ASSERT_EQ(table_->comm_send(comms_[0], a, 4, XAL_DTYPE_F32, 1, stream0_), XAL_SUCCESS);
  {
    const Watchdog watchdog("a send without its receive", std::chrono::seconds(30));
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(0), XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(async_error(1), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
}

// A peer outside the communicator is refused before NCCL is called.
TEST_F(CudaNcclComm, SendToAPeerOutOfRangeIsRefused) {
  xal_devptr_t a = alloc(dev0_, 64);
  EXPECT_EQ(table_->comm_recv(comms_[0], a, 4, XAL_DTYPE_F32, 2, stream0_),
            XAL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().message.find("ncclRecv: peer 2 is out of range (2 ranks)"),
            std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
}

}  // namespace
}  // namespace xal::cuda::test
