// Steps of the API-sequence target on streams and events: creation with
// good and bad flags, destruction, waits, records across devices, timing.
#include <string>

#include "api_sequence.hpp"

namespace xal::fuzz {

void Sequence::stream_create() {
  if (live_streams(m_).size() >= kMaxLive / 3) return;
  const Pick p = pick_card(*in_, m_);
  const uint32_t flags = in_->byte() % 4 == 0 ? 0x80u : XAL_STREAM_NON_BLOCKING;
  xal_stream_t st = nullptr;
  const xal_status_t s = xal_stream_create(static_cast<xal_device_t>(p.handle), flags, &st);
  const bool split = p.index >= 0 && m_.cards[p.index].partitioned;
  expect(s, p.index < 0 ? refused(m_)
            : flags == 0x80u || split ? XAL_ERROR_INVALID_ARGUMENT : XAL_SUCCESS,
         "xal_stream_create");
  expect_detail(s, "xal_stream_create");
  if (s == XAL_SUCCESS) m_.streams.push_back({static_cast<uint32_t>(p.index), st});
}

void Sequence::stream_destroy() {
  const Pick p = pick_stream(*in_, m_);
  if (p.index >= 0) return (void)destroy_stream(static_cast<size_t>(p.index));
  const xal_status_t s = xal_stream_destroy(static_cast<xal_stream_t>(p.handle));
  expect(s, refused(m_), "xal_stream_destroy");
}

// A stream's imported wrappers go first: their native stream ends with it,
// as a framework's would (xal_stream_import).
bool Sequence::destroy_stream(size_t i) {
  if (!m_.streams[i].live) return true;
  if (!m_.streams[i].imported && m_.streams[i].native != 0)
    for (size_t k = 0; k < m_.streams.size(); ++k)
      if (k != i && m_.streams[k].live && m_.streams[k].imported &&
          m_.streams[k].native == m_.streams[i].native && !destroy_stream(k))
        return false;
  const xal_status_t s = xal_stream_destroy(m_.streams[i].handle);
  expect(s, XAL_SUCCESS, "xal_stream_destroy");
  if (s != XAL_SUCCESS) return false;
  forget(m_.streams[i]);
  return true;
}

void Sequence::stream_wait() {
  const Pick p = pick_stream(*in_, m_);
  const auto st = static_cast<xal_stream_t>(p.handle);
  if (in_->byte() % 2) {
    const xal_status_t s = xal_stream_query(st);
    if (p.index < 0) return expect(s, refused(m_), "xal_stream_query");
    XAL_FUZZ_CHECK(s == XAL_SUCCESS || s == XAL_NOT_READY,
                   std::string("xal_stream_query: ") + xal_status_name(s));
    return;
  }
  expect(xal_stream_synchronize(st), p.index < 0 ? refused(m_) : XAL_SUCCESS,
         "xal_stream_synchronize");
  if (p.index >= 0) synced(static_cast<size_t>(p.index));
}

void Sequence::event_create() {
  if (live_events(m_).size() >= kMaxLive / 3) return;
  const Pick p = pick_card(*in_, m_);
  const uint32_t flags = in_->byte() % 3 == 0 ? XAL_EVENT_DISABLE_TIMING : 0u;
  xal_event_t e = nullptr;
  const xal_status_t s = xal_event_create(static_cast<xal_device_t>(p.handle), flags, &e);
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_create");
  if (s == XAL_SUCCESS) m_.events.push_back({static_cast<uint32_t>(p.index), e});
}

void Sequence::event_destroy() {
  const Pick p = pick_event(*in_, m_);
  const xal_status_t s = xal_event_destroy(static_cast<xal_event_t>(p.handle));
  expect(s, p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_destroy");
  if (s == XAL_SUCCESS) forget(m_.events[p.index]);
}

void Sequence::event_use() {
  const Pick e = pick_event(*in_, m_);
  const auto ev = static_cast<xal_event_t>(e.handle);
  const Pick p = pick_stream(*in_, m_);
  const auto st = static_cast<xal_stream_t>(p.handle);
  xal_status_t s = XAL_SUCCESS;
  switch (in_->byte() % 5) {
    case 0: {
      s = xal_event_record(ev, st);
      const bool same = e.index >= 0 && p.index >= 0 &&
                        m_.events[e.index].device == m_.streams[p.index].device;
      expect(s, e.index < 0 || p.index < 0 ? refused(m_)
                : same ? XAL_SUCCESS : XAL_ERROR_INVALID_ARGUMENT,
             "xal_event_record");
      break;
    }
    case 1:
      s = xal_stream_wait_event(st, ev);
      expect(s, e.index < 0 || p.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_stream_wait_event");
      break;
    case 2:
      s = xal_event_synchronize(ev);
      expect(s, e.index < 0 ? refused(m_) : XAL_SUCCESS, "xal_event_synchronize");
      break;
    case 3:
      s = xal_event_query(ev);
      if (e.index < 0) expect(s, refused(m_), "xal_event_query");
      else XAL_FUZZ_CHECK(s == XAL_SUCCESS || s == XAL_NOT_READY, "xal_event_query");
      break;
    default: {
      const Pick other = pick_event(*in_, m_);
      float ms = 0;
      s = xal_event_elapsed_ms(ev, static_cast<xal_event_t>(other.handle), &ms);
      if (e.index < 0 || other.index < 0) expect(s, refused(m_), "xal_event_elapsed_ms");
      else if (m_.events[e.index].device != m_.events[other.index].device)
        expect(s, XAL_ERROR_INVALID_ARGUMENT, "xal_event_elapsed_ms across devices");
    }
  }
  expect_detail(s, "event");
}

}  // namespace xal::fuzz
