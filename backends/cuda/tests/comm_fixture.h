// comm_fixture.h -- two communicators over the two simulated devices, made
// through the plugin's table, for the tests of its native collectives: on
// peer copies (XAL_CUDA_COLLECTIVES=peer) and on the simulated NCCL
// (XAL_CUDA_NCCL). SIMULATION ONLY.
#pragma once

#include <deque>
#include <vector>

#include "plugin_fixture.h"

namespace xal::cuda::test {

class CudaComm : public CudaSim {
 protected:
  void SetUp() override {
    CudaSim::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_NE(table_->comm_create, nullptr) << "the table has no native collectives";
    make_comms(2000);
  }
  void TearDown() override {
    for (xal_bcomm_t* c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(table_->comm_destroy(c), XAL_SUCCESS);
      }
    }
    CudaSim::TearDown();
  }

  void make_comms(uint32_t timeout_ms) {
    for (xal_bcomm_t*& c : comms_) {
      if (c != nullptr) table_->comm_destroy(c);
      c = nullptr;
    }
    xal_bdevice_t* devices[2] = {dev0_, dev1_};
    xal_bcomm_options_t options{};
    options.struct_size = sizeof options;
    options.timeout_ms = timeout_ms;
    ASSERT_EQ(table_->comm_create(devices, 2, &options, comms_), XAL_SUCCESS)
        << last_error().message;
  }

  // Queues a copy of `values` to dst; the host copy lives as long as the test
  // (the copy is asynchronous).
  void put(xal_bstream_t* stream, xal_devptr_t dst, std::vector<float> values) {
    const std::vector<float>& kept = kept_.emplace_back(std::move(values));
    ASSERT_EQ(table_->memcpy_htod(stream, dst, kept.data(), kept.size() * sizeof(float)),
              XAL_SUCCESS);
  }
  std::vector<float> get(xal_bstream_t* stream, xal_devptr_t src, size_t count) {
    std::vector<float> out(count);
    EXPECT_EQ(table_->memcpy_dtoh(stream, out.data(), src, count * sizeof(float)), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream), XAL_SUCCESS);
    return out;
  }
  // Queues an allreduce of 16 floats on rank 0 and of 8 on rank 1 (ranks
  // that disagree), in a and b, and waits for both streams.
  void allreduce_disagreeing(xal_devptr_t a, xal_devptr_t b) {
    ASSERT_EQ(table_->allreduce(comms_[0], a, a, 16, XAL_DTYPE_F32, XAL_OP_SUM, stream0_),
              XAL_SUCCESS);
    ASSERT_EQ(table_->allreduce(comms_[1], b, b, 8, XAL_DTYPE_F32, XAL_OP_SUM, stream1_),
              XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream0_), XAL_SUCCESS);
    EXPECT_EQ(table_->stream_synchronize(stream1_), XAL_SUCCESS);
  }
  xal_status_t async_error(int rank) {
    xal_status_t e = XAL_ERROR_INTERNAL;
    EXPECT_EQ(table_->comm_get_async_error(comms_[rank], &e), XAL_SUCCESS);
    return e;
  }

  xal_bcomm_t* comms_[2] = {nullptr, nullptr};
  std::deque<std::vector<float>> kept_;
};

// The values written before the call on each rank's stream go in; the

}  // namespace xal::cuda::test
