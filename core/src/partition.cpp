// Partitions of a card: creating, undoing, and what they report.
#include "partition.hpp"

#include <algorithm>

#include "quota_shared.hpp"
#include "teardown.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

using xal::common::copy_string;
using xal::common::format_bytes;
using xal::common::to_lower;

namespace {

std::vector<DeviceObj*> partitions_of(const Runtime& rt, const DeviceObj* card) {
  std::vector<DeviceObj*> out;
  for (DeviceObj* d : rt.devices)
    if (d->state->partition && d->state->partition->parent == card)
      out.push_back(d);
  return out;
}

std::string index_list(const std::vector<DeviceObj*>& parts) {
  std::string out;
  for (const DeviceObj* p : parts)
    out += cat(out.empty() ? "" : ", ", p->index);
  return out;
}

uint64_t fnv1a(const uint8_t* data, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

xal_status_t card_memory(DeviceObj* card, uint64_t* out_bytes) {
  uint64_t free_b = 0, total_b = 0;
  const xal_status_t s =
      card->hdr.table->mem_get_info(card->native, &free_b, &total_b);
  if (s != XAL_SUCCESS) return fail_backend(card->backend, card, s);
  const uint64_t limit = card->state->limit.load();
  *out_bytes = limit ? std::min(limit, total_b) : total_b;
  return XAL_SUCCESS;
}

xal_status_t create_partitions(Runtime& rt, DeviceObj* parent,
                               const std::vector<PartitionRequest>& parts,
                               std::vector<DeviceObj*>* out) {
  DeviceState& ps = *parent->state;
  if (ps.partition)
    return fail(parent, XAL_ERROR_INVALID_ARGUMENT,
                cat("device ", parent->index, " is itself a partition (of device ",
                    ps.partition->parent->index, "): partitions cannot be split"));
  if (ps.partitioned.load())
    return fail(parent, XAL_ERROR_INVALID_ARGUMENT,
                cat("device ", parent->index, " is already partitioned (devices ",
                    index_list(partitions_of(rt, parent)),
                    "): call xal_device_unpartition first"));
  {
    std::lock_guard lock(ps.mu);
    if (ps.registry.count() || !ps.streams.empty())
      return fail(parent, XAL_ERROR_INVALID_ARGUMENT,
                  cat("device ", parent->index, " still has ", ps.registry.count(),
                      " allocations and ", ps.streams.size(),
                      " streams: free them before partitioning it"));
  }
  std::vector<DeviceObj*> made;
  try {
    for (uint32_t i = 0; i < parts.size(); ++i) {
      DeviceObj* d = make_handle<DeviceObj>(parent->hdr.table);
      made.push_back(d);
      d->backend = parent->backend;
      d->native = parent->native;
      d->backend_index = parent->backend_index;
      d->state = std::make_unique<DeviceState>();
      auto info = std::make_shared<PartitionInfo>();
      info->parent = parent;
      info->ordinal = i;
      info->count = static_cast<uint32_t>(parts.size());
      info->bytes = parts[i].bytes;
      info->share = std::make_unique<ComputeShare>(parts[i].percent);
      d->state->limit.store(parts[i].bytes);
      d->state->share = info->share.get();
      d->state->partition = std::move(info);
    }
    rt.devices.reserve(rt.devices.size() + made.size());
  } catch (...) {
    for (DeviceObj* d : made) destroy_handle(d);
    throw;
  }
  for (DeviceObj* d : made) {
    d->index = static_cast<uint32_t>(rt.devices.size());
    rt.devices.push_back(d);
  }
  ps.partitioned.store(true, std::memory_order_release);
  if (out) *out = made;
  return XAL_SUCCESS;
}

xal_status_t remove_partitions(Runtime& rt, DeviceObj* parent) {
  if (!parent->state->partitioned.load())
    return fail(parent, XAL_ERROR_INVALID_ARGUMENT,
                cat("device ", parent->index, " is not partitioned"));
  const auto parts = partitions_of(rt, parent);
  for (DeviceObj* p : parts) {
    DeviceState& st = *p->state;
    size_t allocs, streams, others;
    {
      std::lock_guard lock(st.mu);
      allocs = st.registry.count();
      streams = st.streams.size();
      others = st.events.size() + st.modules.size();
    }
    size_t comms = 0;
    {
      std::lock_guard lock(rt.comms_mu);
      for (const CommObj* c : rt.comms) comms += c->device == p;
    }
    if (allocs || streams || others || comms)
      return fail(parent, XAL_ERROR_INVALID_ARGUMENT,
                  cat("cannot undo the partitions of device ", parent->index,
                      ": partition ", p->index, " still has ", allocs,
                      " allocations, ", streams, " streams, ", others,
                      " events or modules and ", comms,
                      " communicators (release them first)"));
  }
  for (DeviceObj* p : parts) {
    release_device_objects(p);  // the core's staging stream, if any
    // Its limit leaves the shared ledger with it: a partition made later
    // with the same layout has the same uuid.
    shared_quota_drop(p);
    rt.devices.erase(std::find(rt.devices.begin(), rt.devices.end(), p));
    destroy_handle(p);
  }
  for (uint32_t i = 0; i < rt.devices.size(); ++i) rt.devices[i]->index = i;
  parent->state->partitioned.store(false, std::memory_order_release);
  return XAL_SUCCESS;
}

void apply_partition_config(Runtime& rt, std::string_view text) {
  std::vector<std::string> errors;
  auto entries = parse_partition_config(text, &errors);
  const size_t physical = rt.devices.size();
  for (auto& e : entries) {
    DeviceObj* card = nullptr;
    const std::string want = to_lower(e.backend);
    for (size_t i = 0; i < physical && !card; ++i) {
      DeviceObj* d = rt.devices[i];
      if ((to_lower(d->backend->name) == want ||
           to_lower(d->backend->short_name) == want) &&
          d->backend_index == e.index)
        card = d;
    }
    const std::string head = cat("XAL_PARTITIONS entry '", e.text, "' ignored: ");
    if (!card) {
      errors.push_back(cat(head, "no device ", e.index, " of a loaded backend '",
                           e.backend, "' (not loaded, or left out by "
                           "XAL_DEVICE_SELECTOR)"));
      continue;
    }
    uint64_t card_bytes = 0;
    if (card_memory(card, &card_bytes) != XAL_SUCCESS) {
      errors.push_back(cat(head, "cannot read the memory of device ",
                           card->index));
      clear_pending();
      continue;
    }
    if (const std::string why = resolve_shares(e.parts, card_bytes); !why.empty()) {
      errors.push_back(cat(head, why));
      continue;
    }
    if (create_partitions(rt, card, e.parts, nullptr) != XAL_SUCCESS) {
      xal_error_info_t info{};
      info.struct_size = sizeof info;
      xal_last_error(&info);
      errors.push_back(cat(head, info.message));
    }
  }
  for (const auto& m : errors) log_message(XAL_LOG_WARNING, m.c_str());
  std::lock_guard lock(rt.partition_mu);
  rt.partition_errors = std::move(errors);
}

xal_status_t refuse_partitioned_slow(DeviceObj* card, const char* what) {
  std::string list = "?";
  if (Runtime* rt = runtime()) list = index_list(partitions_of(*rt, card));
  return fail(card, XAL_ERROR_INVALID_ARGUMENT,
              cat("device ", card->index, " (", card->backend->name,
                  ") is partitioned into devices ", list, ": cannot ", what,
                  " on the card itself; use a partition, or "
                  "xal_device_unpartition"));
}

void partition_properties(const DeviceObj* d, xal_device_properties_t* p) {
  const PartitionInfo* info = d->state->partition.get();
  if (!info) return;
  const std::string name =
      cat(p->name, " [part ", info->ordinal + 1, "/", info->count, "]");
  copy_string(p->name, sizeof p->name, name);
  uint8_t seed[18];
  std::copy(p->uuid, p->uuid + 16, seed);
  seed[16] = static_cast<uint8_t>(info->ordinal);
  seed[17] = static_cast<uint8_t>(info->count);
  const uint64_t h[2] = {fnv1a(seed, sizeof seed, 0xcbf29ce484222325ull),
                         fnv1a(seed, sizeof seed, 0x84222325cbf29ce4ull)};
  for (int i = 0; i < 16; ++i)
    p->uuid[i] = static_cast<uint8_t>(h[i / 8] >> (8 * (i % 8)));
  p->parent_index = static_cast<int32_t>(info->parent->index);
  p->memory_bytes = info->bytes;
  if (p->max_allocation_bytes == 0 || p->max_allocation_bytes > info->bytes)
    p->max_allocation_bytes = info->bytes;
  p->capabilities |= XAL_DEVICE_CAP_PARTITION;
  p->capabilities &= ~XAL_DEVICE_CAP_RESET;  // reset the card instead
}

void partition_metrics(DeviceObj* d, xal_device_metrics_t* m) {
  const PartitionInfo* info = d->state->partition.get();
  if (!info) return;
  m->memory_total_bytes = info->bytes;
  m->memory_used_bytes = d->state->reserved.load();
  m->utilization_percent = info->share->utilization();
  m->valid |= XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_MEMORY_USED |
              XAL_METRIC_UTILIZATION;
}

xal_status_t partition_limit(DeviceObj* d, uint64_t bytes, uint64_t* out) {
  const PartitionInfo* info = d->state->partition.get();
  *out = bytes;
  if (!info) return XAL_SUCCESS;
  if (bytes > info->bytes)
    return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                cat("cannot set a memory limit of ", bytes, " bytes on device ",
                    d->index, ": it is a partition of ",
                    format_bytes(info->bytes), " (", info->bytes, " bytes)"));
  if (bytes == 0) *out = info->bytes;
  return XAL_SUCCESS;
}

}  // namespace xal::core
