// Point-to-point (xal_send, xal_recv) through libxal's public ABI on a
// backend's native collective library, simulated (TESTS ONLY: the
// simulated NCCL of backends/testing over the vendor's simulated driver,
// two devices): NCCL's or RCCL's ncclSend/ncclRecv must carry the
// messages, which the simulated library's call counts prove. A backend's
// test instantiates the suite with its P2pCase, e.g.
//   INSTANTIATE_TEST_SUITE_P(Cuda, NativePointToPoint,
//                            ::testing::Values(kCuda), xaltest::p2p_case_name);
// The driver and the library come from the test's environment (CTest).
// The cases live in backends/testing/src/libxal_p2p_cases.cpp.
#pragma once

#include <gtest/gtest.h>

#include <xal/xal.h>

#include <string>
#include <vector>

namespace xaltest {

// What differs between the backends. The strings are static.
struct P2pCase {
  const char* backend;           // xal name: "cuda", "hip"
  const char* library_variable;  // names the simulated library: "XAL_CUDA_NCCL"
};

std::string p2p_case_name(const ::testing::TestParamInfo<P2pCase>& info);

// libxal on the backend alone, a native communicator over its two
// devices, a stream and two buffers of `kBytes` on each.
class NativePointToPoint : public ::testing::TestWithParam<P2pCase> {
 protected:
  static constexpr size_t kBytes = 1 << 16;
  void SetUp() override;
  void TearDown() override;

  // The simulated library's calls of `function` so far (-1 when it
  // cannot be asked).
  int calls(const char* function) const;
  // Fills rank r's send buffer with a pattern of its own; returns it.
  std::vector<unsigned char> fill(uint32_t r, size_t bytes);
  // Rank r's receive buffer.
  std::vector<unsigned char> received(uint32_t r, size_t bytes);

  std::vector<xal_device_t> devices_;
  std::vector<xal_comm_t> comms_;
  std::vector<xal_stream_t> streams_;
  std::vector<xal_devptr_t> send_, recv_;
  int (*call_count_)(const char*) = nullptr;
};

}  // namespace xaltest
