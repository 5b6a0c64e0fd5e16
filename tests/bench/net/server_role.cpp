// --role server: one EventLoop, one shared wheel, one TcpServer on 127.0.0.1 with the bench's
// heartbeat options (so its close-idle task closes a channel idle beyond 3 × heartbeat). The
// server answers heartbeats itself (net/ does it in the read path); the handler only counts.
//
// Replies: "ready port0=P ... capacity=C rss=R cpu_ns=N" once listening (C: connections this
// process can hold under its RLIMIT_NOFILE), then one "stats ..." line per "stats" command. EOF on
// stdin: stop gracefully and exit 0.
#include "net_bench.h"
#include "proto.h"
#include "role_wheel.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

struct ServerCounters {
  std::atomic<std::int64_t> open{0};
  std::atomic<std::int64_t> idleCloses{0};
  std::atomic<std::int64_t> otherCloses{0};
};

net::ChannelHandler countingHandler(const std::shared_ptr<ServerCounters>& c) {
  return net::ChannelHandler{
      .onConnected = [c](net::Channel&) { c->open.fetch_add(1, std::memory_order_relaxed); },
      .onFrame = {},
      .onClosed =
          [c](net::Channel&, const net::CloseReason& why) {
            c->open.fetch_sub(1, std::memory_order_relaxed);
            auto& counter = why.kind == net::CloseKind::Idle ? c->idleCloses : c->otherCloses;
            counter.fetch_add(1, std::memory_order_relaxed);
          },
  };
}

net::ServerOptions serverOptions(const BenchConfig& config, int index) {
  net::ServerOptions o;
  o.listen = net::Endpoint{listenAddress(index), 0};
  // Thousands of clients connect at once: a production server facing a fleet sets the backlog
  // up to the kernel's somaxconn (4096 here), as Netty users set SO_BACKLOG.
  o.backlog = 4096;
  o.heartbeat.interval = std::chrono::milliseconds(config.heartbeatMs);
  return o;
}

struct ServerProcess {
  explicit ServerProcess(const BenchConfig& c)
      : timer(core::WheelOptions{.tickDuration = std::chrono::milliseconds(c.tickMs)},
              roleTimerHooks(c)),
        loop("bench-server"),
        loopWheel(roleLoopWheel(c, loop, timer)) {
    timer.start();
    // One listener per client process, each on its own loopback address (see listenAddress()),
    // all on the one loop and wheel: still one server process in the library's model.
    for (int i = 0; i < c.clientProcs; ++i) {
      net::ServerOptions options = serverOptions(c, i);
      options.taskMetrics = metrics;
      servers.push_back(
          std::make_unique<net::TcpServer>(loop, timer, options, countingHandler(counters)));
    }
  }

  Kv stats() {
    Kv s = selfUsage();
    std::int64_t conns = 0;
    std::int64_t accepted = 0;
    for (const auto& server : servers) {
      conns += static_cast<std::int64_t>(server->connections());
      accepted += static_cast<std::int64_t>(server->accepted());
    }
    s["conns"] = conns;
    s["accepted"] = accepted;
    s["open"] = counters->open.load();
    s["idle_closes"] = counters->idleCloses.load();
    s["other_closes"] = counters->otherCloses.load();
    s["close_task_closes"] = static_cast<std::int64_t>(metrics->closes.load());
    s["idle_deferred"] = static_cast<std::int64_t>(metrics->idleDeferred.load());
    s["loop_wakeups"] = static_cast<std::int64_t>(loop.wakeups());
    s["timer_pending"] = static_cast<std::int64_t>(timer.pendingTimeouts());
    return s;
  }

  core::HashedWheelTimer timer;
  net::EventLoop loop;
  std::unique_ptr<net::LoopWheel> loopWheel;  // --impl wheelbeat-loopwheel
  std::shared_ptr<ServerCounters> counters = std::make_shared<ServerCounters>();
  std::shared_ptr<tasks::TaskMetrics> metrics = std::make_shared<tasks::TaskMetrics>();
  std::vector<std::unique_ptr<net::TcpServer>> servers;
};

}  // namespace

std::string listenAddress(int index) { return fmt::format("127.0.0.{}", 1 + index % 250); }

int serverMain(const BenchConfig& config) {
  const std::int64_t limit = raiseNofile(kServerReservedFds + 1);
  ServerProcess p(config);
  Kv ready = selfUsage();
  for (std::size_t i = 0; i < p.servers.size(); ++i) {
    ready[fmt::format("port{}", i)] = p.servers[i]->listen();
  }
  ready["capacity"] = serverCapacity(limit);
  reply(formatKv("ready", ready));
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command != "stats") throw std::runtime_error(fmt::format("unknown command '{}'", command));
    reply(formatKv("stats", p.stats()));
  }
  for (auto& server : p.servers) server->stop();
  p.loopWheel.reset();
  const int rc = p.loop.stop();
  p.timer.stop();
  return rc == 0 ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
