// wheelbeat_demo_node: one process of the cluster demo (a registry, a provider or a consumer).
//
// Each node reports its status to the demo driver as one line on stdout every 500 ms:
//   STATUS key=value key=value ...
// with no spaces inside values (lists are comma-separated, link records colon-separated), so
// the driver needs nothing but a split. Library logs go to stderr (the driver files them).
#pragma once

#include "common/metrics.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/shutdown_signal.h>
#include <wheelbeat/registry/registry.h>

#include <chrono>
#include <string>

namespace demo {

inline constexpr std::chrono::milliseconds kStatusPeriod{500};
inline constexpr std::chrono::milliseconds kCallPeriod{200};

struct NodeContext {
  std::string name;
  wheelbeat::config::Config cfg;  // the cluster's JSON, with the driver's overrides
  wheelbeat::core::HashedWheelTimer& timer;
  wheelbeat::net::EventLoop& loop;
  wheelbeat::net::ShutdownSignal& shutdown;
  // --metrics: the wheel and the process's channels are collected already; a role adds what it
  // owns with metrics.scoped() (removed before its objects go).
  samples::SampleMetrics& metrics;
};

// Each runs until SIGTERM / SIGINT, then stops what it started; returns the exit status.
int runRegistry(NodeContext& node);
int runProvider(NodeContext& node);
int runConsumer(NodeContext& node);

// The registry connection every provider and consumer opens (embedded or Redis, as configured).
[[nodiscard]] wheelbeat::registry::RegistrySetup registrySetup(
    const wheelbeat::config::Config& cfg);

// Writes one status line (and flushes: the driver reads the pipe line by line).
void emitStatus(const std::string& fields);

}  // namespace demo
