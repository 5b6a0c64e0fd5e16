// --role server: one EventLoop, one shared wheel, one TcpServer on 127.0.0.1 with the bench's
// heartbeat options (so its close-idle task closes a channel idle beyond 3 × heartbeat). The
// server answers heartbeats itself (net/ does it in the read path); the handler only counts.
//
// Replies: "ready port=P capacity=C rss=R cpu_ns=N" once listening (C: connections this process
// can hold under its RLIMIT_NOFILE), then one "stats ..." line per "stats" command. EOF on stdin:
// stop gracefully and exit 0.
#include "net_bench.h"
#include "proto.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

// Descriptors the server needs beside its sockets (stdio, pipes, epoll, eventfd, the listener,
// /proc reads) with room to spare: accept() must never meet EMFILE inside the capacity.
constexpr std::int64_t kReservedFds = 32;

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

net::ServerOptions serverOptions(const BenchConfig& config) {
  net::ServerOptions o;
  o.listen = net::Endpoint{"127.0.0.1", 0};
  // Thousands of clients connect at once: a production server facing a fleet sets the backlog
  // up to the kernel's somaxconn (4096 here), as Netty users set SO_BACKLOG.
  o.backlog = 4096;
  o.heartbeat.heartbeat = std::chrono::milliseconds(config.heartbeatMs);
  return o;
}

}  // namespace

int serverMain(const BenchConfig& config) {
  const std::int64_t limit = raiseNofile(kReservedFds + 1);
  core::HashedWheelTimer timer(
      core::WheelOptions{.tickDuration = std::chrono::milliseconds(config.tickMs)});
  timer.start();
  net::EventLoop loop("bench-server");
  auto counters = std::make_shared<ServerCounters>();
  auto metrics = std::make_shared<tasks::TaskMetrics>();
  net::TcpServer server(loop, timer, serverOptions(config), countingHandler(counters), nullptr,
                        metrics);
  const std::uint16_t port = server.listen();
  Kv ready = selfUsage();
  ready["port"] = port;
  ready["capacity"] = limit - openFds() - kReservedFds;
  reply(formatKv("ready", ready));

  std::string command;
  while (std::getline(std::cin, command)) {
    if (command != "stats") throw std::runtime_error(fmt::format("unknown command '{}'", command));
    Kv s = selfUsage();
    s["conns"] = static_cast<std::int64_t>(server.connections());
    s["accepted"] = static_cast<std::int64_t>(server.accepted());
    s["open"] = counters->open.load();
    s["idle_closes"] = counters->idleCloses.load();
    s["other_closes"] = counters->otherCloses.load();
    s["close_task_closes"] = static_cast<std::int64_t>(metrics->closes.load());
    s["loop_wakeups"] = static_cast<std::int64_t>(loop.wakeups());
    s["timer_pending"] = static_cast<std::int64_t>(timer.pendingTimeouts());
    reply(formatKv("stats", s));
  }
  server.stop();
  const int rc = loop.stop();
  timer.stop();
  return rc == 0 ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
