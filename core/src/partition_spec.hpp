// XAL_PARTITIONS: "BACKEND:INDEX=SPEC[;BACKEND:INDEX=SPEC...]", SPEC either
// "NxSIZE" (N equal partitions with equal shares) or "SIZE[@PCT%],..."
// (e.g. "mock:0=10GiB@30%,10GiB@70%"; a size without a share gets an equal
// part of what the others leave).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xal::core {

// One partition to create: its memory and compute share (0: an equal part
// of what the others leave, resolved by resolve_shares).
struct PartitionRequest {
  uint64_t bytes = 0;
  uint32_t percent = 0;
};

// One card's entry of XAL_PARTITIONS.
struct PartitionEntry {
  std::string text;     // as written, for messages
  std::string backend;  // backend name as written ("mock")
  uint32_t index = 0;   // device index within that backend
  std::vector<PartitionRequest> parts;
};

// Parses XAL_PARTITIONS. Malformed entries are left out, each with a message
// (quoting the entry and saying what was expected) appended to *errors.
std::vector<PartitionEntry> parse_partition_config(
    std::string_view text, std::vector<std::string>* errors);

// Gives the requests with percent 0 equal parts of what the others leave,
// and checks the shares (each 1..100, at most 100 in all) and the sizes
// (each > 0, in all at most `card_bytes`). Returns "" or what is wrong,
// with the numbers.
std::string resolve_shares(std::vector<PartitionRequest>& parts,
                           uint64_t card_bytes);

}  // namespace xal::core
