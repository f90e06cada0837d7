// The API-sequence target's driver: decodes steps from the input and makes
// the public calls they name, each checked against the shadow model
// (api_model.hpp). Steps are in api_sequence.cpp (init, devices, limits),
// api_memory.cpp (allocations, copies), api_streams.cpp, api_modules.cpp,
// api_partitions.cpp, api_comms.cpp, api_collectives.cpp and api_faults.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "api_model.hpp"
#include "api_picks.hpp"

namespace xal::fuzz {

// The input is a list of steps of kStepBytes bytes each: the operation,
// then its choices (past the step's end every choice is 0, an ordinary
// valid one), so that a mutation of one step leaves the others as they were.
inline constexpr size_t kStepBytes = 32;

// An input whose first byte is kFaultMode runs on fault:mock: the rest of
// that first step encodes a random fault plan (api_faults.cpp).
inline constexpr uint8_t kFaultMode = 0xFA;

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
  bool destroy_stream(size_t i);

  // api_interop.cpp: imported host memory and streams, registered host
  // memory, IPC handles (in one process: made, refused when opened here).
  void mem_import();
  void stream_import();
  void host_register();
  void ipc_handles();

  // api_modules.cpp: modules of the mock's built-in kernels, launches.
  void module_load();
  void module_unload();
  void kernel_get();
  void kernel_launch();

  // api_partitions.cpp
  void partition();
  void unpartition();

  // api_comms.cpp: communicators on subsets of the devices, split, misuse.
  void comm_create();
  void comm_destroy();
  void split(size_t set_index);
  void comm_misuse();

  // api_collectives.cpp
  void collective();

  // api_faults.cpp: the plan of a fault-mode input, its control calls.
  void decode_plan(Choices& head);
  void load_plan();
  void fault_control();

  // Bookkeeping (api_sequence.cpp): destroyed handles, finished work.
  void retire(void* handle);
  void forget(Stream& st);
  void forget(Event& e);
  void forget(Module& mod);
  void release_objects(uint32_t slot);
  void synced(size_t s);
  void synced_call(size_t s);
  void device_sync_all();

  Choices* in_ = nullptr;
  Model m_;
  bool faults_ = false;  // fault mode: xal_init loads fault:mock, then plan_
  std::string plan_;
};

}  // namespace xal::fuzz
