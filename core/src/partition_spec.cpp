// Parsing of XAL_PARTITIONS and the checks of a partition plan.
#include "partition_spec.hpp"

#include "error.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

using xal::common::format_bytes;
using xal::common::parse_bytes;
using xal::common::parse_uint;
using xal::common::split;
using xal::common::trim;

namespace {

// The most partitions of one card (MIG gives at most 7, HAMi a few more).
constexpr uint64_t kMaxPartitions = 64;

// "SIZE[@PCT%]" -> request, or "" and *why.
bool parse_part(std::string_view item, PartitionRequest* out, std::string* why) {
  std::string_view size = trim(item);
  const auto at = size.find('@');
  if (at != std::string_view::npos) {
    std::string_view pct = trim(size.substr(at + 1));
    size = trim(size.substr(0, at));
    if (!pct.empty() && pct.back() == '%') pct.remove_suffix(1);
    const auto v = parse_uint(trim(pct));
    if (!v || *v < 1 || *v > 100) {
      *why = cat("'", trim(item), "': the share after '@' must be a percent "
                 "from 1 to 100 (e.g. 30%)");
      return false;
    }
    out->percent = static_cast<uint32_t>(*v);
  }
  std::string reason;
  const auto bytes = parse_bytes(size, &reason);
  if (!bytes || *bytes == 0) {
    *why = cat("'", trim(item), "': ",
               bytes ? std::string("a partition needs more than 0 bytes")
                     : cat("bad size '", size, "' (", reason, ")"));
    return false;
  }
  out->bytes = *bytes;
  return true;
}

// SPEC -> requests, or false and *why.
bool parse_spec(std::string_view spec, std::vector<PartitionRequest>* out,
                std::string* why) {
  spec = trim(spec);
  if (spec.empty()) {
    *why = "nothing after '=' (expected NxSIZE or SIZE[@PCT%],...)";
    return false;
  }
  const auto x = spec.find_first_of("xX");
  if (x != std::string_view::npos && spec.find(',') == std::string_view::npos &&
      spec.find('@') == std::string_view::npos) {
    const auto n = parse_uint(trim(spec.substr(0, x)));
    if (!n || *n == 0 || *n > kMaxPartitions) {
      *why = cat("'", spec, "': the count before 'x' must be 1 to ",
                 kMaxPartitions);
      return false;
    }
    PartitionRequest r;
    if (!parse_part(spec.substr(x + 1), &r, why)) return false;
    r.percent = static_cast<uint32_t>(100 / *n);
    out->assign(*n, r);
    return true;
  }
  for (const auto& item : split(spec, ",", true)) {
    if (trim(item).empty()) {
      *why = cat("'", spec, "': empty partition in the list");
      return false;
    }
    PartitionRequest r;
    if (!parse_part(item, &r, why)) return false;
    out->push_back(r);
  }
  if (out->size() > kMaxPartitions) {
    *why = cat("'", spec, "': ", out->size(), " partitions (at most ",
               kMaxPartitions, ")");
    return false;
  }
  return true;
}

bool parse_entry(std::string_view text, PartitionEntry* e, std::string* why) {
  const auto eq = text.find('=');
  const auto colon = text.substr(0, eq).rfind(':');
  if (eq == std::string_view::npos || colon == std::string_view::npos) {
    *why = "expected BACKEND:INDEX=SPEC (e.g. mock:0=4x10GiB)";
    return false;
  }
  e->backend = std::string(trim(text.substr(0, colon)));
  if (e->backend.empty()) {
    *why = "no backend name before ':'";
    return false;
  }
  const auto idx = parse_uint(trim(text.substr(colon + 1, eq - colon - 1)));
  if (!idx || *idx > 0xffffffffu) {
    *why = cat("'", trim(text.substr(colon + 1, eq - colon - 1)),
               "' is not a device index (expected BACKEND:INDEX=SPEC)");
    return false;
  }
  e->index = static_cast<uint32_t>(*idx);
  return parse_spec(text.substr(eq + 1), &e->parts, why);
}

}  // namespace

std::vector<PartitionEntry> parse_partition_config(
    std::string_view text, std::vector<std::string>* errors) {
  std::vector<PartitionEntry> out;
  for (const auto& piece : split(text, ";")) {
    const std::string_view item = trim(piece);
    if (item.empty()) continue;
    PartitionEntry e;
    e.text = std::string(item);
    std::string why;
    if (!parse_entry(item, &e, &why)) {
      errors->push_back(cat("XAL_PARTITIONS entry '", item, "' ignored: ", why));
      continue;
    }
    bool dup = false;
    for (const auto& o : out)
      dup |= o.backend == e.backend && o.index == e.index;
    if (dup) {
      errors->push_back(cat("XAL_PARTITIONS entry '", item, "' ignored: ",
                            e.backend, ":", e.index, " is already partitioned "
                            "by an earlier entry"));
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string resolve_shares(std::vector<PartitionRequest>& parts,
                           uint64_t card_bytes) {
  if (parts.empty()) return "no partitions requested";
  uint64_t given = 0, bytes = 0;
  size_t open = 0;
  bool overflow = false;  // the sizes add up past 2^64 bytes
  for (const auto& p : parts) {
    if (p.bytes == 0) return "a partition needs more than 0 bytes";
    if (p.percent > 100)
      return cat("a share of ", p.percent, "% is above 100%");
    given += p.percent;
    open += p.percent == 0;
    overflow |= bytes + p.bytes < bytes;
    bytes = bytes + p.bytes < bytes ? UINT64_MAX : bytes + p.bytes;
  }
  if (given > 100 || (open && given + open > 100))
    return cat("the shares add up to ", given, "%",
               open ? cat(" with ", open, " more to share what is left") : "",
               ", above 100%");
  for (auto& p : parts)
    if (p.percent == 0) p.percent = static_cast<uint32_t>((100 - given) / open);
  if (overflow || bytes > card_bytes)
    return cat("the partitions add up to ", format_bytes(bytes), " (", bytes,
               " bytes), more than the card's ", format_bytes(card_bytes), " (",
               card_bytes, " bytes)");
  return "";
}

}  // namespace xal::core
