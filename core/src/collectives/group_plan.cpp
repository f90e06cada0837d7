#include "group_plan.hpp"

namespace xal::core {

bool backend_has_native_collectives(const xal_backend_table_t* t) {
  return t->comm_create && t->comm_destroy && t->broadcast && (t->reduce || t->allreduce);
}

std::string GroupPlan::describe_slots() const {
  std::string s;
  for (uint32_t i = 0; i < slots(); ++i)
    s += cat(i ? ", " : "", "slot ", i, " = rank ", slot_rank[i]);
  return s;
}

GroupPlan make_group_plan(std::span<DeviceObj* const> devices,
                          const std::set<const Backend*>& no_native) {
  GroupPlan p;
  const auto n = static_cast<uint32_t>(devices.size());
  p.group_of.resize(n);
  p.local_of.resize(n);
  p.slot_of.resize(n);
  for (uint32_t r = 0; r < n; ++r) {
    Backend* b = devices[r]->backend;
    uint32_t g = 0;
    while (g < p.groups.size() && p.groups[g].backend != b) ++g;
    if (g == p.groups.size()) p.groups.push_back(GroupPlan::Group{b, {}, false});
    p.group_of[r] = g;
    p.local_of[r] = static_cast<uint32_t>(p.groups[g].ranks.size());
    p.groups[g].ranks.push_back(r);
  }
  for (auto& g : p.groups)
    g.native = g.ranks.size() > 1 && !no_native.contains(g.backend) &&
               backend_has_native_collectives(devices[g.ranks[0]]->hdr.table);
  // Slots in rank order: a native group's slot is its leader's.
  for (uint32_t r = 0; r < n; ++r) {
    const GroupPlan::Group& g = p.groups[p.group_of[r]];
    if (g.native && p.local_of[r] != 0) {
      p.slot_of[r] = p.slot_of[g.ranks[0]];
      continue;
    }
    p.slot_of[r] = p.slots();
    p.slot_rank.push_back(r);
  }
  return p;
}

}  // namespace xal::core
