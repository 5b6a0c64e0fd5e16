// Minimal logging seam for the library: one process-wide sink, fmt-formatted messages.
//
// The default sink writes "wheelbeat [LEVEL] message" to stderr. Applications route the
// library's messages into their own logger with setLogSink(). Thread: any; the sink may be
// called concurrently from the wheel thread and others and must be thread-safe itself.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string_view>

namespace wheelbeat::core {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

using LogSink = std::function<void(LogLevel, std::string_view)>;

// Replaces the sink (nullptr restores the default stderr sink). Returns the previous sink.
LogSink setLogSink(LogSink sink);
// Messages below this level are dropped before formatting. Default: Info.
void setLogLevel(LogLevel level) noexcept;
[[nodiscard]] LogLevel logLevel() noexcept;
[[nodiscard]] std::string_view logLevelName(LogLevel level) noexcept;

namespace detail {
void emit(LogLevel level, std::string_view message) noexcept;
}

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (level < logLevel()) return;
  try {
    detail::emit(level, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
    // Logging must never take the caller down (it runs inside noexcept task boundaries).
  }
}

}  // namespace wheelbeat::core
