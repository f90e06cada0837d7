#include "comm_split.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "../error.hpp"

namespace xal::core {

std::vector<uint32_t> split_members(const std::vector<SplitArgs>& args, int32_t color) {
  std::vector<uint32_t> m;
  for (uint32_t r = 0; r < args.size(); ++r)
    if (args[r].color == color) m.push_back(r);
  std::stable_sort(m.begin(), m.end(),
                   [&](uint32_t a, uint32_t b) { return args[a].key < args[b].key; });
  return m;
}

void SplitMeet::make_children(Round& r) {
  std::set<int32_t> colors;
  for (const SplitArgs& a : r.args)
    if (a.color >= 0) colors.insert(a.color);
  r.child.assign(devices_.size(), nullptr);
  for (int32_t color : colors) {
    const std::vector<uint32_t> members = split_members(r.args, color);
    std::vector<DeviceObj*> devs;
    for (uint32_t m : members) devs.push_back(devices_[m]);
    std::vector<xal_comm_t> made(devs.size(), nullptr);
    const xal_status_t s = create_comm_handles(devs, r.args[members[0]].timeout_ms, made.data());
    if (s != XAL_SUCCESS) {
      xal_error_info_t e{};
      e.struct_size = sizeof e;
      xal_last_error(&e);
      r.status = s;
      r.why = cat("the child of color ", color, " could not be made: ", e.message);
      for (xal_comm_t c : r.child)
        if (c) xal_comm_destroy(c);
      r.child.assign(devices_.size(), nullptr);
      return;
    }
    for (size_t i = 0; i < members.size(); ++i) r.child[members[i]] = made[i];
  }
}

xal_status_t SplitMeet::arrive(const SplitArgs& args, xal_comm_t* out_comm) {
  return arrive_at(args.rank, args, out_comm);
}

xal_status_t SplitMeet::arrive_at(uint32_t index, const SplitArgs& args, xal_comm_t* out_comm) {
  const auto n = static_cast<uint32_t>(devices_.size());
  std::unique_lock lock(mu_);
  next_.resize(n, 0);
  const uint64_t id = next_[index]++;
  Round& r = rounds_[id];
  if (r.args.empty()) {
    r.args.resize(n);
    r.here.assign(n, false);
  }
  r.args[index] = args;
  r.here[index] = true;
  if (++r.arrived == n && !r.done) {
    if (maker_) {
      r.child.assign(n, nullptr);
      r.status = maker_(r.args, r.child, &r.why);
    } else {
      make_children(r);
    }
    r.done = true;
    cv_.notify_all();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  if (!cv_.wait_until(lock, deadline, [&] { return r.done; })) {
    std::string missing;
    for (uint32_t i = 0; i < n; ++i)
      if (!r.here[i]) missing += cat(missing.empty() ? "" : ", ", i);
    r.done = true;
    r.status = XAL_ERROR_TIMEOUT;
    r.why = cat("ranks ", missing, " did not call xal_comm_split within ", timeout_ms_,
                " ms (XAL_COMM_TIMEOUT_MS)");
    cv_.notify_all();
  }
  const xal_status_t s = r.status;
  const std::string why = r.why;
  if (s == XAL_SUCCESS) *out_comm = r.child[index];
  if (++r.left == n) rounds_.erase(id);
  if (s != XAL_SUCCESS) return fail(devices_[index], s, cat("xal_comm_split: ", why));
  return XAL_SUCCESS;
}

}  // namespace xal::core
