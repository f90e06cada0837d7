// The process-wide state of the conformance suite: xal is initialised once,
// before GoogleTest registers its tests, and the selected devices are the
// parameters of every device and device-pair fixture.
#pragma once

#include <gtest/gtest.h>
#include <xal/xal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "events.hpp"  // record_figure, note_devices: every group uses them

namespace conform {

struct DeviceInfo {
  uint32_t index = 0;  // global index (xal_device_get)
  xal_device_t handle = nullptr;
  xal_device_properties_t props{};
};

// Settings the driver passes to the suite through the environment:
//   XAL_CONFORM_DEVICES  "0,2"   global device indices to test (default all)
//   XAL_CONFORM_BACKEND  "mock"  only devices of this backend
//   XAL_CONFORM_QUICK    "1"     quick mode (fewer sizes and repetitions;
//                                parity thresholds reported, not checked)
//   XAL_CONFORM_EVENTS   path    JSON lines of test starts, ends, figures
class Suite {
 public:
  static Suite& get();

  // xal_init with default options and device enumeration. Not thread-safe;
  // called from main before tests are registered.
  void initialize();
  // Re-initialises after a test that shut xal down (platform cycles) and
  // refreshes every device handle. Returns the xal_init status.
  xal_status_t reinitialize();
  // xal_shutdown if initialised.
  void finalize();

  xal_status_t init_status() const { return init_status_; }
  const std::string& init_message() const { return init_message_; }
  bool initialized() const { return initialized_; }
  // Why the devices the driver selected are not all here (xal_init or the
  // listing failed, or XAL_CONFORM_DEVICES names a device the suite did not
  // find); empty when they are. The placeholder parameters then fail.
  const std::string& selection_problem() const { return problem_; }
  // Devices after selection; all_devices() before it.
  const std::vector<DeviceInfo>& devices() const { return selected_; }
  const std::vector<DeviceInfo>& all_devices() const { return all_; }
  // The device with global index `index` (must exist).
  const DeviceInfo& device(uint32_t index) const;
  bool quick() const { return quick_; }
  // False when XAL_VALIDATION=0: registry checks are not promised.
  bool validation() const { return validation_; }

 private:
  xal_status_t enumerate();

  bool initialized_ = false;
  bool quick_ = false;
  bool validation_ = true;
  xal_status_t init_status_ = XAL_ERROR_NOT_INITIALIZED;
  std::string init_message_;
  std::string problem_;
  std::vector<DeviceInfo> all_;
  std::vector<DeviceInfo> selected_;
};

// Parameter of a per-device fixture; index -1 is a placeholder: "no device
// selected" (the test then reports itself unsupported), or "the selected
// devices are missing" (Suite::selection_problem(); the test fails).
struct DeviceParam {
  int index = -1;
  std::string label;
};
// Parameter of a per-pair fixture (ordered: copies go first -> second).
struct PairParam {
  int first = -1;
  int second = -1;
  bool cross_backend = false;
  std::string label;
};

// Parameter of a per-set fixture: "all" selected devices, each backend's
// devices ("homogeneous_<backend>") and one device of each backend
// ("mixed"), each when it has at least two devices.
struct DeviceSetParam {
  std::vector<int> devices;
  bool mixed = false;  // devices of more than one backend
  std::string label;
};

std::vector<DeviceParam> device_params();
std::vector<PairParam> pair_params();
std::vector<DeviceSetParam> set_params();
std::string device_param_name(const testing::TestParamInfo<DeviceParam>& p);
std::string pair_param_name(const testing::TestParamInfo<PairParam>& p);
std::string set_param_name(const testing::TestParamInfo<DeviceSetParam>& p);

// Base fixture of per-device tests: dev() and props() of the parameter.
class DeviceTest : public testing::TestWithParam<DeviceParam> {
 protected:
  void SetUp() override;
  xal_device_t dev() const { return info_->handle; }
  const xal_device_properties_t& props() const { return info_->props; }
  uint32_t index() const { return info_->index; }
  // False for the placeholder test of a run without its devices (SetUp
  // failed it): dev() and props() must not be used then, in TearDown too.
  bool has_device() const { return info_ != nullptr; }

 private:
  const DeviceInfo* info_ = nullptr;
};

// Base fixture of per-pair tests: first() and second() devices.
class PairTest : public testing::TestWithParam<PairParam> {
 protected:
  void SetUp() override;
  const DeviceInfo& first() const { return *first_; }
  const DeviceInfo& second() const { return *second_; }
  bool cross_backend() const { return GetParam().cross_backend; }

 private:
  const DeviceInfo* first_ = nullptr;
  const DeviceInfo* second_ = nullptr;
};

// Base fixture of per-set tests: devices() of the set, in order.
class DeviceSetTest : public testing::TestWithParam<DeviceSetParam> {
 protected:
  void SetUp() override;
  const std::vector<const DeviceInfo*>& devices() const { return devices_; }
  bool mixed() const { return GetParam().mixed; }

 private:
  std::vector<const DeviceInfo*> devices_;
};

}  // namespace conform

// Instantiates a per-device fixture for group `group` (the test names then
// start with "group/").
#define XAL_CONFORM_DEVICE_GROUP(group, fixture)                    \
  INSTANTIATE_TEST_SUITE_P(group, fixture,                          \
                           testing::ValuesIn(conform::device_params()), \
                           conform::device_param_name)

#define XAL_CONFORM_SET_GROUP(group, fixture)                       \
  INSTANTIATE_TEST_SUITE_P(group, fixture,                          \
                           testing::ValuesIn(conform::set_params()), \
                           conform::set_param_name)

#define XAL_CONFORM_PAIR_GROUP(group, fixture)                      \
  INSTANTIATE_TEST_SUITE_P(group, fixture,                          \
                           testing::ValuesIn(conform::pair_params()), \
                           conform::pair_param_name)
