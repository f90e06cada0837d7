// What only the collectives without NCCL (peer copies and xal's embedded
// reductions, peer_comm.cpp) do, through the plugin's table on the
// simulated driver (SIMULATION ONLY): the timeout for ranks to come, a
// mismatch named, a part that cannot be queued, a device reset. What every
// native path does is in sim_comm_test.cpp, built into this test too.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "comm_fixture.h"
#include "watchdog.h"

namespace xal::cuda::test {
namespace {

#if XAL_CUDA_TEST_HAVE_KERNELS

using CudaPeerComm = CudaComm;

// The first collective of a communicator. With CUDA's lazy loading (the
// default since 12.2) a module load or a kernel's first get may wait for
// the context's streams, as may cuCtxEnablePeerAccess;
// XALSIM_CUDA_LOAD_SYNCS=1 makes the simulation's do so (CTest sets it for
// this whole test). In a rank's host function, which every rank's stream
// waits for, they would never return: the communicator does all of it when
// it is made, on the caller's thread. Under a watchdog: a deadlock is the
// failure.
TEST_F(CudaPeerComm, FirstCollectiveLoadsNothingInAHostFunction) {
  const ScopedEnv syncs("XALSIM_CUDA_LOAD_SYNCS", "1");
  make_comms(2000);
  constexpr size_t kCount = 1000;
  xal_devptr_t a = alloc(dev0_, kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, kCount * sizeof(float));
  put(stream0_, a, std::vector<float>(kCount, 1.0f));
  put(stream1_, b, std::vector<float>(kCount, 4.0f));
  // avg: the reduce and scale kernels, and peer copies both ways.
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream0_),
            XAL_SUCCESS);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_AVG, stream1_),
            XAL_SUCCESS);
  {
    const Watchdog watchdog("the first allreduce", std::chrono::seconds(30));
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(0), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 2.5f));
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 2.5f));
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// The communicator's own streams are non-blocking: a blocking one would be
// tied to the legacy default stream (a framework's on the same primary
// context), whose work then waits for it while it waits for the parked
// user streams.
TEST_F(CudaPeerComm, OwnStreamsAreNonBlocking) {
  void* sim = dlopen(std::getenv("XAL_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(sim, nullptr);
  using StreamCount = int (*)(unsigned);
  auto count = reinterpret_cast<StreamCount>(dlsym(sim, "xalsim_stream_count"));
  ASSERT_NE(count, nullptr);
  for (xal_bcomm_t*& c : comms_) {
    EXPECT_EQ(table_->comm_destroy(c), XAL_SUCCESS);
    c = nullptr;
  }
  const int blocking = count(0);
  const int non_blocking = count(CU_STREAM_NON_BLOCKING);
  make_comms(2000);
  EXPECT_EQ(count(0), blocking);
  EXPECT_EQ(count(CU_STREAM_NON_BLOCKING), non_blocking + 2);  // one per device
}

// A driver whose streams cannot wait for xal's host function threads (no
// cuStreamWaitValue32): the ranks' host functions would run on the
// driver's callback thread, where they may neither block nor call the
// driver. comm_create refuses with NOT_SUPPORTED, and the core then takes
// its own path (CudaSimXalPeer.WithoutWaitValueTheCoreTakesOver).
TEST_F(CudaPeerComm, WithoutWaitValueCreateIsRefused) {
  const ScopedEnv hide("XALSIM_CUDA_HIDE", "cuStreamWaitValue32");
  xal_backend_t* other = nullptr;
  ASSERT_EQ(init_instance(table_, &other), XAL_SUCCESS) << last_error().message;
  xal_bdevice_t* devices[2] = {nullptr, nullptr};
  ASSERT_EQ(table_->device_get(other, 0, &devices[0]), XAL_SUCCESS);
  ASSERT_EQ(table_->device_get(other, 1, &devices[1]), XAL_SUCCESS);
  xal_bcomm_t* out[2] = {nullptr, nullptr};
  EXPECT_EQ(table_->comm_create(devices, 2, nullptr, out), XAL_ERROR_NOT_SUPPORTED);
  EXPECT_NE(last_error().message.find("need host functions on xal's threads"), std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find("cuStreamWaitValue32"), std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->shutdown(other), XAL_SUCCESS);
}

// A stream whose host functions cannot run on xal's thread (its wait on
// host memory fails) is refused at once with the reason; the communicator
// is not broken.
TEST_F(CudaPeerComm, StreamWithoutAHostFunctionThreadIsRefused) {
  xal_bstream_t* s = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &s), XAL_SUCCESS);
  xal_devptr_t a = alloc(dev0_, 64);
  {
    const ScopedEnv fail("XALSIM_CUDA_FAIL", "cuStreamWaitValue32=801");
    EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, s),
              XAL_ERROR_NOT_SUPPORTED);
  }
  EXPECT_NE(last_error().message.find(
                "this stream cannot have them (cuStreamWaitValue32: CUDA_ERROR_NOT_SUPPORTED"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(async_error(0), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_destroy(s), XAL_SUCCESS);
  table_->mem_free(dev0_, a);
}

// A host function that holds its stream until `*released`: what is
// queued behind it cannot be reached by the driver before the test lets it.
void hold_until(void* released) {
  auto* flag = static_cast<std::atomic<bool>*>(released);
  while (!flag->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// A part whose stream could not wait for xal's thread after it was queued
// (cuStreamWaitValue32 failed): the driver calls it on its own thread,
// where it does not run the collective (no blocking, no driver call): the
// communicator breaks with the reason, and the other rank is woken.
TEST_F(CudaPeerComm, PartOnTheDriversThreadBreaksTheCommunicator) {
  make_comms(0);  // no timeout: only the failure can wake rank 1
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  // stream0_'s thread exists; the wait behind the next host function fails.
  // The stream is held until the allreduce has been queued: else the
  // driver may reach its part before the failed wait marks it as the
  // driver's to run (xal's thread then runs it, and nothing breaks).
  std::atomic<bool> released{false};
  ASSERT_EQ(table_->stream_enqueue_host_func(stream0_, hold_until, &released), XAL_SUCCESS);
  {
    const ScopedEnv fail("XALSIM_CUDA_FAIL", "cuStreamWaitValue32=801");
    EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_SUCCESS);
  }
  released = true;
  {
    const Watchdog watchdog("the ranks' streams", std::chrono::seconds(30));
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(1), XAL_ERROR_BACKEND);
  EXPECT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_ERROR_BACKEND);
  EXPECT_NE(last_error().message.find("rank 0's part reached the driver's callback thread"),
            std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A rank that never comes: the waiting rank gives up after the timeout,
// its stream goes on, and the communicator stays broken with TIMEOUT.
TEST_F(CudaPeerComm, MissingRankTimesOutAndBreaksTheCommunicator) {
  make_comms(200);
  xal_devptr_t a = alloc(dev0_, 64);
  ASSERT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
  EXPECT_EQ(async_error(0), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(async_error(1), XAL_ERROR_TIMEOUT);
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_ERROR_TIMEOUT);
  EXPECT_NE(last_error().message.find("timed out after 200 ms waiting for rank(s) 1"), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
}

// The timeout is for the ranks to come, not for the collective to run: one
// that takes longer than the timeout (slow kernels) still ends right.
TEST_F(CudaPeerComm, CollectiveLongerThanTheTimeoutIsNotCut) {
  make_comms(50);
  constexpr size_t kCount = 1000;
  xal_devptr_t a = alloc(dev0_, kCount * sizeof(float));
  xal_devptr_t b = alloc(dev1_, kCount * sizeof(float));
  put(stream0_, a, std::vector<float>(kCount, 1.0f));
  put(stream1_, b, std::vector<float>(kCount, 2.0f));
  {
    ScopedEnv slow("XALSIM_CUDA_KERNEL_MS", "300");
    ASSERT_EQ(table_->allreduce(comms_[0], a, a, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_SUCCESS);
    ASSERT_EQ(table_->allreduce(comms_[1], b, b, kCount, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
              XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  EXPECT_EQ(async_error(0), XAL_SUCCESS) << last_error().message;
  EXPECT_EQ(get(stream0_, a, kCount), std::vector<float>(kCount, 3.0f));
  EXPECT_EQ(get(stream1_, b, kCount), std::vector<float>(kCount, 3.0f));
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

TEST_F(CudaPeerComm, RanksThatDisagreeGetCollectiveMismatch) {
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  allreduce_disagreeing(a, b);
  EXPECT_EQ(async_error(0), XAL_ERROR_COLLECTIVE_MISMATCH);
  // The next call says how they differed (which rank came first varies).
  EXPECT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
            XAL_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_NE(last_error().message.find("the ranks disagree on call 0: rank "), std::string::npos)
      << last_error().message;
  EXPECT_NE(last_error().message.find(" called with count "), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A rank whose part cannot be queued breaks the communicator: the others
// do not wait for it, and later calls fail at once with its error.
TEST_F(CudaPeerComm, PartThatCannotBeQueuedBreaksTheCommunicator) {
  make_comms(0);  // no timeout: only the failure can wake rank 1
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  ASSERT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  xal_status_t failed = XAL_SUCCESS;
  {
    ScopedEnv fail("XALSIM_CUDA_FAIL", "cuLaunchHostFunc=1");
    failed = table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_);
  }
  ASSERT_NE(failed, XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);  // rank 1 is not left waiting
  EXPECT_EQ(async_error(1), failed);
  EXPECT_EQ(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_), failed);
  EXPECT_NE(last_error().message.find("rank 0 could not queue its part"), std::string::npos)
      << last_error().message;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
}

// A device reset takes the communicator's streams and scratch memory with
// the old context: the next call breaks the communicator with an error
// (as NCCL's must be made again after a reset), without a crash or a hang,
// and it is destroyed cleanly.
TEST_F(CudaPeerComm, DeviceResetBreaksTheCommunicatorCleanly) {
  make_comms(2000);
  ASSERT_EQ(table_->device_reset(dev0_), XAL_SUCCESS) << last_error().message;
  xal_bstream_t* s0 = nullptr;
  ASSERT_EQ(table_->stream_create(dev0_, 0, &s0), XAL_SUCCESS) << last_error().message;
  xal_devptr_t a = alloc(dev0_, 64);
  xal_devptr_t b = alloc(dev1_, 64);
  const xal_status_t q0 =
      table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, s0);
  const xal_status_t q1 =
      table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_);
  EXPECT_EQ(q0, XAL_SUCCESS);
  EXPECT_EQ(q1, XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(s0), XAL_SUCCESS);
  EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  EXPECT_NE(async_error(0), XAL_SUCCESS);
  EXPECT_NE(async_error(1), XAL_SUCCESS);
  EXPECT_NE(table_->allreduce(comms_[1], b, b, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
            XAL_SUCCESS);
  // The cause, found in a host function, is in the message.
  EXPECT_NE(last_error().message.find("failed on the device: cuda: the stream was invalidated "
                                      "by xal_device_reset"),
            std::string::npos)
      << last_error().message;
  EXPECT_EQ(table_->comm_destroy(comms_[0]), XAL_SUCCESS);
  EXPECT_EQ(table_->comm_destroy(comms_[1]), XAL_SUCCESS);
  comms_[0] = comms_[1] = nullptr;
  table_->mem_free(dev0_, a);
  table_->mem_free(dev1_, b);
  EXPECT_EQ(table_->stream_destroy(s0), XAL_SUCCESS);
}

#else
TEST(CudaPeerComm, NeedsTheEmbeddedKernels) {
  GTEST_SKIP() << "built without nvcc: no embedded kernels, no peer collectives";
}
#endif

}  // namespace
}  // namespace xal::cuda::test
