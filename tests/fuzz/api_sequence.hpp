// The API-sequence target's driver: decodes steps from the input and makes
// the public calls they name, each checked against the shadow model
// (api_model.hpp). Steps are in api_sequence.cpp (init, devices, limits),
// api_memory.cpp (allocations, copies) and api_streams.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "api_model.hpp"
#include "api_picks.hpp"

namespace xal::fuzz {

// The input is a list of steps of kStepBytes bytes each: the operation,
// then its choices (past the step's end every choice is 0, an ordinary
// valid one), so that a mutation of one step leaves the others as they were.
inline constexpr size_t kStepBytes = 32;

class Sequence {
 public:
  ~Sequence();
  void run(Choices& input);

 private:
  void step(uint8_t op);

  // api_sequence.cpp
  void init();
  void shutdown();
  void device_queries();
  void device_sync();
  void reset();
  void limits();

  // api_memory.cpp
  void mem_alloc();
  void mem_free();
  void claim(Alloc* a, size_t s);
  xal_status_t queued_status(const Pick& p, uint64_t bytes,
                             std::initializer_list<bool> inside);
  void write();
  void read();
  void dtod();
  void peer();

  // api_streams.cpp
  void stream_create();
  void stream_destroy();
  void stream_wait();
  void event_create();
  void event_destroy();
  void event_use();

  // Bookkeeping (api_sequence.cpp): destroyed handles, finished work.
  void retire(void* handle);
  void forget(Stream& st);
  void forget(Event& e);
  void synced(size_t s);
  void synced_call(size_t s);
  void device_sync_all();

  Choices* in_ = nullptr;
  Model m_;
};

}  // namespace xal::fuzz
