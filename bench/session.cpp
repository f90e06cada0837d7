#include "session.hpp"

#include <atomic>
#include <cstdlib>
#include <utility>

namespace xal::bench {
namespace {
std::atomic<bool> g_failed{false};
// Set when a case failed: the next one starts on a fresh session.
bool g_reopen = false;
// The open session, if any, and how many were opened (see Session).
std::unique_ptr<Session> g_session;
int g_opened = 0;
}  // namespace

std::string error_text(xal_status_t status) {
  xal_error_info_t info{};
  info.struct_size = sizeof(info);
  std::string text = xal_status_name(status);
  if (xal_last_error(&info) == XAL_SUCCESS && info.message[0] != '\0') {
    text += std::string(": ") + info.message;
  }
  return text;
}

void fail(benchmark::State& state, const std::string& message) {
  g_failed = true;
  g_reopen = true;
  state.SkipWithError(message.c_str());
}

bool ok(benchmark::State& state, xal_status_t status, const char* what) {
  if (status == XAL_SUCCESS) {
    return true;
  }
  fail(state, std::string(what) + " failed: " + error_text(status));
  return false;
}

bool any_failed() { return g_failed; }

const Session* Session::acquire(benchmark::State& state, int validation) {
  if (g_session && (g_session->validation_ != validation || g_reopen)) {
    close();
  }
  if (g_session) {
    return g_session.get();
  }
  g_reopen = false;
  const char* backends = std::getenv("XAL_BACKENDS");
  xal_init_options_t options{};
  options.struct_size = sizeof(options);
  options.backends = (backends != nullptr && backends[0] != '\0') ? nullptr
                                                                   : "mock";
  options.validation = validation;
  auto session = std::make_unique<Session>(Key{}, validation);
  ++g_opened;
  if (!ok(state, xal_init(&options), "xal_init")) {
    return nullptr;
  }
  session->initialised_ = true;
  uint32_t count = 0;
  if (!ok(state, xal_device_count(&count), "xal_device_count")) {
    return nullptr;
  }
  if (count == 0) {
    fail(state, "no device: run xal-info to see why");
    return nullptr;
  }
  if (!ok(state, xal_device_get(0, &session->device_), "xal_device_get")) {
    return nullptr;
  }
  g_session = std::move(session);
  return g_session.get();
}

void Session::close() { g_session.reset(); }

int Session::opened() { return g_opened; }

Session::~Session() {
  if (initialised_) {
    xal_shutdown();
  }
}

}  // namespace xal::bench
