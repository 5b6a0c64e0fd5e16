#include <wheelbeat/config/config.h>

#include <utility>

namespace wheelbeat::config {

core::LogSink applyLogging(const Config& config, core::LogSink sink) {
  // The sink first: a message logged in between at the new level already reaches it.
  core::LogSink previous = core::setLogSink(std::move(sink));
  core::setLogLevel(config.logLevel);
  return previous;
}

}  // namespace wheelbeat::config
