// The API-sequence target's collectives: allreduce, broadcast, reduce,
// allgather, reduce-scatter, all-to-all and a send/recv ring of random
// unsigned dtypes, exact ops and counts, on a whole communicator set,
// driven for every rank by one thread inside a group, then read back
// against the model.
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

}  // namespace xal::fuzz
