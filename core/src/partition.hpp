// Partitions: a card split into virtual devices, as MIG and HAMi give. A
// partition is a DeviceObj of its own (its own registry, quota = its size,
// counters, streams, compute share) sharing the card's backend and native
// device. Partitions are appended to the device list after the physical
// devices; the card stays listed but refuses allocations and streams.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "compute_share.hpp"
#include "partition_spec.hpp"
#include "runtime.hpp"

namespace xal::core {

struct PartitionInfo {
  DeviceObj* parent = nullptr;
  uint32_t ordinal = 0;  // 0-based among the card's partitions
  uint32_t count = 0;    // partitions of the card
  uint64_t bytes = 0;    // its memory
  std::unique_ptr<ComputeShare> share;
};

// Splits `parent` (caller holds rt.partition_mu). The requests must have
// passed resolve_shares. Fails (with detail) when the card is a partition,
// is already partitioned, or holds allocations or streams.
xal_status_t create_partitions(Runtime& rt, DeviceObj* parent,
                               const std::vector<PartitionRequest>& parts,
                               std::vector<DeviceObj*>* out);

// Undoes create_partitions (caller holds rt.partition_mu); fails while a
// partition holds allocations, streams, events, modules or communicators.
xal_status_t remove_partitions(Runtime& rt, DeviceObj* parent);

// The memory a card's partitions may share: its memory, or its quota.
// Thread-safe.
xal_status_t card_memory(DeviceObj* card, uint64_t* out_bytes);

// Reads XAL_PARTITIONS at xal_init (after quotas are set). Bad entries are
// logged, kept in rt.partition_errors and left out.
void apply_partition_config(Runtime& rt, std::string_view text);

// A partitioned card refuses `what` ("allocate memory"): INVALID_ARGUMENT
// naming its partitions. One branch when the card is whole.
xal_status_t refuse_partitioned_slow(DeviceObj* card, const char* what);
inline xal_status_t refuse_if_partitioned(DeviceObj* d, const char* what) {
  if (!d->state->partitioned.load(std::memory_order_acquire)) return XAL_SUCCESS;
  return refuse_partitioned_slow(d, what);
}

// Overrides the card's properties with the partition's (name, uuid, memory,
// parent_index, CAP_PARTITION). No-op on whole cards.
void partition_properties(const DeviceObj* d, xal_device_properties_t* p);

// Overrides memory and utilization with the partition's. No-op on whole cards.
void partition_metrics(DeviceObj* d, xal_device_metrics_t* m);

// A quota on a partition stays within its size: 0 (none) means its size.
// Returns the limit to set, or fails.
xal_status_t partition_limit(DeviceObj* d, uint64_t bytes, uint64_t* out);

}  // namespace xal::core
