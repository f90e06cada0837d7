#include "xalsupport/status_table.h"

namespace xal::support {

StatusMapping find_status(std::span<const StatusEntry> table, int64_t code,
                          const char* unknown_name) {
  for (const StatusEntry& entry : table) {
    if (entry.code == code) return entry.mapping;
  }
  return StatusMapping{XAL_ERROR_BACKEND, unknown_name, false};
}

}  // namespace xal::support
