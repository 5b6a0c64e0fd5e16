// Minimal logging seam for the library: one process-wide sink, fmt-formatted messages.
//
// The default sink writes one line per message to stderr, in one write(2):
//   2026-11-25T14:03:07.412Z WARN  wheelbeat: the message
// i.e. the wall-clock time in UTC (ISO 8601, milliseconds), the level padded to 5 characters,
// and one "wheelbeat: " prefix (messages never carry it themselves). Applications route the
// library's messages into their own logger (syslog, spdlog, ...: see docs/logging.md) with
// setLogSink(); a sink receives the bare message, without time, level or prefix.
//
// Cost when disabled: log() checks the level before formatting anything. Its arguments are still
// evaluated by the caller, so a call site whose arguments cost something (a std::string built for
// the line) checks logEnabled() first, or passes lazy arguments (core::human(duration)).
// Thread: any. The sink may be called concurrently from the wheel thread, the event loops and
// others; emit() serialises the calls (one at a time, whole lines), so a sink needs no lock of
// its own for that, but it must not call setLogSink() (it would deadlock).
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace wheelbeat::core {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

using LogSink = std::function<void(LogLevel, std::string_view)>;

// Replaces the sink (nullptr restores the default stderr sink). Returns the previous sink
// (nullptr when it was the default one). Thread: any; not from inside a sink.
LogSink setLogSink(LogSink sink);
// Messages below this level are dropped before formatting. Default: Info. Off drops everything.
// Thread: any (a relaxed atomic: another thread sees the change at its next call).
void setLogLevel(LogLevel level) noexcept;
[[nodiscard]] LogLevel logLevel() noexcept;
// True if a message at `level` would reach the sink. Thread: any.
[[nodiscard]] inline bool logEnabled(LogLevel level) noexcept {
  return level != LogLevel::Off && level >= logLevel();
}
// "DEBUG", "INFO", "WARN", "ERROR", "OFF".
[[nodiscard]] std::string_view logLevelName(LogLevel level) noexcept;

// "2026-11-25T14:03:07.412Z": `when` in UTC, ISO 8601, truncated to the millisecond (the
// timestamp of formatLogLine(), for applications that print lines of the same shape).
// Thread: any.
[[nodiscard]] std::string formatTimestamp(std::chrono::system_clock::time_point when);

// The default sink's line for `message` at `when`, without the trailing newline:
// "2026-11-25T14:03:07.412Z INFO  wheelbeat: message" (the time truncated to the millisecond,
// UTC; years before 1970 or after 9999 are not supported). Thread: any.
[[nodiscard]] std::string formatLogLine(std::chrono::system_clock::time_point when, LogLevel level,
                                        std::string_view message);

namespace detail {
void emit(LogLevel level, std::string_view message) noexcept;
}

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!logEnabled(level)) return;
  try {
    detail::emit(level, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
    // Logging must never take the caller down (it runs inside noexcept task boundaries).
  }
}

}  // namespace wheelbeat::core
