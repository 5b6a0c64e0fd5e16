// Small formatting helpers shared by the samples.
#pragma once

#include <wheelbeat/net/options.h>

#include <fmt/format.h>

#include <chrono>
#include <string>

namespace samples {

// "250ms", "1.5s": durations as people read them.
inline std::string human(std::chrono::nanoseconds d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count();
  if (ms >= 1000) return fmt::format("{:.3g}s", ms / 1000);
  if (ms >= 1) return fmt::format("{:.3g}ms", ms);
  return fmt::format("{:.3g}us", ms * 1000);
}

// "127.0.0.1:20880", "[::1]:20880".
inline std::string endpointText(const wheelbeat::net::Endpoint& e) {
  if (e.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", e.host, e.port);
  return fmt::format("{}:{}", e.host, e.port);
}

}  // namespace samples
