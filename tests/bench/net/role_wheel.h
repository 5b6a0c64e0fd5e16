// The wheel of a wheelbeat role process: the timer's own thread (--impl wheelbeat), or advanced
// by the process's event loop (--impl wheelbeat-loopwheel: net::LoopWheel, no wheel thread).
#pragma once

#include "net_bench.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/loop_wheel.h>

#include <chrono>
#include <memory>

namespace wheelbeat::bench::netbench {

inline core::TimerHooks roleTimerHooks(const BenchConfig& c) {
  core::TimerHooks hooks;
  if (c.impl == Impl::LoopWheel) hooks.drive = core::Drive::Manual;
  return hooks;
}

// Null unless the loop drives the wheel. Destroy it after the clients or servers, before the
// loop stops.
inline std::unique_ptr<net::LoopWheel> roleLoopWheel(const BenchConfig& c, net::EventLoop& loop,
                                                     core::HashedWheelTimer& timer) {
  return c.impl == Impl::LoopWheel ? std::make_unique<net::LoopWheel>(loop, timer) : nullptr;
}

}  // namespace wheelbeat::bench::netbench
