// JSON-lines event writer of the suite (see events.hpp).
#include "events.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>

namespace conform {
namespace {

using nlohmann::json;

class EventWriter;
EventWriter* g_writer = nullptr;  // the active writer, if any

std::string full_name(const testing::TestInfo& info) {
  return std::string(info.test_suite_name()) + "." + info.name();
}

class EventWriter : public testing::EmptyTestEventListener {
 public:
  explicit EventWriter(std::FILE* file) : file_(file) { g_writer = this; }
  ~EventWriter() override {
    g_writer = nullptr;
    std::fclose(file_);
  }
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  void write(const json& line) {
    const std::lock_guard lock(mutex_);
    const std::string text = line.dump(-1, ' ', false,
                                       json::error_handler_t::replace);
    std::fputs(text.c_str(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
  }

  void OnTestStart(const testing::TestInfo& info) override {
    current_ = full_name(info);
    messages_.clear();
    start_ = std::chrono::steady_clock::now();
    write({{"event", "start"}, {"test", current_}});
  }

  void OnTestPartResult(const testing::TestPartResult& part) override {
    std::string text;
    if (part.file_name() != nullptr && part.type() != testing::TestPartResult::kSkip) {
      text = std::string(part.file_name()) + ":" +
             std::to_string(part.line_number()) + ": ";
    }
    text += part.message();
    if (!messages_.empty()) messages_ += "\n";
    messages_ += text;
  }

  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult* result = info.result();
    std::string outcome = "passed";
    if (result->Failed()) {
      outcome = "failed";
    } else if (result->Skipped()) {
      outcome = "skipped";
    }
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
    if (messages_.size() > 8192) messages_ = messages_.substr(0, 8192) + "...";
    write({{"event", "end"},
           {"test", full_name(info)},
           {"outcome", outcome},
           {"message", messages_},
           {"duration_ms", ms}});
    current_.clear();
  }

  const std::string& current() const { return current_; }

 private:
  std::FILE* file_;
  std::mutex mutex_;
  std::string current_;
  std::string messages_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

void record_figure(std::string_view name, double value, std::string_view unit,
                   int device) {
  if (!std::isfinite(value)) return;  // no measurement (JSON has no NaN)
  testing::Test::RecordProperty(std::string(name), std::to_string(value));
  if (g_writer == nullptr) return;
  json line = {{"event", "figure"},
               {"test", g_writer->current()},
               {"name", name},
               {"value", value},
               {"unit", unit}};
  line["device"] = device >= 0 ? json(device) : json(nullptr);
  g_writer->write(line);
}

void note_devices(const std::vector<int>& devices) {
  if (g_writer == nullptr) return;
  g_writer->write({{"event", "devices"},
                   {"test", g_writer->current()},
                   {"devices", json(devices)}});
}

void note_devices(std::initializer_list<int> devices) {
  note_devices(std::vector<int>(devices));
}

std::unique_ptr<testing::TestEventListener> make_event_writer(const char* path) {
  if (path == nullptr || *path == '\0') return nullptr;
  std::FILE* file = std::fopen(path, "a");
  if (file == nullptr) return nullptr;
  return std::make_unique<EventWriter>(file);
}

}  // namespace conform
