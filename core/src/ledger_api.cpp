// xal_ledger_read: a job's shared ledger as tools read it, without joining
// the job (see quota_ledger.hpp, docs/TELEMETRY.md).
#include <algorithm>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "quota_ledger.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

// The struct's first public size: through `errors`, all of it.
constexpr size_t kRowFirstSize = sizeof(xal_ledger_row_t);

xal_ledger_row_t to_public(const LedgerRow& r) {
  xal_ledger_row_t out{};
  std::copy(r.uuid.begin(), r.uuid.end(), out.uuid);
  const size_t n = std::min(r.label.size(), sizeof out.device_name - 1);
  std::memcpy(out.device_name, r.label.data(), n);
  out.pid = r.pid;
  out.compute_percent = r.percent;
  out.processes = r.processes;
  out.memory_bytes = r.bytes;
  out.limit_bytes = r.limit;
  out.busy_ns = r.usage.busy_ns;
  out.utilization_percent = r.utilization;
  out.bytes_copied = r.usage.bytes_copied;
  out.collective_calls = r.usage.collective_calls;
  out.collective_bytes = r.usage.collective_bytes;
  out.allocations = r.usage.allocations;
  out.errors = r.usage.errors;
  return out;
}

}  // namespace

extern "C" {

// Reads a ledger by name; needs no runtime. Thread-safe.
XAL_API xal_status_t xal_ledger_read(const char* name, uint32_t capacity,
                                     xal_ledger_row_t* out_rows, uint32_t* out_count) {
  return entry("xal_ledger_read", [&] {
    if (!name) return null_argument("name");
    if (!out_count) return null_argument("out_count");
    if (capacity > 0 && !struct_ok_from(out_rows, kRowFirstSize))
      return bad_struct(out_rows, out_rows ? out_rows->struct_size : 0, kRowFirstSize,
                        "out_rows");
    std::string error;
    bool other_layout = false;
    auto ledger = QuotaLedger::open_existing(name, &error, &other_layout);
    if (!ledger)
      return fail(other_layout ? XAL_ERROR_ABI_MISMATCH : XAL_ERROR_INVALID_ARGUMENT,
                  error);
    const std::vector<LedgerRow> rows = ledger->rows(monotonic_ns());
    const size_t stride = capacity > 0 ? out_rows->struct_size : 0;
    auto* base = reinterpret_cast<unsigned char*>(out_rows);
    for (size_t i = 0; i < rows.size() && i < capacity; ++i) {
      xal_ledger_row_t r = to_public(rows[i]);
      r.struct_size = stride;
      std::memcpy(base + i * stride, &r, std::min(stride, sizeof r));
    }
    *out_count = static_cast<uint32_t>(rows.size());
    return XAL_SUCCESS;
  });
}

}  // extern "C"
