#include <wheelbeat/core/log.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>
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

// One write(2) for the whole line when the kernel takes it (a terminal or a pipe takes up to
// PIPE_BUF = 4096 bytes atomically), so lines of other writers to stderr cannot cut into it.
void writeAll(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to report a failing stderr
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void defaultSink(LogLevel level, std::string_view message) {
  std::string line = formatLogLine(std::chrono::system_clock::now(), level, message);
  line += '\n';
  writeAll(STDERR_FILENO, line);
}

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

std::string formatTimestamp(std::chrono::system_clock::time_point when) {
  using std::chrono::floor, std::chrono::milliseconds, std::chrono::seconds;
  const auto ms = floor<milliseconds>(when.time_since_epoch());
  const auto secs = floor<seconds>(ms);
  const auto t = static_cast<std::time_t>(secs.count());
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     (ms - secs).count());
}

std::string formatLogLine(std::chrono::system_clock::time_point when, LogLevel level,
                          std::string_view message) {
  return fmt::format("{} {:<5} wheelbeat: {}", formatTimestamp(when), logLevelName(level), message);
}

namespace detail {
void emit(LogLevel level, std::string_view message) noexcept {
  // The lock also keeps lines from different threads whole and in one order for every sink.
  std::lock_guard lock(sinkMutex());
  try {
    if (sinkSlot()) {
      sinkSlot()(level, message);
    } else {
      defaultSink(level, message);
    }
  } catch (...) {
    // A failing sink must not take the library down; there is nowhere left to report it.
  }
}
}  // namespace detail

}  // namespace wheelbeat::core
