// How every sample prints a line: the wall-clock time (UTC, ms), the level, the text —
//   2026-11-25T14:03:07.412Z INFO  echo_server: listening on 127.0.0.1:20880
// the same shape as the library's own log lines on stderr (core/log.h), so both read and sort
// together. Each line leaves in one piece (one fwrite, then a flush), so it reaches a pipe or a
// file at once and lines of different threads never mix. Info and warnings go to stdout, errors
// to stderr.
#pragma once

#include <wheelbeat/core/log.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace samples {

// "2026-11-25T14:03:07.412Z WARN  text" (no newline).
inline std::string sayLine(wheelbeat::core::LogLevel level, std::string_view text) {
  return fmt::format("{} {:<5} {}",
                     wheelbeat::core::formatTimestamp(std::chrono::system_clock::now()),
                     wheelbeat::core::logLevelName(level), text);
}

template <typename... Args>
void say(wheelbeat::core::LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  std::string line = sayLine(level, fmt::format(format, std::forward<Args>(args)...));
  line += '\n';
  std::FILE* out = level >= wheelbeat::core::LogLevel::Error ? stderr : stdout;
  std::fwrite(line.data(), 1, line.size(), out);  // stdio locks the stream for the whole call
  std::fflush(out);
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  say(wheelbeat::core::LogLevel::Info, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  say(wheelbeat::core::LogLevel::Warn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  say(wheelbeat::core::LogLevel::Error, format, std::forward<Args>(args)...);
}

// First thing in each sample's main(): stdout line-buffered even when it is a pipe or a file
// (by default it would be block-buffered there, and a reader would see nothing for a while).
// say() flushes anyway; this covers whatever else prints (usage text).
inline void lineBufferedOutput() { std::setvbuf(stdout, nullptr, _IOLBF, 0); }

}  // namespace samples
