// ShmTransport's split (xal_transport.h, ABI 1.1): collective over the
// segment's processes. Two all-gathers over the parent itself: every
// process's (color, key), then the name of the segment each color's first
// process (lowest key, then rank) created for its color; the others open
// that segment, and its creator removes the name once all have.
#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "entry_guard.hpp"
#include "shm_transport.hpp"

namespace xal::torch_backend {

namespace {

constexpr size_t kNameBytes = 64;

struct Choice {
  int32_t color, key;
};

// Writes `why` into the entry's message and returns s.
xal_status_t split_failed(xal_status_t s, const std::string& why, char* message,
                          size_t message_size) {
  if (message && message_size) std::snprintf(message, message_size, "split: %s", why.c_str());
  return s;
}

}  // namespace

std::string ShmTransport::unique_name() {
  std::random_device rd;
  const uint64_t a = (uint64_t{rd()} << 32) ^ rd();
  char buf[kNameBytes];
  std::snprintf(buf, sizeof buf, "/xal_torch_%d_%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(a));
  return buf;
}

xal_status_t ShmTransport::split(void* user, int32_t color, int32_t key,
                                 xal_comm_transport_t* out_child, char* message,
                                 size_t message_size) {
  return guarded_entry("split", message, message_size, [&]() -> xal_status_t {
    auto& t = *static_cast<ShmTransport*>(user);
    if (!out_child)
      return split_failed(XAL_ERROR_INVALID_ARGUMENT, "out_child is NULL", message, message_size);
    *out_child = xal_comm_transport_t{};
    t.split_child_ = nullptr;
    const uint32_t n = t.size_;
    const std::vector<size_t> bytes_each(n, sizeof(Choice));
    std::vector<size_t> displs(n);
    for (uint32_t p = 0; p < n; ++p) displs[p] = p * sizeof(Choice);
    std::vector<Choice> all(n);
    all[t.rank_] = {color < 0 ? -1 : color, key};
    if (xal_status_t s = allgatherv(&t, all.data(), bytes_each.data(), displs.data(),
                                    t.split_timeout_ms_, message, message_size);
        s != XAL_SUCCESS)
      return s;
    // This color's processes in child order; the first creates the segment.
    std::vector<uint32_t> members;
    if (color >= 0) {
      for (uint32_t p = 0; p < n; ++p)
        if (all[p].color == color) members.push_back(p);
      std::stable_sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
        return all[a].key < all[b].key;
      });
    }
    std::unique_ptr<ShmTransport> child;
    std::vector<char> names(n * kNameBytes, '\0');
    const bool first = !members.empty() && members[0] == t.rank_;
    std::string made_error;
    if (first) {
      const std::string name = unique_name();
      try {
        child = open(name, true, 0, static_cast<uint32_t>(members.size()), t.slot_bytes_);
        std::memcpy(&names[t.rank_ * kNameBytes], name.c_str(), name.size());
      } catch (const std::exception& e) {
        made_error = e.what();  // the others see an empty name
      }
    }
    const std::vector<size_t> name_bytes(n, kNameBytes);
    std::vector<size_t> name_displs(n);
    for (uint32_t p = 0; p < n; ++p) name_displs[p] = p * kNameBytes;
    if (xal_status_t s = allgatherv(&t, names.data(), name_bytes.data(), name_displs.data(),
                                    t.split_timeout_ms_, message, message_size);
        s != XAL_SUCCESS)
      return s;
    if (members.empty()) return XAL_SUCCESS;  // no color: no child
    const std::string name(&names[members[0] * kNameBytes],
                           strnlen(&names[members[0] * kNameBytes], kNameBytes));
    if (name.empty())
      return split_failed(XAL_ERROR_OUT_OF_HOST_MEMORY,
                          "process " + std::to_string(members[0]) +
                              " could not make the segment of color " + std::to_string(color) +
                              (made_error.empty() ? "" : ": " + made_error),
                          message, message_size);
    try {
      if (!first) {
        const auto me = static_cast<uint32_t>(
            std::find(members.begin(), members.end(), t.rank_) - members.begin());
        child = open(name, false, me, static_cast<uint32_t>(members.size()), t.slot_bytes_);
      }
      child->wait_attached_and_unlink(t.split_timeout_ms_);
    } catch (const std::exception& e) {
      return split_failed(XAL_ERROR_TIMEOUT, e.what(), message, message_size);
    }
    child->set_split_timeout(t.split_timeout_ms_);
    *out_child = child->table();
    t.split_child_ = child.release();  // owned through the table's release
    return XAL_SUCCESS;
  });
}

}  // namespace xal::torch_backend
