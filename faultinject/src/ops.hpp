// The operations the fault backend can inject into: the names of the
// plugin-table entries (xal_backend.h) it wraps.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "xal/xal_backend.h"

namespace xal::fault {

// One value per entry of the plugin table, made from its entry list
// (XAL_BACKEND_ENTRIES), so a new entry is an operation here too. Only the
// injectable ones (op_injectable) can be named in a plan.
enum class Op : uint8_t {
#define XAL_FAULT_OP(name, presence, minor) name,
  XAL_BACKEND_ENTRIES(XAL_FAULT_OP)
#undef XAL_FAULT_OP
  count_  // number of operations
};

inline constexpr size_t kOpCount = static_cast<size_t>(Op::count_);

// The table entry name of `op` ("mem_alloc").
std::string_view op_name(Op op);
// False for the entries a plan cannot name: the instance's lifecycle and
// enumeration, reset and health (which the fault backend answers itself),
// host access, extensions and data.
bool op_injectable(Op op);
// The injectable operation named `name`, or nullopt.
std::optional<Op> op_from_name(std::string_view name);
// True when the operation writes a buffer that bitflip can corrupt.
bool op_has_output(Op op);
// True when the operation carries a byte size (min_bytes / max_bytes).
bool op_has_size(Op op);
// True for the synchronisation points where async errors surface.
bool op_is_sync(Op op);
// True for operations that still work on a device in a sticky error state:
// those that release resources (so that cleanup works) and the queries of
// properties and metrics.
bool op_passes_sticky(Op op);
// fnmatch(3) of `glob` against the operation's name.
bool op_matches(std::string_view glob, Op op);

}  // namespace xal::fault
