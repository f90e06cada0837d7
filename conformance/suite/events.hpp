// The suite's side channel to xal-conform: a JSON-lines file (path in
// XAL_CONFORM_EVENTS) with one line per test start, device attribution,
// figure and test end. Each line is flushed as written, so the driver can
// show progress and, when a test kills the process, knows which test it was.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

namespace conform {

// Attaches a figure (a measurement) to the running test: it goes to the
// events file (and so to the JSON report) and to the test's XML/JSON
// properties. `device` is a global device index or -1. A value that is
// not finite (NaN, infinite) is not recorded. Not thread-safe:
// call from the test's own thread.
void record_figure(std::string_view name, double value, std::string_view unit,
                   int device = -1);

// Says which devices (global indices) the running test exercises.
void note_devices(std::initializer_list<int> devices);
void note_devices(const std::vector<int>& devices);

// The listener that writes the events file; nullptr when `path` is null or
// empty. GoogleTest takes ownership when it is appended to the listeners.
std::unique_ptr<testing::TestEventListener> make_event_writer(const char* path);

}  // namespace conform
