// The backend list (XAL_BACKENDS, xal_init_options_t's backends): names,
// paths and wrappers ("fault:mock"), as the loader plans what to open.
// No folder is searched: only what the text names is planned. (An empty
// name is planned too: the loader reports it as a plugin not found.)
#include "fuzz_check.hpp"
#include "loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(xal::fuzz::as_text(data, size));
  const auto plan = xal::core::plan_backends(text, {});
  size_t pieces = 1;
  for (char c : text) pieces += c == ',';
  XAL_FUZZ_CHECK(plan.size() <= pieces, "more plugins planned than named");
  // A wrapped target is never also loaded on its own.
  for (const auto& wrapper : plan) {
    if (wrapper.argument.empty()) continue;
    for (const auto& other : plan)
      XAL_FUZZ_CHECK(!other.argument.empty() || other.plugin != wrapper.argument,
                     "'" + wrapper.argument + "' is loaded wrapped and on its own");
  }
  return 0;
}
