// The summary table xal-conform prints after a run: per device and group
// the outcome counts, the parity ratios, and the failed tests.
#pragma once

#include <cstdio>

#include "model.hpp"
#include "report.hpp"

namespace conform_driver {

void print_summary(std::FILE* out, const Platform& platform, const RunResult& run,
                   const ReportContext& context);

}  // namespace conform_driver
