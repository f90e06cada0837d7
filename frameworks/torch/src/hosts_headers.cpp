#include "hosts_headers.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <exception>

namespace xal::torch_backend {

namespace {

// The posted receive waits without end until a header comes or abort():
// a Gloo wait that times out closes every pair of the group, and no
// message may be what the group expects for a long while.
constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365);

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

RemoteHeaders::RemoteHeaders(c10::intrusive_ptr<c10d::Backend> everyone)
    : everyone_(std::move(everyone)), heard_(static_cast<size_t>(everyone_->getSize())) {
  thread_ = std::thread([this] { run(); });
}

RemoteHeaders::~RemoteHeaders() {
  abort();
  thread_.join();
}

c10::intrusive_ptr<c10d::Work> RemoteHeaders::send(int peer, size_t bytes, uint64_t tag) {
  at::Tensor header = at::empty({2}, at::kLong);
  header[0] = static_cast<int64_t>(bytes);
  header[1] = static_cast<int64_t>(tag);
  std::vector<at::Tensor> v{header};
  return everyone_->send(v, peer, kTag);
}

void RemoteHeaders::run() {
  for (;;) {
    at::Tensor header = at::empty({2}, at::kLong);
    c10::intrusive_ptr<c10d::Work> work;
    std::string error;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      try {
        std::vector<at::Tensor> v{header};
        work = everyone_->recvAnysource(v, kTag);
        posted_ = work;
      } catch (const std::exception& e) {
        error = first_line(e.what());
      }
    }
    bool came = false;
    if (error.empty()) {
      try {
        came = work->wait(kForever);
      } catch (const std::exception& e) {
        error = first_line(e.what());
      }
    }
    std::lock_guard lock(mu_);
    posted_.reset();
    if (stop_) return;
    if (!error.empty() || !came) {
      failed_ = error.empty() ? "the receive of headers between hosts ended" : error;
      came_.notify_all();
      return;
    }
    const int from = work->sourceRank();
    if (from >= 0 && from < static_cast<int>(heard_.size()))
      heard_[static_cast<size_t>(from)].push_back(
          {header[0].item<int64_t>(), static_cast<uint64_t>(header[1].item<int64_t>())});
    came_.notify_all();
  }
}

xal_status_t RemoteHeaders::take(int peer, uint64_t tag,
                                 std::chrono::steady_clock::time_point deadline, int64_t* bytes,
                                 std::string* why) {
  std::unique_lock lock(mu_);
  std::deque<Header>& q = heard_.at(static_cast<size_t>(peer));
  for (;;) {
    const auto it =
        std::find_if(q.begin(), q.end(), [tag](const Header& h) { return h.tag == tag; });
    if (it != q.end()) {
      *bytes = it->bytes;
      q.erase(it);
      return XAL_SUCCESS;
    }
    if (stop_) return *why = "aborted (xal_comm_abort)", XAL_ERROR_ABORTED;
    if (!failed_.empty()) return *why = "between hosts (Gloo): " + failed_, XAL_ERROR_ABORTED;
    if (std::chrono::steady_clock::now() >= deadline)
      return *why = "no message came in time (timeout)", XAL_ERROR_TIMEOUT;
    came_.wait_until(lock, deadline);
  }
}

int RemoteHeaders::waiting_from(int first) const {
  std::lock_guard lock(mu_);
  const int n = static_cast<int>(heard_.size());
  for (int i = 0; i < n; ++i) {
    const int r = ((first + i) % n + n) % n;
    if (!heard_[static_cast<size_t>(r)].empty()) return r;
  }
  return -1;
}

void RemoteHeaders::abort() {
  std::lock_guard lock(mu_);
  stop_ = true;
  if (posted_) {
    try {
      posted_->abort();  // Gloo's receive ends its wait (and is not waited for again)
    } catch (const std::exception&) {
    }
  }
  came_.notify_all();
}

}  // namespace xal::torch_backend
