// Shared by the decision-line tests of tasks/ and net/: routes the library's log into a list at
// a chosen level for the lifetime of the object, then restores the previous sink and level
// (both are process-wide).
#pragma once

#include <wheelbeat/core/log.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wbtest {

// "2026-11-25T14:03:07.412Z": digits where digits go, the separators in place (std::regex is not
// used: GCC 12 warns inside it under the sanitizer builds' -O1).
inline bool isLogTimestamp(std::string_view s) {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (shape[i] == 'd' ? !digit : s[i] != shape[i]) return false;
  }
  return true;
}

// core::formatDuration()'s text: "187us", "1.5ms", "2m5s", "1h30m" (digits and '.', then units).
inline bool isHumanDuration(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  for (const char c : s) {
    if (std::string_view("0123456789.nusmh").find(c) == std::string_view::npos) return false;
  }
  return s.back() == 's' || s.back() == 'm' || s.back() == 'h';
}

class LevelLogCapture {
public:
  explicit LevelLogCapture(wheelbeat::core::LogLevel level)
      : savedLevel_(wheelbeat::core::logLevel()) {
    previous_ =
        wheelbeat::core::setLogSink([this](wheelbeat::core::LogLevel l, std::string_view text) {
          std::lock_guard lock(mutex_);
          lines_.push_back(std::string(wheelbeat::core::logLevelName(l)).append(" ").append(text));
        });
    wheelbeat::core::setLogLevel(level);
  }
  ~LevelLogCapture() {
    wheelbeat::core::setLogLevel(savedLevel_);
    wheelbeat::core::setLogSink(std::move(previous_));
  }
  LevelLogCapture(const LevelLogCapture&) = delete;
  LevelLogCapture& operator=(const LevelLogCapture&) = delete;

  // Every line as "LEVEL message", in order.
  [[nodiscard]] std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  // The lines that start with `prefix` (after "LEVEL ").
  [[nodiscard]] std::vector<std::string> matching(std::string_view prefix) const {
    std::vector<std::string> out;
    for (auto& line : lines()) {
      const auto space = line.find(' ');
      if (std::string_view(line).substr(space + 1).starts_with(prefix)) out.push_back(line);
    }
    return out;
  }

private:
  wheelbeat::core::LogLevel savedLevel_;
  wheelbeat::core::LogSink previous_;
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace wbtest
