// SampleMetrics: a sample's `--metrics HOST:PORT` (or its --config's "metrics" section) — one
// core::MetricsRegistry with the collectors of what the sample owns (its wheel, tasks, channels,
// registry), served in the Prometheus text format by a net::MetricsEndpoint on the sample's loop.
//
//   samples::SampleMetrics metrics;                  // declared after what it reads
//   metrics.add([&](auto& out) { timer.writeMetrics(out); });
//   cfg.metrics = samples::SampleMetrics::withFlag(cfg.metrics, args.metrics);
//   metrics.serve(loop, cfg.metrics, "echo_server");   // no-op without either
//   ...
//   metrics.close();                                 // before what the collectors read goes
//
// Threads: add() and serve() on main's thread before the loop serves scrapes; the collectors
// run on the loop thread, one scrape at a time.
#pragma once

#include "say.h"

#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/metrics_endpoint.h>

#include <command_line.h>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace samples {

// A CLI11 check for a HOST:PORT flag (--metrics): a host, a colon and a port 0..65535, checked
// while the command line is parsed, so a bad value stops the program before it binds anything.
inline wheelbeat::cli::Validator hostPortCheck() {
  return wheelbeat::cli::Validator(
      [](std::string& value) -> std::string {
        const auto colon = value.rfind(':');
        const std::string port = colon == std::string::npos ? "" : value.substr(colon + 1);
        const bool digits = !port.empty() && port.size() <= 5 &&
                            port.find_first_not_of("0123456789") == std::string::npos;
        if (colon != 0 && colon != std::string::npos && digits && std::stoul(port) <= 65535) {
          return {};
        }
        return "\"" + value + "\" (expected: HOST:PORT, e.g. 127.0.0.1:9464)";
      },
      "");
}

class SampleMetrics {
public:
  SampleMetrics() = default;
  SampleMetrics(const SampleMetrics&) = delete;
  SampleMetrics& operator=(const SampleMetrics&) = delete;
  ~SampleMetrics() { close(); }

  void add(wheelbeat::core::MetricsRegistry::Collector collector) {
    registrations_.push_back(registry_.add(std::move(collector)));
  }

  // Starts the endpoint with `options` when there are any (a --config's "metrics" section, see
  // withFlag()), and prints where it serves. Throws what MetricsEndpoint::start throws (a bad
  // address names it).
  void serve(wheelbeat::net::EventLoop& loop,
             const std::optional<wheelbeat::net::MetricsEndpointOptions>& options,
             std::string_view who) {
    if (!options) return;
    endpoint_ = wheelbeat::net::MetricsEndpoint::start(
        loop, *options, [this] { return registry_.prometheusText(); });
    const std::string host = options->listen.substr(0, options->listen.rfind(':'));
    samples::info("{}: metrics on http://{}:{}/metrics", who, host, endpoint_->port());
  }

  // The endpoint a sample serves: `--metrics HOST:PORT` wins over the config's listen (the
  // config's other keys stay); without the flag, the config's "metrics" section or none.
  [[nodiscard]] static std::optional<wheelbeat::net::MetricsEndpointOptions> withFlag(
      std::optional<wheelbeat::net::MetricsEndpointOptions> fromConfig,
      const std::optional<std::string>& flag) {
    if (!flag) return fromConfig;
    wheelbeat::net::MetricsEndpointOptions options =
        fromConfig.value_or(wheelbeat::net::MetricsEndpointOptions{});
    options.listen = *flag;
    return options;
  }

  // A collector removed when the returned registration goes (for objects that die before this).
  [[nodiscard]] wheelbeat::core::MetricsRegistry::Registration scoped(
      wheelbeat::core::MetricsRegistry::Collector collector) {
    return registry_.add(std::move(collector));
  }

  [[nodiscard]] const wheelbeat::core::MetricsRegistry& registry() const { return registry_; }

  // Stops serving, then removes the collectors. Idempotent.
  void close() {
    if (endpoint_) endpoint_->close();
    endpoint_.reset();
    registrations_.clear();
  }

private:
  wheelbeat::core::MetricsRegistry registry_;
  std::vector<wheelbeat::core::MetricsRegistry::Registration> registrations_;
  std::unique_ptr<wheelbeat::net::MetricsEndpoint> endpoint_;
};

}  // namespace samples
