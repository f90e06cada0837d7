// xal_comm_split in one process: the ranks of a communicator meet
// (their k-th split with each other's k-th), and the last to arrive makes
// each color's child through the creation code of xal_comm_create over the
// devices of that color, ordered by key then parent rank, so that a child
// whose devices are of one backend with native collectives takes the
// native path. Waits end with TIMEOUT after the parent's timeout.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <map>
#include <mutex>
#include <vector>

#include "../comm.hpp"

namespace xal::core {

class SplitMeet {
 public:
  // Makes the children once every rank arrived: child[i] for the i-th rank
  // that meets here (null for no color). Returns an error with *why.
  using Maker = std::function<xal_status_t(const std::vector<SplitArgs>& args,
                                           std::vector<xal_comm_t>& child, std::string* why)>;
  // `devices`: the ranks that meet here, in rank order; `maker` null: the
  // one-process children above.
  SplitMeet(std::vector<DeviceObj*> devices, uint32_t timeout_ms, Maker maker = {})
      : devices_(std::move(devices)), timeout_ms_(timeout_ms), maker_(std::move(maker)) {}

  // Rank `index` of the meeting (its local index) with `args`.
  xal_status_t arrive_at(uint32_t index, const SplitArgs& args, xal_comm_t* out_comm);

  // Rank args.rank's part; *out_comm is its child, or null for a negative
  // color. Returns an error with the detail set.
  xal_status_t arrive(const SplitArgs& args, xal_comm_t* out_comm);

 private:
  struct Round {
    std::vector<SplitArgs> args;
    std::vector<bool> here;
    uint32_t arrived = 0;
    uint32_t left = 0;  // ranks that took their result
    bool done = false;
    xal_status_t status = XAL_SUCCESS;
    std::string why;
    std::vector<xal_comm_t> child;  // per parent rank
  };
  void make_children(Round& r);  // with mu_ held

  const std::vector<DeviceObj*> devices_;
  const uint32_t timeout_ms_;
  const Maker maker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Round> rounds_;
  std::vector<uint64_t> next_;  // per rank: its next round
};

// The common parts of a split on any path: the check of the result, the
// members of `color` ordered by key, then parent rank.
std::vector<uint32_t> split_members(const std::vector<SplitArgs>& args, int32_t color);

}  // namespace xal::core
