// Steps of the API-sequence target on interop (ABI 1.1): host memory
// imported as device memory (then copied to and from, and freed, like an
// allocation outside the quota), native streams adopted, host memory
// registered and unregistered, IPC handles made from allocations (and
// refused for anything else, and when opened by the process that made
// them, as xal.h says).
#include <cstring>
#include <string>
#include <vector>

#include "api_sequence.hpp"
#include "xal/xal_backend.h"

namespace xal::fuzz {
namespace {

// Host memory that lives until the sequence ends, filled with a pattern.
uint8_t* host_memory(Model& m, uint64_t bytes, uint8_t seed) {
  m.host.push_back(std::make_unique<std::vector<uint8_t>>(bytes));
  std::vector<uint8_t>& v = *m.host.back();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(seed + 3 * i);
  return v.data();
}

bool overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return a < b + bn && b < a + an; }

}  // namespace

void Sequence::mem_import() {
  if (m_.live_allocs() >= kMaxLive || m_.host.size() >= 64) return;
  const Pick p = pick_card(*in_, m_);
  const uint64_t bytes = 1 + in_->below(65536);
  uint8_t* host = host_memory(m_, bytes, in_->byte());
  auto native = reinterpret_cast<uint64_t>(host);
  uint64_t size = bytes;
  uint32_t flags = XAL_MEM_IMPORT_HOST;
  xal_status_t want = XAL_SUCCESS;
  const uint8_t c = in_->byte() % 16;
  // 0-9: a new host range; else a range already imported, 0 bytes, a
  // range that wraps, unknown flags, host memory without the flag.
  if (c == 10) {
    for (const Alloc& a : m_.allocs)
      if (a.live && a.imported && p.index >= 0 && a.device == static_cast<uint32_t>(p.index))
        native = a.ptr + in_->below(a.size);
    if (native != reinterpret_cast<uint64_t>(host)) want = XAL_ERROR_INVALID_ARGUMENT;
  }
  if (c == 11) size = 0;
  if (c == 12) size = ~uint64_t{0} - native + 2;
  if (c == 13) flags |= 0x10u;
  if (c == 14) flags = 0;
  if (c >= 11 && c <= 14) want = XAL_ERROR_INVALID_ARGUMENT;
  if (p.index < 0) want = refused(m_);
  else if (m_.cards[p.index].partitioned && want == XAL_SUCCESS) want = XAL_ERROR_INVALID_ARGUMENT;
  xal_devptr_t ptr = 0;
  const xal_status_t s =
      xal_mem_import(static_cast<xal_device_t>(p.handle), native, size, flags, &ptr);
  expect(s, want, "xal_mem_import");
  expect_detail(s, "xal_mem_import");
  if (s != XAL_SUCCESS) return;
  XAL_FUZZ_CHECK(ptr == native, "the mock imports host memory in place");
  Alloc a{static_cast<uint32_t>(p.index), ptr, size};
  a.imported = true;
  a.bytes.assign(host, host + size);  // the memory is the caller's: known
  a.known.assign(size, 1);
  m_.allocs.push_back(std::move(a));
}

void Sequence::stream_import() {
  if (live_streams(m_).size() >= kMaxLive / 3) return;
  const Pick p = pick_card(*in_, m_);
  const Pick from = pick_stream(*in_, m_);
  uint64_t native = 0;
  if (from.index >= 0) {
    const xal_backend_table_t* table = nullptr;
    void* n = nullptr;
    expect(xal_handle_get_native(from.handle, &table, &n), XAL_SUCCESS, "xal_handle_get_native");
    native = reinterpret_cast<uint64_t>(n);
  } else if (in_->byte() % 2) {
    native = 0x1000 + in_->bits(2);  // a forged native stream
  }
  const uint32_t flags = in_->byte() % 8 == 7 ? 1u : 0u;
  xal_stream_t st = nullptr;
  const xal_status_t s =
      xal_stream_import(static_cast<xal_device_t>(p.handle), native, flags, &st);
  xal_status_t want = XAL_SUCCESS;
  if (p.index < 0) {
    want = refused(m_);
  } else if (native == 0 || flags != 0 || m_.cards[p.index].partitioned || from.index < 0) {
    want = XAL_ERROR_INVALID_ARGUMENT;
  } else {
    // The native stream must be one of the device's card (a partition's
    // streams are its card's).
    const uint32_t owner = m_.streams[from.index].device;
    if (m_.card_of(owner) != m_.card_of(static_cast<uint32_t>(p.index)))
      want = XAL_ERROR_INVALID_ARGUMENT;
  }
  expect(s, want, "xal_stream_import");
  expect_detail(s, "xal_stream_import");
  if (s != XAL_SUCCESS) return;
  Stream& original = m_.streams[from.index];
  if (!original.imported) original.native = native;
  // Work queued on the wrapper is the native stream's: synchronising the
  // original waits for it too, and the other way round.
  Stream wrapper{static_cast<uint32_t>(p.index), st};
  wrapper.imported = true;
  wrapper.native = native;
  m_.streams.push_back(std::move(wrapper));
}

void Sequence::host_register() {
  const bool unregister = in_->byte() % 3 == 0;
  if (unregister) {
    const size_t n = m_.registered.size();
    const size_t i = n ? in_->below(n + 1) : 0;
    const uint8_t* ptr = i < n ? m_.registered[i].first : nullptr;
    const uint8_t* probe = i < n ? ptr : m_.host.empty() ? nullptr : m_.host.back()->data() + 1;
    const xal_status_t s = xal_host_unregister(const_cast<uint8_t*>(probe));
    expect(s, !m_.initialised ? XAL_ERROR_NOT_INITIALIZED
              : i < n        ? XAL_SUCCESS
                             : XAL_ERROR_INVALID_ARGUMENT,
           "xal_host_unregister");
    expect_detail(s, "xal_host_unregister");
    if (s == XAL_SUCCESS) m_.registered.erase(m_.registered.begin() + static_cast<ptrdiff_t>(i));
    return;
  }
  if (m_.host.size() >= 64) return;
  const uint64_t bytes = 1 + in_->below(65536);
  const uint8_t c = in_->byte() % 8;
  uint8_t* ptr = nullptr;
  uint64_t size = bytes;
  if (c == 7 && !m_.registered.empty()) {  // inside a range already registered
    const auto& r = m_.registered[in_->below(m_.registered.size())];
    ptr = const_cast<uint8_t*>(r.first) + in_->below(r.second);
    size = 1;
  } else {
    ptr = host_memory(m_, bytes, 0);
  }
  const uint32_t flags = c == 6 ? 2u : 0u;
  bool overlap = false;
  for (const auto& r : m_.registered)
    overlap |= overlaps(reinterpret_cast<uint64_t>(ptr), size, reinterpret_cast<uint64_t>(r.first),
                        r.second);
  const xal_status_t s = xal_host_register(ptr, size, flags);
  expect(s, !m_.initialised ? XAL_ERROR_NOT_INITIALIZED
            : flags || overlap ? XAL_ERROR_INVALID_ARGUMENT
                               : XAL_SUCCESS,
         "xal_host_register");
  expect_detail(s, "xal_host_register");
  if (s == XAL_SUCCESS) m_.registered.emplace_back(ptr, size);
}

void Sequence::ipc_handles() {
  const Pick p = pick_card(*in_, m_);
  const uint32_t slot = p.index < 0 ? 0 : static_cast<uint32_t>(p.index);
  const Range r = pick_range(*in_, m_, slot);
  Alloc* a = p.index < 0 ? nullptr : m_.holding(slot, r.ptr, 1);
  const bool start = a && a->ptr == r.ptr && !a->imported;
  xal_ipc_handle_t h{};
  const xal_status_t s = xal_mem_get_ipc_handle(static_cast<xal_device_t>(p.handle), r.ptr, &h);
  expect(s, p.index < 0 ? refused(m_) : start ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
         "xal_mem_get_ipc_handle");
  expect_detail(s, "xal_mem_get_ipc_handle");
  if (s != XAL_SUCCESS) return;
  // This very process opening its own handle is refused, on any device of
  // the backend; so is a handle with a damaged byte, and closing memory
  // that no handle opened.
  const Pick q = pick_card(*in_, m_);
  if (in_->byte() % 2) h.bytes[in_->below(sizeof h.bytes)] ^= static_cast<uint8_t>(1 + in_->below(255));
  xal_devptr_t opened = 0;
  size_t bytes = 0;
  const xal_status_t o = xal_mem_open_ipc_handle(static_cast<xal_device_t>(q.handle), &h, 0,
                                                 &opened, &bytes);
  expect(o, q.index < 0 ? refused(m_) : XAL_ERROR_INVALID_ARGUMENT, "xal_mem_open_ipc_handle");
  expect_detail(o, "xal_mem_open_ipc_handle");
  const xal_status_t c = xal_mem_close_ipc_handle(static_cast<xal_device_t>(p.handle), r.ptr);
  expect(c, XAL_ERROR_INVALID_ARGUMENT, "xal_mem_close_ipc_handle of an allocation");
  expect_detail(c, "xal_mem_close_ipc_handle");
}

}  // namespace xal::fuzz
