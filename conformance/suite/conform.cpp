// Process-wide suite state and the device / pair parameters.
#include "conform.hpp"

#include <xal_common/strings.hpp>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "events.hpp"
#include "helpers.hpp"

namespace conform {
namespace {

// Parses XAL_CONFORM_DEVICES ("0,2"); an empty list means every device.
std::vector<uint32_t> wanted_devices() {
  std::vector<uint32_t> out;
  const auto text = xal::common::env("XAL_CONFORM_DEVICES");
  if (!text) return out;
  for (const auto& piece : xal::common::split(*text, ", ")) {
    const auto value = xal::common::parse_uint(piece);
    if (!value) throw std::invalid_argument("XAL_CONFORM_DEVICES: '" + piece +
                                            "' is not a device index");
    out.push_back(static_cast<uint32_t>(*value));
  }
  return out;
}

// Whether the core runs with validation: off for exactly what the core
// takes as off (core/src/api_init.cpp): 0, off, false or no, in any case,
// blanks around ignored; unset or anything else is on.
bool validation_from_env() {
  const auto v = xal::common::env("XAL_VALIDATION");
  if (!v) return true;
  const std::string s = xal::common::to_lower(xal::common::trim(*v));
  return !(s == "0" || s == "off" || s == "false" || s == "no");
}

std::string sanitize(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

}  // namespace

Suite& Suite::get() {
  static Suite suite;
  return suite;
}

void Suite::initialize() {
  quick_ = xal::common::env("XAL_CONFORM_QUICK").value_or("0") == "1";
  validation_ = validation_from_env();
  init_status_ = xal_init(nullptr);
  if (init_status_ != XAL_SUCCESS) {
    init_message_ = describe(init_status_);
    problem_ = "xal_init failed in the suite: " + init_message_;
    return;
  }
  initialized_ = true;
  init_status_ = enumerate();
  if (init_status_ != XAL_SUCCESS) {
    init_message_ = describe(init_status_);
    problem_ = "listing the devices failed in the suite: " + init_message_;
  }
}

xal_status_t Suite::enumerate() {
  all_.clear();
  selected_.clear();
  problem_.clear();
  uint32_t count = 0;
  xal_status_t s = xal_device_count(&count);
  if (s != XAL_SUCCESS) return s;
  for (uint32_t i = 0; i < count; ++i) {
    DeviceInfo info;
    info.index = i;
    info.props.struct_size = sizeof(info.props);
    s = xal_device_get(i, &info.handle);
    if (s != XAL_SUCCESS) return s;
    s = xal_device_get_properties(info.handle, &info.props);
    if (s != XAL_SUCCESS) return s;
    all_.push_back(info);
  }
  const std::vector<uint32_t> wanted = wanted_devices();
  const std::string backend =
      xal::common::env("XAL_CONFORM_BACKEND").value_or("");
  for (const DeviceInfo& info : all_) {
    if (!wanted.empty() &&
        std::find(wanted.begin(), wanted.end(), info.index) == wanted.end()) {
      continue;
    }
    if (!backend.empty() && backend != info.props.backend) continue;
    selected_.push_back(info);
  }
  // The driver names the devices it selected: each must be here.
  std::string missing;
  for (const uint32_t w : wanted) {
    const bool found = std::any_of(selected_.begin(), selected_.end(),
                                   [w](const DeviceInfo& d) { return d.index == w; });
    if (!found) missing += (missing.empty() ? "" : ",") + std::to_string(w);
  }
  if (!missing.empty()) {
    problem_ = "XAL_CONFORM_DEVICES selects device(s) " + missing + " but the suite found " +
               std::to_string(all_.size()) + " device(s)" +
               (backend.empty() ? std::string() : " (backend " + backend + ")") +
               " and could not select them";
  }
  return XAL_SUCCESS;
}

xal_status_t Suite::reinitialize() {
  if (initialized_) {
    xal_shutdown();
    initialized_ = false;
  }
  const xal_status_t s = xal_init(nullptr);
  if (s != XAL_SUCCESS) return s;
  initialized_ = true;
  return enumerate();
}

void Suite::finalize() {
  if (initialized_) xal_shutdown();
  initialized_ = false;
}

const DeviceInfo& Suite::device(uint32_t index) const {
  for (const DeviceInfo& info : all_) {
    if (info.index == index) return info;
  }
  throw std::out_of_range("no device " + std::to_string(index));
}

std::vector<DeviceParam> device_params() {
  std::vector<DeviceParam> out;
  for (const DeviceInfo& info : Suite::get().devices()) {
    out.push_back({static_cast<int>(info.index),
                   "d" + std::to_string(info.index) + "_" +
                       sanitize(info.props.backend)});
  }
  if (out.empty()) out.push_back({-1, "no_device"});
  else if (!Suite::get().selection_problem().empty()) out.push_back({-1, "missing_devices"});
  return out;
}

std::vector<PairParam> pair_params() {
  std::vector<PairParam> out;
  const auto& devices = Suite::get().devices();
  for (const DeviceInfo& a : devices) {
    for (const DeviceInfo& b : devices) {
      if (a.index == b.index) continue;
      const bool cross =
          std::string_view(a.props.backend) != std::string_view(b.props.backend);
      out.push_back({static_cast<int>(a.index), static_cast<int>(b.index),
                     cross,
                     "d" + std::to_string(a.index) + "_to_d" +
                         std::to_string(b.index) + (cross ? "_cross" : "")});
    }
  }
  if (out.empty()) out.push_back({-1, -1, false, "no_pair"});
  else if (!Suite::get().selection_problem().empty())
    out.push_back({-1, -1, false, "missing_devices"});
  return out;
}

std::vector<DeviceSetParam> set_params() {
  std::vector<DeviceSetParam> out;
  const auto& devices = Suite::get().devices();
  std::vector<std::string> backends;
  for (const DeviceInfo& d : devices) {
    if (std::find(backends.begin(), backends.end(), d.props.backend) == backends.end()) {
      backends.emplace_back(d.props.backend);
    }
  }
  if (devices.size() >= 2) {
    DeviceSetParam all{{}, backends.size() > 1, "all"};
    for (const DeviceInfo& d : devices) all.devices.push_back(static_cast<int>(d.index));
    out.push_back(std::move(all));
  }
  if (backends.size() > 1) {
    for (const std::string& b : backends) {
      DeviceSetParam same{{}, false, "homogeneous_" + sanitize(b)};
      for (const DeviceInfo& d : devices) {
        if (b == d.props.backend) same.devices.push_back(static_cast<int>(d.index));
      }
      if (same.devices.size() >= 2) out.push_back(std::move(same));
    }
    DeviceSetParam mixed{{}, true, "mixed"};
    for (const std::string& b : backends) {
      for (const DeviceInfo& d : devices) {
        if (b == d.props.backend) {
          mixed.devices.push_back(static_cast<int>(d.index));
          break;
        }
      }
    }
    out.push_back(std::move(mixed));
  }
  if (out.empty()) out.push_back({{}, false, "no_set"});
  else if (!Suite::get().selection_problem().empty())
    out.push_back({{}, false, "missing_devices"});
  return out;
}

std::string set_param_name(const testing::TestParamInfo<DeviceSetParam>& p) {
  return p.param.label;
}

std::string device_param_name(const testing::TestParamInfo<DeviceParam>& p) {
  return p.param.label;
}

std::string pair_param_name(const testing::TestParamInfo<PairParam>& p) {
  return p.param.label;
}

namespace {

// SetUp of a placeholder parameter (no device, pair or set): unsupported
// when nothing was selected, failed when the driver's selection could not
// be honoured (Suite::selection_problem()).
void nothing_selected(const char* why) {
  const std::string& problem = Suite::get().selection_problem();
  if (!problem.empty()) FAIL() << problem;
  GTEST_SKIP() << kUnsupported << why;
}

}  // namespace

void DeviceTest::SetUp() {
  const DeviceParam& param = GetParam();
  if (param.index < 0) return nothing_selected("no device selected");
  ASSERT_TRUE(Suite::get().initialized())
      << "xal is not initialised: " << Suite::get().init_message();
  info_ = &Suite::get().device(static_cast<uint32_t>(param.index));
  note_devices({param.index});
}

void PairTest::SetUp() {
  const PairParam& param = GetParam();
  if (param.first < 0) return nothing_selected("needs two selected devices");
  ASSERT_TRUE(Suite::get().initialized())
      << "xal is not initialised: " << Suite::get().init_message();
  first_ = &Suite::get().device(static_cast<uint32_t>(param.first));
  second_ = &Suite::get().device(static_cast<uint32_t>(param.second));
  note_devices({param.first, param.second});
}

void DeviceSetTest::SetUp() {
  const DeviceSetParam& param = GetParam();
  if (param.devices.empty()) return nothing_selected("needs two selected devices");
  ASSERT_TRUE(Suite::get().initialized())
      << "xal is not initialised: " << Suite::get().init_message();
  devices_.clear();
  for (int index : param.devices) {
    devices_.push_back(&Suite::get().device(static_cast<uint32_t>(index)));
  }
  note_devices(param.devices);
}

}  // namespace conform
