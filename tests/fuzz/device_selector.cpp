// Device selectors (XAL_DEVICE_SELECTOR, xal_init_options_t's
// device_selector): "mock:0,1;cuda:*", ranges "mock:0-3".
#include "fuzz_check.hpp"
#include "selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = xal::fuzz::as_text(data, size);
  std::string error;
  const auto sel = xal::core::Selector::parse(text, &error);
  if (!sel) {
    XAL_FUZZ_CHECK(xal::fuzz::says_something(error), "a refusal that says nothing");
    return 0;
  }
  // Asking is cheap whatever the ranges: a few indices of a few backends.
  for (uint32_t index : {0u, 1u, 7u, 0xffffffu, 0xffffffffu})
    (void)sel->selects({"mock", "cuda", "fault"}, index);
  // What is unmatched is said once per term or range: never more lines
  // than the text has separators to write terms and ranges with.
  const std::vector<xal::core::Selector::Started> started = {
      {{"mock"}, 2}, {{"cuda", "nvidia"}, 0}, {{"fault"}, 1}};
  const auto lines = sel->unmatched(started);
  size_t pieces = 1;
  for (char c : text) pieces += c == ';' || c == ',';
  XAL_FUZZ_CHECK(lines.size() <= pieces, "more warnings than terms and ranges");
  for (const auto& line : lines)
    XAL_FUZZ_CHECK(xal::fuzz::says_something(line), "an empty warning");
  return 0;
}
