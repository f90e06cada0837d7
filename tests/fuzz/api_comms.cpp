// Steps of the API-sequence target on communicators: made over random
// subsets of the devices (one or two ranks, in either order, on cards or
// partitions); split and dup; destroy in any order; and misuse (foreign
// streams, bad dtypes, ops, roots and ranges, dead handles) refused
// before anything is queued. Their collectives: api_collectives.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "api_sequence.hpp"

namespace xal::fuzz {

void Sequence::comm_create() {
  if (m_.comms.size() >= kMaxLive) return;
  std::vector<Pick> cards;
  for (const Pick& p : live_cards(m_))
    if (!m_.cards[p.index].partitioned) cards.push_back(p);
  std::vector<xal_device_t> devs;
  std::vector<uint32_t> slots;
  const uint8_t c = in_->byte() % 16;
  xal_status_t want = XAL_SUCCESS;
  if (c == 13 && !cards.empty()) {  // a device twice
    const Pick p = cards[in_->below(cards.size())];
    devs = {static_cast<xal_device_t>(p.handle), static_cast<xal_device_t>(p.handle)};
    want = XAL_ERROR_INVALID_ARGUMENT;
  } else if (c == 14) {  // a dead or forged device
    const Pick p = pick_card(*in_, m_);
    devs = {static_cast<xal_device_t>(p.handle)};
    if (p.index >= 0) return;
    want = refused(m_);
  } else if (c == 15) {  // no devices
    devs.resize(1);
    want = m_.initialised ? XAL_ERROR_INVALID_ARGUMENT : XAL_ERROR_NOT_INITIALIZED;
  } else {
    // One or two ranks, no two on one card (nor two partitions of one).
    const size_t n = 1 + in_->below(2);
    for (size_t i = 0; i < n && !cards.empty(); ++i) {
      const size_t k = in_->below(cards.size());
      const auto slot = static_cast<uint32_t>(cards[k].index);
      devs.push_back(static_cast<xal_device_t>(cards[k].handle));
      slots.push_back(slot);
      std::erase_if(cards, [&](const Pick& p) {
        return m_.card_of(static_cast<uint32_t>(p.index)) == m_.card_of(slot);
      });
    }
    if (devs.empty()) return;
  }
  xal_comm_options_t options{};
  options.struct_size = sizeof options;
  options.timeout_ms = 5000;  // a hang is a finding, found within the fuzzer's time-out
  std::vector<xal_comm_t> comms(devs.size());
  const xal_status_t s =
      xal_comm_create(devs.data(), c == 15 ? 0 : static_cast<uint32_t>(devs.size()), &options,
                      comms.data());
  expect(s, want, "xal_comm_create");
  expect_detail(s, "xal_comm_create");
  if (s != XAL_SUCCESS) return;
  m_.comms.push_back({slots, comms, std::vector<bool>(comms.size(), true)});
  for (size_t r = 0; r < comms.size(); ++r) {
    xal_comm_info_t info{};
    info.struct_size = sizeof info;
    expect(xal_comm_get_info(comms[r], &info), XAL_SUCCESS, "xal_comm_get_info");
    XAL_FUZZ_CHECK(info.rank == r && info.size == comms.size() && info.device == devs[r],
                   "xal_comm_get_info: not the rank, size or device it was made with");
  }
}

void Sequence::comm_destroy() {
  const Pick p = pick(*in_, m_, live_comms(m_), live_streams(m_));
  const xal_status_t s = xal_comm_destroy(static_cast<xal_comm_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_comm_destroy");
  expect_detail(s, "xal_comm_destroy");
  if (p.index < 0) return;  // a live one is gone whatever the backend said
  CommSet& set = m_.comms[static_cast<size_t>(p.index) / kRanksPerSet];
  set.live[static_cast<size_t>(p.index) % kRanksPerSet] = false;
  retire(p.handle);
}

// xal_comm_split (or xal_comm_dup) of every rank, one thread inside a
// group: a child per color, its ranks ordered by key, then parent rank.
void Sequence::split(size_t set_index) {
  const CommSet parent = m_.comms[set_index];
  const size_t n = parent.comms.size();
  const bool dup = in_->byte() % 4 == 0;
  std::vector<int32_t> color(n), key(n);
  for (size_t r = 0; r < n; ++r) {
    const uint8_t c = in_->byte() % 4;
    color[r] = dup ? 0 : c == 3 ? XAL_COMM_SPLIT_NOCOLOR : c % 2;
    key[r] = dup ? static_cast<int32_t>(r) : static_cast<int32_t>(in_->below(4)) - 1;
  }
  std::vector<xal_comm_t> out(n, nullptr);
  expect(xal_group_start(), XAL_SUCCESS, "xal_group_start");
  for (size_t r = 0; r < n; ++r) {
    const xal_status_t s = dup ? xal_comm_dup(parent.comms[r], &out[r])
                               : xal_comm_split(parent.comms[r], color[r], key[r], nullptr, &out[r]);
    expect(s, XAL_SUCCESS, dup ? "xal_comm_dup" : "xal_comm_split");
  }
  const xal_status_t end = xal_group_end();
  expect(end, XAL_SUCCESS, "xal_group_end of a split");
  if (end != XAL_SUCCESS) return;
  for (int32_t c = 0; c < 2; ++c) {
    std::vector<size_t> ranks;
    for (size_t r = 0; r < n; ++r)
      if (color[r] == c) ranks.push_back(r);
    if (ranks.empty()) continue;
    std::stable_sort(ranks.begin(), ranks.end(),
                     [&](size_t a, size_t b) { return key[a] < key[b]; });
    CommSet child;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const size_t r = ranks[i];
      XAL_FUZZ_CHECK(out[r] != nullptr, "a split gave no communicator to a rank with a color");
      xal_comm_info_t info{};
      info.struct_size = sizeof info;
      expect(xal_comm_get_info(out[r], &info), XAL_SUCCESS, "xal_comm_get_info of a child");
      XAL_FUZZ_CHECK(info.rank == i && info.size == ranks.size(),
                     "a split's child: rank " + std::to_string(info.rank) + " of " +
                         std::to_string(info.size) + ", the model " + std::to_string(i) +
                         " of " + std::to_string(ranks.size()));
      child.devices.push_back(parent.devices[r]);
      child.comms.push_back(out[r]);
      child.live.push_back(true);
    }
    m_.comms.push_back(std::move(child));
  }
  for (size_t r = 0; r < n; ++r)
    if (color[r] < 0)
      XAL_FUZZ_CHECK(out[r] == nullptr, "a split gave a communicator to XAL_COMM_SPLIT_NOCOLOR");
}

// Calls refused before anything is queued: dead and forged communicators,
// a stream of another device, dtypes, ops and roots out of range, ranges
// past an allocation; the communicator's queries; abort.
void Sequence::comm_misuse() {
  const Pick p = pick(*in_, m_, live_comms(m_), live_events(m_));
  const auto comm = static_cast<xal_comm_t>(p.handle);
  CommSet* set = p.index < 0 ? nullptr : &m_.comms[static_cast<size_t>(p.index) / kRanksPerSet];
  const size_t rank = p.index < 0 ? 0 : static_cast<size_t>(p.index) % kRanksPerSet;
  const uint32_t slot = set ? set->devices[rank] : 0;
  const Pick sp = pick_stream(*in_, m_);
  const uint8_t c = in_->byte() % 8;
  if (c == 0) {  // queries
    xal_status_t error = XAL_SUCCESS;
    const xal_status_t s = xal_comm_get_async_error(comm, &error);
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_comm_get_async_error");
    if (s == XAL_SUCCESS && !set->aborted)
      XAL_FUZZ_CHECK(error == XAL_SUCCESS, std::string("a communicator's async error: ") +
                                               xal_status_name(error));
    xal_comm_info_t info{};
    info.struct_size = in_->byte() % 2 ? 4 : sizeof info;
    const xal_status_t i = xal_comm_get_info(comm, &info);
    expect(i, p.index < 0 ? refused(m_)
              : info.struct_size == 4 ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS,
           "xal_comm_get_info");
    expect_detail(i, "xal_comm_get_info");
    return;
  }
  if (c == 7) {  // abort: the whole communicator's pending and later calls end
    const xal_status_t s = xal_comm_abort(comm);
    expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_comm_abort");
    if (s == XAL_SUCCESS) set->aborted = true;
    return;
  }
  // An allreduce or broadcast with one thing wrong.
  const Range r = pick_range(*in_, m_, slot);
  uint64_t count = r.bytes / 4;
  int32_t dtype = XAL_DTYPE_U32, op = XAL_OP_SUM;
  uint32_t root = 0;
  xal_status_t want = XAL_SUCCESS;
  const bool stream_ok = sp.index >= 0 && m_.streams[sp.index].device == slot;
  if (p.index < 0 || sp.index < 0) {
    want = refused(m_);
  } else if (!stream_ok) {
    want = XAL_ERROR_INVALID_ARGUMENT;
  } else {
    switch (c) {
      case 2: dtype = XAL_DTYPE_COUNT + static_cast<int32_t>(in_->below(100)); break;
      case 3: op = XAL_OP_COUNT + static_cast<int32_t>(in_->below(100)); break;
      case 4: root = static_cast<uint32_t>(set->comms.size() + in_->below(4)); break;
      default:  // 1, 5, 6
        if (count == 0 || m_.holding(slot, r.ptr, count * 4)) return;  // a valid call
        want = XAL_ERROR_OUT_OF_BOUNDS;
        break;
    }
    if (c >= 2 && c <= 4) want = XAL_ERROR_INVALID_ARGUMENT;
  }
  const auto st = static_cast<xal_stream_t>(sp.handle);
  const xal_status_t s =
      c == 4 || c == 6 ? xal_broadcast(comm, r.ptr, r.ptr, count, static_cast<xal_dtype_t>(dtype),
                                       root, st)
                       : xal_allreduce(comm, r.ptr, r.ptr, count, static_cast<xal_dtype_t>(dtype),
                                       static_cast<xal_op_t>(op), st);
  expect(s, want, "a collective that must be refused");
  expect_detail(s, "a collective that must be refused");
}

}  // namespace xal::fuzz
