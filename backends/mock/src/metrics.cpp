#include "metrics.h"

#include <algorithm>

namespace xal::mock {

namespace {

double seconds(BusyTracker::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void BusyTracker::begin(Clock::time_point start) {
  std::lock_guard lock(mutex_);
  if (running_++ == 0) running_since_ = std::max(start, counted_until_);
}

void BusyTracker::end(Clock::time_point start, Clock::time_point end) {
  std::lock_guard lock(mutex_);
  if (running_ > 0 && --running_ == 0) {
    // The busy stretch is over: it counts once, however many tasks ran.
    const Clock::time_point stop = std::max(end, running_since_);
    total_ += seconds(stop - running_since_);
    counted_until_ = stop;
  }
  if (end <= start) return;
  const int64_t first = start.time_since_epoch() / kBucket;
  const int64_t last = end.time_since_epoch() / kBucket;
  // Only the newest kBuckets buckets can still be in a window.
  for (int64_t i = std::max(first, last - static_cast<int64_t>(kBuckets) + 1);
       i <= last; ++i) {
    const Clock::time_point b0{kBucket * i};
    const Clock::time_point b1 = b0 + kBucket;
    const double overlap = seconds(std::min(end, b1) - std::max(start, b0));
    Bucket& b = buckets_[static_cast<size_t>(i) % kBuckets];
    if (b.index > i) continue;  // the slot already holds a newer bucket
    if (b.index != i) b = {i, 0.0};
    b.busy += overlap;
  }
}

double BusyTracker::busy_in_window(Clock::time_point now) const {
  const int64_t newest = now.time_since_epoch() / kBucket;
  const int64_t oldest = (now - kUtilizationWindow).time_since_epoch() / kBucket;
  std::lock_guard lock(mutex_);
  double busy = 0.0;
  for (const Bucket& b : buckets_)
    if (b.index > oldest && b.index <= newest) busy += b.busy;
  return busy;
}

double BusyTracker::total_busy_seconds(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  if (running_ == 0 || now <= running_since_) return total_;
  return total_ + seconds(now - running_since_);
}

void BusyTracker::clear() {
  std::lock_guard lock(mutex_);
  buckets_.fill({});
}

}  // namespace xal::mock
