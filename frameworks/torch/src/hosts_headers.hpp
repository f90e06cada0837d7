// The headers of point-to-point messages between hosts (hosts_p2p.cpp).
//
// Every message from a process of another host starts with a header (its
// size and the core's 64-bit tag) sent under one reserved Gloo tag; its
// bytes follow under the message's own tag. The receiving side keeps one
// Gloo receive from any rank posted under the reserved tag, always: a
// thread waits for it, files the header under its sender and posts the
// next. So a receive from a given process takes its header from here (by
// sender and tag, as Gloo matched messages of one pair by tag before), and
// recv_anysource learns which processes of other hosts have a message
// waiting without taking it (Gloo has no probe, and a receive from any rank
// cannot be withdrawn once posted). The Gloo messages stay torch's own:
// no new protocol between hosts.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "xal/xal.h"

namespace xal::torch_backend {

class RemoteHeaders {
 public:
  // Above every tag a message's bytes go under (gloo_tag: 30 bits).
  static constexpr int kTag = 1 << 30;

  // Starts the thread that receives the headers sent to this rank over
  // `everyone` (a backend over every rank of the group, group ranks).
  explicit RemoteHeaders(c10::intrusive_ptr<c10d::Backend> everyone);
  // Aborts the posted receive and joins the thread.
  ~RemoteHeaders();
  RemoteHeaders(const RemoteHeaders&) = delete;
  RemoteHeaders& operator=(const RemoteHeaders&) = delete;

  // Starts sending the header of a message of `bytes` bytes and core tag
  // `tag` to `peer`; the caller waits for the returned Work. Any thread.
  c10::intrusive_ptr<c10d::Work> send(int peer, size_t bytes, uint64_t tag);

  // Takes `peer`'s header of tag `tag` once it has come, into *bytes.
  // TIMEOUT at `deadline`, ABORTED once abort() was called or the receive
  // failed (a process of another host ended: *why says so). Any thread.
  xal_status_t take(int peer, uint64_t tag, std::chrono::steady_clock::time_point deadline,
                    int64_t* bytes, std::string* why);

  // The first rank at or after `first` (wrapping around) with a header
  // waiting, or -1. Any thread.
  int waiting_from(int first) const;

  // Ends every take() and the thread (xal_comm_abort). Any thread.
  void abort();

 private:
  struct Header {
    int64_t bytes;
    uint64_t tag;
  };
  void run();  // the thread

  c10::intrusive_ptr<c10d::Backend> everyone_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable came_;
  std::vector<std::deque<Header>> heard_;  // per rank, in the order they came
  c10::intrusive_ptr<c10d::Work> posted_;  // the receive the thread waits for
  bool stop_ = false;
  std::string failed_;  // why the receive failed, once it has
  std::thread thread_;
};

}  // namespace xal::torch_backend
