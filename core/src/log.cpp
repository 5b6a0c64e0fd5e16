#include <wheelbeat/core/log.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <utility>

namespace wheelbeat::core {
namespace {

std::mutex& sinkMutex() {
  static std::mutex mutex;
  return mutex;
}
LogSink& sinkSlot() {
  static LogSink sink;
  return sink;
}
std::atomic<LogLevel> gLevel{LogLevel::Info};

}  // namespace

LogSink setLogSink(LogSink sink) {
  std::lock_guard lock(sinkMutex());
  return std::exchange(sinkSlot(), std::move(sink));
}

void setLogLevel(LogLevel level) noexcept { gLevel.store(level, std::memory_order_relaxed); }
LogLevel logLevel() noexcept { return gLevel.load(std::memory_order_relaxed); }

std::string_view logLevelName(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug: return "DEBUG";
    case LogLevel::Info: return "INFO";
    case LogLevel::Warn: return "WARN";
    case LogLevel::Error: return "ERROR";
    case LogLevel::Off: return "OFF";
  }
  return "?";
}

namespace detail {
void emit(LogLevel level, std::string_view message) noexcept {
  // The lock also keeps lines from different threads whole.
  std::lock_guard lock(sinkMutex());
  try {
    if (sinkSlot()) {
      sinkSlot()(level, message);
    } else {
      fmt::print(stderr, "wheelbeat [{}] {}\n", logLevelName(level), message);
    }
  } catch (...) {
    // A failing sink must not take the library down; there is nowhere left to report it.
  }
}
}  // namespace detail

}  // namespace wheelbeat::core
