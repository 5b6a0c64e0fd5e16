// --role client: `conns` TcpClients on one EventLoop and one shared wheel, each with its own
// heartbeat and reconnect tasks (the library's per-connection model), connecting in batches.
//
// Replies: "ready rss=R cpu_ns=N" before any client exists (the RSS baseline), "connected n=N"
// once all are connected, then per command: "stats" -> "stats ...", "rtt" -> the RTT histogram
// (from each heartbeat's write), "rtt-decision" -> from the wheel's decision to send it
// (rtt_histogram.h). EOF on stdin: close every client and exit 0.
//
// Round trips: net/ measures each heartbeat itself (from the loop's write of the request to its
// answer in the read callback, on the timer's clock; the wait between sendHeartbeat() on the
// wheel thread and that write apart) and exposes only the last one, Channel::lastHeartbeatRtt()
// and lastHeartbeatSendWait(); heartbeat answers never reach the handler, so the bench cannot
// time them on its own. The listener's onHeartbeatSent() runs right after the next heartbeat is
// queued, when the previous one's RTT is final: recording it there samples every answered
// heartbeat once, with no polling (a value equal to the last one recorded is a repeat: skipped).
#include "net_bench.h"
#include "proto.h"
#include "role_wheel.h"
#include "rtt_histogram.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_client.h>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

// Connects per batch: a few hundred SYNs at a time stay far below the accept backlog.
constexpr int kBatch = 128;

class RttListener final : public tasks::TaskListener {
public:
  explicit RttListener(std::size_t maxChannelId) : last_(maxChannelId + 1, 0) {}

  void onHeartbeatSent(tasks::Channel& channel) override {
    // Every channel here is a net::Channel (a TcpClient's). Not a dynamic_cast: its cross-module
    // type_info compares (strcmp) were ~11 % of this process's user-space instructions per
    // heartbeat under callgrind, a cost the floor's client does not pay.
    auto* ch = static_cast<net::Channel*>(&channel);
    const std::int64_t rtt = ch->lastHeartbeatRtt().count();
    const std::uint64_t id = ch->id();
    if (rtt <= 0 || (id < last_.size() && last_[id] == rtt)) return;
    if (id < last_.size()) last_[id] = rtt;  // wheel thread only: no lock
    histogram.record(rtt);
    fromDecision.record(rtt + ch->lastHeartbeatSendWait().count());
    samples.fetch_add(1, std::memory_order_relaxed);
  }

  RttHistogram histogram;     // write -> answer (Channel::lastHeartbeatRtt())
  RttHistogram fromDecision;  // the wheel's decision -> answer (+ lastHeartbeatSendWait())
  std::atomic<std::int64_t> samples{0};

private:
  std::vector<std::int64_t> last_;  // per channel id (ids are small, sequential per process)
};

struct ClientCounters {
  std::mutex mutex;
  std::condition_variable changed;
  std::int64_t connected = 0;    // guarded by mutex
  std::int64_t disconnects = 0;  // Connected -> anything, before shutdown; guarded by mutex
  bool shuttingDown = false;
  std::string lastFailure = "none";  // guarded by mutex
};

net::ClientOptions clientOptions(const BenchConfig& config) {
  net::ClientOptions o;
  o.server =
      net::Endpoint{listenAddress(config.procIndex), static_cast<std::uint16_t>(config.port)};
  o.heartbeat.interval = std::chrono::milliseconds(config.heartbeatMs);  // idle timeout: 3 ×
  return o;
}

net::ChannelHandler failureRecorder(ClientCounters& c) {
  return net::ChannelHandler{.onConnected = {},
                             .onFrame = {},
                             .onClosed = [&c](net::Channel&, const net::CloseReason& why) {
                               std::lock_guard lock(c.mutex);
                               if (!c.shuttingDown) c.lastFailure = fmt::format("{}", why);
                             }};
}

net::TcpClient::StateCallback countingState(ClientCounters& c) {
  return [&c](net::ClientState from, net::ClientState to) {
    std::lock_guard lock(c.mutex);
    if (to == net::ClientState::Connected) ++c.connected;
    if (from == net::ClientState::Connected) {
      --c.connected;
      if (!c.shuttingDown) ++c.disconnects;
    }
    c.changed.notify_all();
  };
}

struct ClientProcess {
  explicit ClientProcess(const BenchConfig& c)
      : config(c),
        timer(core::WheelOptions{.tickDuration = std::chrono::milliseconds(c.tickMs)},
              roleTimerHooks(c)),
        loop(fmt::format("bench-client{}", c.procIndex)),
        metrics(std::make_shared<tasks::TaskMetrics>()),
        // Channel ids count from 1 per process: conns + slack covers every client's channel.
        listener(std::make_shared<RttListener>(static_cast<std::size_t>(c.conns) + 64)) {
    // The wheel's ticks are start + k * tick: this process's phase, as the floor's client takes
    // it for its timerfd (tickPhaseStart()). A start time chosen, not a wait for another thread.
    std::this_thread::sleep_until(tickPhaseStart(c));
    timer.start();
    loopWheel = roleLoopWheel(c, loop, timer);  // after the start: it would start the timer
    clients.reserve(static_cast<std::size_t>(c.conns));
  }

  // Starts the clients batch by batch; throws if they are not all connected in time.
  void connectAll() {
    // Generous: connect() slows down when most ephemeral ports are taken (the kernel scans for
    // a free one), which H2 on one loopback address comes close to.
    const auto deadline = std::chrono::steady_clock::now() + 30s + config.conns * 5ms;
    if (config.schedule != "even") return connectBatches(config.conns, deadline);
    // A heartbeat follows its connection's connect: wave k connects in the k-th tick from now,
    // so each tick of the period gets its share, as the floor sends them. A start time chosen
    // on the wheel's own tick grid (tickPhaseStart()), not a wait for another thread.
    const int period = std::max(1, config.heartbeatMs / config.tickMs);
    const auto tick = std::chrono::milliseconds(config.tickMs);
    const auto first = tickPhaseStart(config);
    for (int k = 0; k < period; ++k) {
      std::this_thread::sleep_until(first + k * tick + tick / 20);
      connectBatches(config.conns / period + (k < config.conns % period ? 1 : 0), deadline);
    }
  }

  // Starts `n` more clients, kBatch at a time, each batch once the one before has connected.
  void connectBatches(int n, std::chrono::steady_clock::time_point deadline) {
    const int goal = static_cast<int>(clients.size()) + n;
    for (int started = static_cast<int>(clients.size()); started < goal;) {
      const int batch = std::min(kBatch, goal - started);
      for (int i = 0; i < batch; ++i) {
        net::ClientOptions options = clientOptions(config);
        options.taskListener = listener;
        options.taskMetrics = metrics;
        clients.push_back(std::make_unique<net::TcpClient>(
            loop, timer, options, failureRecorder(counters), countingState(counters)));
        clients.back()->start();
      }
      started += batch;
      std::unique_lock lock(counters.mutex);
      if (!counters.changed.wait_until(lock, deadline,
                                       [&] { return counters.connected >= started; })) {
        throw std::runtime_error(fmt::format(
            "client process {}: {} of {} connected in time (last failure: {}); short of "
            "ephemeral ports? (ip_local_port_range, TIME_WAIT sockets of earlier runs: ss -s)",
            config.procIndex, counters.connected, started, counters.lastFailure));
      }
    }
  }

  Kv stats() {
    Kv s = selfUsage();
    const auto m = metrics->snapshot();
    std::lock_guard lock(counters.mutex);
    s["connected"] = counters.connected;
    s["disconnects"] = counters.disconnects;
    s["hb_sent"] = static_cast<std::int64_t>(m.heartbeatsSent);
    s["reconnects"] = static_cast<std::int64_t>(m.reconnectsStarted);
    s["idle_deferred"] = static_cast<std::int64_t>(m.idleDeferred);
    s["rtt_samples"] = listener->samples.load();
    s["loop_wakeups"] = static_cast<std::int64_t>(loop.wakeups());
    s["loop_tasks"] = static_cast<std::int64_t>(loop.tasksRun());
    return s;
  }

  void shutdown() {
    {
      std::lock_guard lock(counters.mutex);
      counters.shuttingDown = true;
    }
    clients.clear();  // each destructor closes its client (tasks cancelled, socket closed)
    loopWheel.reset();
  }

  const BenchConfig& config;
  core::HashedWheelTimer timer;
  net::EventLoop loop;
  std::unique_ptr<net::LoopWheel> loopWheel;  // --impl wheelbeat-loopwheel
  std::shared_ptr<tasks::TaskMetrics> metrics;
  std::shared_ptr<RttListener> listener;
  ClientCounters counters;
  std::vector<std::unique_ptr<net::TcpClient>> clients;
};

}  // namespace

int clientMain(const BenchConfig& config) {
  raiseNofile(config.conns + 64);
  ClientProcess p(config);
  reply(formatKv("ready", selfUsage()));
  p.connectAll();
  reply(formatKv("connected", Kv{{"n", config.conns}}));
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command == "stats") {
      reply(formatKv("stats", p.stats()));
    } else if (command == "rtt") {
      reply(formatCounts(p.listener->histogram.snapshot()));
    } else if (command == "rtt-decision") {
      reply(formatCounts(p.listener->fromDecision.snapshot()));
    } else {
      throw std::runtime_error(fmt::format("unknown command '{}'", command));
    }
  }
  p.shutdown();
  return p.loop.stop() == 0 ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
