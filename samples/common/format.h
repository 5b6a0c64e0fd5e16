// Small formatting helpers shared by the samples.
#pragma once

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/net/options.h>

#include <fmt/format.h>

#include <chrono>
#include <string>

namespace samples {

// "250ms", "1.5s", "2m5s": durations as people read them (core::formatDuration(), the format of
// the library's own messages).
inline std::string human(std::chrono::nanoseconds d) { return wheelbeat::core::formatDuration(d); }

// "127.0.0.1:20880", "[::1]:20880".
inline std::string endpointText(const wheelbeat::net::Endpoint& e) {
  if (e.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", e.host, e.port);
  return fmt::format("{}:{}", e.host, e.port);
}

}  // namespace samples
