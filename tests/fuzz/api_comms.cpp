// Steps of the API-sequence target on communicators: made over random
// subsets of the devices (one or two ranks, in either order, on cards or
// partitions), collectives and point-to-point of random kinds, dtypes, ops
// and counts driven for every rank by one thread inside a group, then
// read back against the model; split and dup; destroy in any order; and
// misuse (foreign streams, bad dtypes, ops, roots and ranges, dead
// handles) refused before anything is queued.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "api_sequence.hpp"

namespace xal::fuzz {
namespace {

enum Kind { kAllreduce, kBroadcast, kReduce, kAllgather, kReduceScatter, kAlltoall, kRing, kKinds };

// Unsigned dtypes (wrapping sums are defined) and the ops that are exact.
const xal_dtype_t kDtypes[] = {XAL_DTYPE_U8, XAL_DTYPE_U32, XAL_DTYPE_U64};
const xal_op_t kOps[] = {XAL_OP_SUM, XAL_OP_PROD, XAL_OP_MIN, XAL_OP_MAX};

uint64_t load(const uint8_t* p, size_t es) {
  uint64_t v = 0;
  std::memcpy(&v, p, es);  // little-endian
  return v;
}
void store(uint8_t* p, size_t es, uint64_t v) { std::memcpy(p, &v, es); }
uint64_t combine(xal_op_t op, uint64_t a, uint64_t b, size_t es) {
  const uint64_t mask = es == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * es)) - 1;
  switch (op) {
    case XAL_OP_SUM: return (a + b) & mask;
    case XAL_OP_PROD: return (a * b) & mask;
    case XAL_OP_MIN: return std::min(a, b);
    default: return std::max(a, b);
  }
}

// A device range of the model: its allocation and offset.
struct Buf {
  Alloc* alloc = nullptr;
  uint64_t off = 0;
  xal_devptr_t ptr() const { return alloc->ptr + off; }
};

// The model's bytes of `n` bytes at `b` (empty when some are unknown).
std::vector<uint8_t> known_bytes(const Buf& b, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (!b.alloc->known[b.off + i]) return {};
  return {b.alloc->bytes.begin() + static_cast<ptrdiff_t>(b.off),
          b.alloc->bytes.begin() + static_cast<ptrdiff_t>(b.off + n)};
}

void set_bytes(Buf& b, uint64_t at, const std::vector<uint8_t>& v, uint64_t n) {
  uint8_t* known = b.alloc->known.data() + b.off + at;
  if (v.empty()) {
    std::fill_n(known, n, 0);
    return;
  }
  std::memcpy(b.alloc->bytes.data() + b.off + at, v.data(), n);
  std::fill_n(known, n, 1);
}

}  // namespace

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
  std::vector<Pick> live;
  for (size_t i = 0; i < m_.comms.size(); ++i)
    for (size_t r = 0; r < m_.comms[i].comms.size(); ++r)
      if (m_.comms[i].live[r]) live.push_back({m_.comms[i].comms[r], static_cast<int>(i * 8 + r)});
  const Pick p = pick(*in_, m_, live, live_streams(m_));
  const xal_status_t s = xal_comm_destroy(static_cast<xal_comm_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_comm_destroy");
  expect_detail(s, "xal_comm_destroy");
  if (s != XAL_SUCCESS) return;
  CommSet& set = m_.comms[static_cast<size_t>(p.index) / 8];
  set.live[static_cast<size_t>(p.index) % 8] = false;
  retire(p.handle);
}

// A tracked live allocation of `slot` with `bytes` free from `offset` on,
// other than `other`; else a new one (nullptr when there is none).
static Alloc* find_buffer(Model& m, uint32_t slot, uint64_t bytes, const Alloc* other,
                          Choices& in) {
  std::vector<size_t> fit;
  for (size_t i = 0; i < m.allocs.size(); ++i) {
    const Alloc& a = m.allocs[i];
    if (a.live && a.device == slot && a.tracked() && a.size >= bytes && &a != other)
      fit.push_back(i);
  }
  if (!fit.empty() && in.byte() % 4 != 0) return &m.allocs[fit[in.below(fit.size())]];
  Card& c = m.cards[slot];
  const uint64_t size = std::max<uint64_t>(bytes, 4096);
  if (m.live_allocs() >= kMaxLive || c.partitioned || (c.limit && c.used + size > c.limit) ||
      m.card_used(slot) + size > kCardBytes / 2)
    return nullptr;
  xal_devptr_t ptr = 0;
  const xal_status_t s = xal_mem_alloc(c.handle, size, &ptr);
  expect(s, XAL_SUCCESS, "xal_mem_alloc of a collective's buffer");
  if (s != XAL_SUCCESS) return nullptr;
  Alloc a{slot, ptr, size};
  a.bytes.assign(size, 0);
  a.known.assign(size, 0);
  m.allocs.push_back(std::move(a));
  c.used += size;
  return &m.allocs.back();
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

void Sequence::collective() {
  std::vector<size_t> usable;
  for (size_t i = 0; i < m_.comms.size(); ++i)
    if (m_.comms[i].whole() && !m_.comms[i].aborted && m_.initialised) usable.push_back(i);
  if (usable.empty()) return;
  const size_t set_index = usable[in_->below(usable.size())];
  const size_t n = m_.comms[set_index].comms.size();
  const auto kind = static_cast<Kind>(in_->below(kKinds + 1));
  if (kind == kKinds) {
    if (m_.comms.size() < kMaxLive) split(set_index);
    return;
  }
  const xal_dtype_t dtype = kDtypes[in_->below(std::size(kDtypes))];
  const xal_op_t op = kOps[in_->below(std::size(kOps))];
  const size_t es = dtype == XAL_DTYPE_U8 ? 1 : dtype == XAL_DTYPE_U32 ? 4 : 8;
  const uint64_t count = in_->below(65);
  const auto root = static_cast<uint32_t>(in_->below(n));
  const bool in_place = kind == kAllreduce && in_->byte() % 2;
  // Elements of each rank's send and receive buffers.
  const bool gathers = kind == kAllgather, scatters = kind == kReduceScatter || kind == kAlltoall;
  const uint64_t send_elems = scatters ? n * count : count;
  const uint64_t recv_elems = gathers || kind == kAlltoall ? n * count : count;
  // Per rank: a stream of its device, and its buffers (taken before any
  // call: taking one may allocate).
  std::vector<size_t> streams(n);
  std::vector<Buf> send(n), recv(n);
  m_.allocs.reserve(m_.allocs.size() + 2 * n);  // find_buffer's new ones move nothing
  for (size_t r = 0; r < n; ++r) {
    const uint32_t slot = m_.comms[set_index].devices[r];
    std::vector<size_t> mine;
    for (size_t i = 0; i < m_.streams.size(); ++i)
      if (m_.streams[i].live && m_.streams[i].device == slot) mine.push_back(i);
    if (mine.empty()) return;
    streams[r] = mine[in_->below(mine.size())];
    send[r].alloc = find_buffer(m_, slot, send_elems * es, nullptr, *in_);
    if (!send[r].alloc) return;
    recv[r].alloc = in_place ? send[r].alloc
                             : find_buffer(m_, slot, recv_elems * es, send[r].alloc, *in_);
    if (!recv[r].alloc) return;
  }
  // What each rank's receive buffer must hold afterwards (from the model's
  // bytes before the call; empty: unknown).
  std::vector<std::vector<uint8_t>> sent(n), want(n);
  for (size_t r = 0; r < n; ++r) sent[r] = known_bytes(send[r], send_elems * es);
  auto reduced = [&](uint64_t first, uint64_t elems) {  // over ranks, of send[.][first..]
    std::vector<uint8_t> out(elems * es);
    for (size_t r = 0; r < n; ++r) {
      if (sent[r].empty()) return std::vector<uint8_t>{};
      for (uint64_t e = 0; e < elems; ++e) {
        const uint64_t v = load(&sent[r][(first + e) * es], es);
        store(&out[e * es], es, r == 0 ? v : combine(op, load(&out[e * es], es), v, es));
      }
    }
    return out;
  };
  for (size_t r = 0; r < n; ++r) {
    std::vector<uint8_t>& w = want[r];
    switch (kind) {
      case kAllreduce: w = reduced(0, count); break;
      case kReduce: w = r == root ? reduced(0, count) : std::vector<uint8_t>{}; break;
      case kBroadcast: w = sent[root]; break;
      case kRing: w = sent[(r + n - 1) % n]; break;
      case kReduceScatter: w = reduced(r * count, count); break;
      case kAllgather: case kAlltoall: {
        // Block j from rank j: its whole send (allgather), its block r (alltoall).
        if (std::any_of(sent.begin(), sent.end(), [](const auto& v) { return v.empty(); })) break;
        const uint64_t from = kind == kAllgather ? 0 : r * count * es;
        for (size_t j = 0; j < n; ++j)
          w.insert(w.end(), sent[j].begin() + static_cast<ptrdiff_t>(from),
                   sent[j].begin() + static_cast<ptrdiff_t>(from + count * es));
        break;
      }
      default: break;
    }
  }
  for (size_t r = 0; r < n; ++r) {
    claim(send[r].alloc, streams[r]);
    claim(recv[r].alloc, streams[r]);
  }
  expect(xal_group_start(), XAL_SUCCESS, "xal_group_start");
  for (size_t r = 0; r < n; ++r) {
    const xal_comm_t c = m_.comms[set_index].comms[r];
    const xal_stream_t st = m_.streams[streams[r]].handle;
    const xal_devptr_t sp = send[r].ptr(), rp = in_place ? sp : recv[r].ptr();
    const auto peer_next = static_cast<uint32_t>((r + 1) % n);
    const auto peer_prev = static_cast<uint32_t>((r + n - 1) % n);
    xal_status_t s = XAL_SUCCESS;
    switch (kind) {
      case kAllreduce: s = xal_allreduce(c, sp, rp, count, dtype, op, st); break;
      case kBroadcast: s = xal_broadcast(c, sp, rp, count, dtype, root, st); break;
      case kReduce: s = xal_reduce(c, sp, rp, count, dtype, op, root, st); break;
      case kAllgather: s = xal_allgather(c, sp, rp, count, dtype, st); break;
      case kReduceScatter: s = xal_reduce_scatter(c, sp, rp, count, dtype, op, st); break;
      case kAlltoall: s = xal_alltoall(c, sp, rp, count, dtype, st); break;
      default:
        s = xal_send(c, sp, count, dtype, peer_next, st);
        expect(s, XAL_SUCCESS, "xal_send");
        s = xal_recv(c, rp, count, dtype, peer_prev, st);
    }
    expect(s, XAL_SUCCESS, "a collective of kind " + std::to_string(kind));
  }
  expect(xal_group_end(), XAL_SUCCESS, "xal_group_end");
  for (size_t r = 0; r < n; ++r) synced_call(streams[r]);
  // Reduce leaves the other ranks' receive buffers as they were.
  for (size_t r = 0; r < n; ++r)
    if (kind != kReduce || r == root) set_bytes(recv[r], 0, want[r], recv_elems * es);
  // Read back at once.
  for (size_t r = 0; r < n; ++r) {
    if (want[r].empty()) continue;
    std::vector<uint8_t> got(recv_elems * es);
    const xal_status_t s = xal_memcpy_dtoh(m_.streams[streams[r]].handle, got.data(),
                                           recv[r].ptr(), got.size());
    expect(s, XAL_SUCCESS, "xal_memcpy_dtoh after a collective");
    if (s != XAL_SUCCESS) continue;
    synced_call(streams[r]);
    XAL_FUZZ_CHECK(got == want[r], "collective of kind " + std::to_string(kind) + ", dtype " +
                                       std::to_string(dtype) + ", op " + std::to_string(op) +
                                       ", rank " + std::to_string(r) + " of " +
                                       std::to_string(n) + ": wrong result");
  }
}

// Calls refused before anything is queued: dead and forged communicators,
// a stream of another device, dtypes, ops and roots out of range, ranges
// past an allocation; the communicator's queries; abort.
void Sequence::comm_misuse() {
  std::vector<Pick> live;
  for (size_t i = 0; i < m_.comms.size(); ++i)
    for (size_t r = 0; r < m_.comms[i].comms.size(); ++r)
      if (m_.comms[i].live[r]) live.push_back({m_.comms[i].comms[r], static_cast<int>(i * 8 + r)});
  const Pick p = pick(*in_, m_, live, live_events(m_));
  const auto comm = static_cast<xal_comm_t>(p.handle);
  CommSet* set = p.index < 0 ? nullptr : &m_.comms[static_cast<size_t>(p.index) / 8];
  const size_t rank = p.index < 0 ? 0 : static_cast<size_t>(p.index) % 8;
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
