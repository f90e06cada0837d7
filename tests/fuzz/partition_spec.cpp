// Partition plans (XAL_PARTITIONS): parse_partition_config, then
// resolve_shares of every entry on a card of a size taken from the input.
#include <numeric>

#include "fuzz_check.hpp"
#include "partition_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first 8 bytes (when there are more) give the card's memory.
  uint64_t card_bytes = 80ull << 30;
  if (size > 8) {
    card_bytes = 0;
    for (int i = 0; i < 8; ++i) card_bytes = card_bytes << 8 | data[i];
  }
  std::vector<std::string> errors;
  auto entries = xal::core::parse_partition_config(
      xal::fuzz::as_text(data, size), &errors);
  for (const std::string& e : errors)
    XAL_FUZZ_CHECK(e.find("XAL_PARTITIONS entry '") == 0, "an error that quotes no entry: " + e);
  for (auto& entry : entries) {
    XAL_FUZZ_CHECK(!entry.backend.empty(), "an entry with no backend");
    XAL_FUZZ_CHECK(!entry.parts.empty() && entry.parts.size() <= 64,
                   "an entry with 0 or more than 64 partitions: " + entry.text);
    const std::string why = xal::core::resolve_shares(entry.parts, card_bytes);
    if (!why.empty()) continue;
    uint64_t percent = 0, bytes = 0;
    for (const auto& p : entry.parts) {
      XAL_FUZZ_CHECK(p.percent >= 1 && p.percent <= 100, "a share outside 1..100%");
      XAL_FUZZ_CHECK(p.bytes > 0, "a partition of 0 bytes");
      percent += p.percent;
      XAL_FUZZ_CHECK(bytes + p.bytes >= bytes, "partition sizes overflow");
      bytes += p.bytes;
    }
    XAL_FUZZ_CHECK(percent <= 100, "shares above 100% in all: " + entry.text);
    XAL_FUZZ_CHECK(bytes <= card_bytes, "partitions larger than the card: " + entry.text);
  }
  return 0;
}
