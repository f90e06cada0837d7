// Known-failure files of xal-conform (--known-failures, the bundled
// known_failures.json): load_known_failures, then apply_known_failures to
// a small run.
#include "fuzz_check.hpp"
#include "known_failures.hpp"
#include "memfile.hpp"

namespace {

using namespace conform_driver;

Platform platform() {
  Platform p;
  p.devices.push_back(DeviceEntry{.index = 0, .name = "A100", .backend = "mock"});
  p.devices.push_back(DeviceEntry{.index = 1, .name = "L4", .backend = "cuda"});
  return p;
}

RunResult run() {
  RunResult r;
  r.tests.push_back({.name = "memory/Memory.AllocFree/d0_mock", .group = "memory",
                     .devices = {0}, .outcome = kFailed});
  r.tests.push_back({.name = "copies/Copies.Peer/d0_mock_d1_cuda", .group = "copies",
                     .devices = {0, 1}, .outcome = kPassed});
  r.tests.push_back({.name = "platform/Platform.Version", .group = "platform",
                     .outcome = kUnsupported});
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const xal::fuzz::MemFile file(data, size);
  std::string error;
  const auto known = load_known_failures(file.path(), error);
  if (!known) {
    XAL_FUZZ_CHECK(error.find(file.path() + ": ") == 0,
                   "a refusal that does not name the file: " + error);
    return 0;
  }
  for (const KnownFailure& k : *known)
    XAL_FUZZ_CHECK(!k.backend.empty() && !k.test.empty() && !k.reason.empty(),
                   "an entry with an empty field");
  RunResult result = run();
  apply_known_failures(*known, platform(), result);
  const RunResult before = run();
  for (size_t i = 0; i < result.tests.size(); ++i) {
    const std::string& was = before.tests[i].outcome;
    const std::string& now = result.tests[i].outcome;
    const bool same = now == was;
    const bool marked = (was == kFailed && now == kKnownFailure) ||
                        (was == kPassed && now == kUnexpectedPass);
    XAL_FUZZ_CHECK(same || marked, "outcome " + was + " became " + now);
    XAL_FUZZ_CHECK(same == result.tests[i].known_failure_reason.empty(),
                   "a reason without a changed outcome, or the reverse");
  }
  return 0;
}
