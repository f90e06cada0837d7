#include "device_spec.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

using nlohmann::json;
namespace common = xal::common;

[[noreturn]] void fail(const std::string& message) { throw SpecError(message); }

std::string unknown_profile_message(std::string_view name) {
  return "unknown profile '" + std::string(name) +
         "' (known: " + builtin_profile_names() + ")";
}

void check_total(size_t total, const std::string& where) {
  if (total > kMaxDevices)
    fail(where + ": more than " + std::to_string(kMaxDevices) +
         " devices in total");
}

void validate(const Profile& p, const std::string& where) {
  if (p.memory_bytes < 4096)
    fail(where + ": memory must be at least 4096 bytes, got " +
         std::to_string(p.memory_bytes));
  if (p.bandwidth_gbps < 0.0 || p.peak_memory_bandwidth_gbps < 0.0)
    fail(where + ": bandwidths must not be negative");
  if (p.tdp_w < p.idle_w)
    fail(where + ": tdp_w must be at least idle_w");
}

// --- JSON accessors ------------------------------------------------------

std::string type_of(const json& v) { return v.type_name(); }

struct Place {
  const std::string& source;
  std::string pointer;  // JSON pointer of the value
  std::string at() const { return source + ": at " + pointer; }
};

double get_number(const json& v, const Place& place, const char* what) {
  if (!v.is_number() || (v.is_number_float() && !std::isfinite(v.get<double>())))
    fail(place.at() + ": expected " + what + " (a number), got " + type_of(v));
  const double d = v.get<double>();
  if (d < 0) fail(place.at() + ": expected " + what + " >= 0, got " + v.dump());
  return d;
}

// A bandwidth in GB/s: 0 (none / unthrottled) or at least kMinRateGbps, so
// that a throttled copy's duration stays representable.
double get_rate(const json& v, const Place& place, const char* what) {
  const double d = get_number(v, place, what);
  if (d != 0.0 && d < kMinRateGbps)
    fail(place.at() + ": expected " + what + " of 0 or at least " +
         json(kMinRateGbps).dump() + " GB/s, got " + v.dump());
  return d;
}

uint32_t get_u32(const json& v, const Place& place, const char* what) {
  if (!v.is_number_integer() && !v.is_number_unsigned())
    fail(place.at() + ": expected " + what + " (an integer), got " + type_of(v));
  // A non-negative integer is stored unsigned: only a signed one can be
  // negative (read as int64_t, a value >= 2^63 would turn negative).
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
    fail(place.at() + ": expected " + what + " >= 0, got " + v.dump());
  const uint64_t u = v.get<uint64_t>();
  if (u > UINT32_MAX)
    fail(place.at() + ": " + what + " " + v.dump() + " is too large");
  return static_cast<uint32_t>(u);
}

std::string get_string(const json& v, const Place& place, const char* what) {
  if (!v.is_string())
    fail(place.at() + ": expected " + what + " (a string), got " + type_of(v));
  return v.get<std::string>();
}

uint64_t get_bytes(const json& v, const Place& place) {
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0))
    return v.get<uint64_t>();
  if (v.is_string()) {
    std::string reason;
    if (auto b = common::parse_bytes(v.get<std::string>(), &reason)) return *b;
    fail(place.at() + ": expected a byte size such as \"80GiB\": " + reason);
  }
  fail(place.at() +
       ": expected a byte size (a non-negative integer or a string such as "
       "\"80GiB\"), got " + (v.is_number() ? v.dump() : type_of(v)));
}

uint32_t get_kind(const json& v, const Place& place) {
  const std::string k = common::to_lower(get_string(v, place, "a device kind"));
  if (k == "gpu") return XAL_DEVICE_KIND_GPU;
  if (k == "accelerator") return XAL_DEVICE_KIND_ACCELERATOR;
  if (k == "cpu") return XAL_DEVICE_KIND_CPU;
  if (k == "other") return XAL_DEVICE_KIND_OTHER;
  fail(place.at() + ": expected \"gpu\", \"accelerator\", \"cpu\" or "
       "\"other\", got \"" + k + "\"");
}

constexpr const char* kEntryKeys =
    "profile, count, name, vendor, kind, memory, compute_units, "
    "core_clock_mhz, memory_clock_mhz, memory_bus_width_bits, "
    "peak_memory_bandwidth_gbps, bandwidth_gbps, tdp_w, idle_w, tflops_fp16";

// Applies one field of an entry to `p`; false if the key is unknown.
bool apply_field(Profile& p, const std::string& key, const json& v,
                 const Place& place) {
  if (key == "name") p.name = get_string(v, place, "a display name");
  else if (key == "vendor") p.vendor = get_string(v, place, "a vendor name");
  else if (key == "kind") p.kind = get_kind(v, place);
  else if (key == "memory") p.memory_bytes = get_bytes(v, place);
  else if (key == "compute_units") p.compute_units = get_u32(v, place, "compute_units");
  else if (key == "core_clock_mhz") p.core_clock_mhz = get_u32(v, place, "core_clock_mhz");
  else if (key == "memory_clock_mhz") p.memory_clock_mhz = get_u32(v, place, "memory_clock_mhz");
  else if (key == "memory_bus_width_bits") p.memory_bus_width_bits = get_u32(v, place, "memory_bus_width_bits");
  else if (key == "peak_memory_bandwidth_gbps") p.peak_memory_bandwidth_gbps = get_rate(v, place, "a peak bandwidth");
  else if (key == "bandwidth_gbps") p.bandwidth_gbps = get_rate(v, place, "a copy throttle");
  else if (key == "tdp_w") p.tdp_w = get_number(v, place, "watts");
  else if (key == "idle_w") p.idle_w = get_number(v, place, "watts");
  else if (key == "tflops_fp16") p.tflops_fp16 = get_number(v, place, "TFLOPS");
  else return false;
  return true;
}

void parse_entry(const json& e, const std::string& source,
                 const std::string& pointer, std::vector<Profile>& out) {
  const Place place{source, pointer};
  if (!e.is_object())
    fail(place.at() + ": expected an object (an entry with \"profile\" or a "
         "full profile), got " + type_of(e));
  Profile p;
  const auto prof = e.find("profile");
  if (prof != e.end()) {
    const std::string key = get_string(*prof, {source, pointer + "/profile"},
                                       "a profile name");
    auto builtin = find_builtin_profile(key);
    if (!builtin) fail(source + ": at " + pointer + "/profile: " +
                       unknown_profile_message(key));
    p = *builtin;
  } else {
    for (const char* required : {"name", "vendor", "memory", "compute_units",
                                 "peak_memory_bandwidth_gbps"})
      if (!e.contains(required))
        fail(place.at() + ": a full profile needs \"" + required +
             "\" (or name a built-in \"profile\": " + builtin_profile_names() +
             ")");
    p.tdp_w = 300.0;
    p.idle_w = 50.0;
  }
  uint64_t count = 1;
  for (const auto& [key, value] : e.items()) {
    const Place field{source, pointer + "/" + key};
    if (key == "profile") continue;
    if (key == "count") {
      count = get_u32(value, field, "a device count");
      if (count == 0) fail(field.at() + ": count must be at least 1");
      continue;
    }
    if (!apply_field(p, key, value, field))
      fail(field.at() + ": unknown key \"" + key + "\" (expected one of: " +
           kEntryKeys + ")");
  }
  if (prof == e.end()) p.key = common::to_lower(p.name);
  validate(p, place.at());
  check_total(out.size() + count, place.at());
  for (uint64_t i = 0; i < count; ++i) out.push_back(p);
}

bool looks_like_file(std::string_view t) {
  return t.find('/') != std::string_view::npos ||
         (t.size() >= 5 && common::to_lower(t.substr(t.size() - 5)) == ".json");
}

// Parser callback that refuses a key repeated in one object (nlohmann keeps
// the last silently). Tracks the JSON pointer of the current value for the
// message. One per parse; not thread-safe.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(const std::string& source) : source_(source) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        begin_value();
        frames_.push_back({event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          fail(source_ + ": at " + pointer() + ": duplicate key \"" + top.key +
               "\" (each key may appear once per object)");
        break;
      }
      case json::parse_event_t::value:
        begin_value();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    size_t next;      // array: index of the next element
    std::string key;  // object: key of the current member
    std::set<std::string> keys;
  };
  void begin_value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next;
  }
  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_)
      out += "/" + (f.array ? std::to_string(f.next - 1) : f.key);
    return out;
  }

  const std::string& source_;
  std::vector<Frame> frames_;
};

}  // namespace

std::vector<Profile> parse_compact_spec(std::string_view text) {
  std::vector<Profile> out;
  size_t offset = 0, index = 0;
  const std::string whole(text);
  while (offset <= text.size()) {
    size_t comma = text.find(',', offset);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = common::trim(text.substr(offset, comma - offset));
    const std::string where = "XAL_MOCK_DEVICES \"" + whole + "\": entry " +
                              std::to_string(index) + " (byte " +
                              std::to_string(offset) + ")";
    if (item.empty())
      fail(where + ": empty entry (expected [count*]profile, e.g. 2*a100-40g)");
    uint64_t count = 1;
    std::string_view name = item;
    if (const size_t star = item.find('*'); star != std::string_view::npos) {
      const auto n = common::parse_uint(common::trim(item.substr(0, star)));
      if (!n || *n == 0)
        fail(where + ": expected a positive device count before '*', got '" +
             std::string(common::trim(item.substr(0, star))) + "'");
      count = *n;
      name = common::trim(item.substr(star + 1));
    }
    auto p = find_builtin_profile(name);
    if (!p) fail(where + ": " + unknown_profile_message(name));
    check_total(out.size() + std::min<uint64_t>(count, kMaxDevices + 1), where);
    for (uint64_t i = 0; i < count; ++i) out.push_back(*p);
    offset = comma + 1;
    ++index;
  }
  return out;
}

std::vector<Profile> parse_json_spec(const std::string& content,
                                     const std::string& source) {
  json doc;
  try {
    doc = json::parse(content, DuplicateKeyCheck(source));
  } catch (const json::parse_error& e) {
    fail(source + ": JSON syntax error at byte " + std::to_string(e.byte) +
         ": " + e.what());
  } catch (const json::exception& e) {  // e.g. a number out of range
    fail(source + ": invalid JSON: " + e.what());
  }
  const json* list = &doc;
  std::string base;
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items())
      if (key != "devices")
        fail(source + ": at /" + key + ": unknown key \"" + key +
             "\" (expected \"devices\")");
    if (!doc.contains("devices"))
      fail(source + ": at /: expected a \"devices\" list");
    list = &doc["devices"];
    base = "/devices";
  }
  if (!list->is_array())
    fail(source + ": at " + (base.empty() ? "/" : base) +
         ": expected a list of device entries, got " + type_of(*list));
  if (list->empty())
    fail(source + ": at " + (base.empty() ? "/" : base) +
         ": the device list is empty");
  std::vector<Profile> out;
  for (size_t i = 0; i < list->size(); ++i)
    parse_entry((*list)[i], source, base + "/" + std::to_string(i), out);
  return out;
}

std::vector<Profile> parse_device_spec(std::string_view text) {
  const std::string_view t = common::trim(text);
  if (t.empty()) return parse_compact_spec(kDefaultDeviceSpec);
  if (t.front() == '[' || t.front() == '{')
    return parse_json_spec(std::string(t), "XAL_MOCK_DEVICES");
  if (looks_like_file(t)) {
    const std::string path(t);
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
      fail("XAL_MOCK_DEVICES: cannot open file '" + path + "'");
    if (std::filesystem::is_directory(status))
      fail("XAL_MOCK_DEVICES: '" + path + "' is a directory, expected a JSON file");
    if (!std::filesystem::is_regular_file(status))
      fail("XAL_MOCK_DEVICES: '" + path + "' is not a regular file, expected a JSON file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("XAL_MOCK_DEVICES: cannot open file '" + path + "'");
    // Reads at most one byte past the cap, so a file too large is refused
    // without reading it all.
    std::string content(kMaxSpecFileBytes + 1, '\0');
    in.read(content.data(), static_cast<std::streamsize>(content.size()));
    if (in.bad()) fail("XAL_MOCK_DEVICES: cannot read file '" + path + "'");
    content.resize(static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxSpecFileBytes)
      fail("XAL_MOCK_DEVICES: file '" + path + "' is larger than " +
           std::to_string(kMaxSpecFileBytes) + " bytes");
    return parse_json_spec(content, "file '" + path + "'");
  }
  return parse_compact_spec(t);
}

}  // namespace xal::mock
