// D1's children (protocol in d1.h): a server process with one TcpServer per detector group, and
// a client process with `conns` TcpClients per group. Each records the decisions of its tasks
// (the reconnect task's onReconnect on the client, the close-idle task's onClose on the server)
// with a CLOCK_MONOTONIC timestamp taken in the listener, right after the channel action.
#include "d1.h"
#include "proto.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/tasks/failure_detector.h>

#include <fmt/format.h>

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

std::int64_t monoNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Event {
  int group = 0;
  std::uint64_t channel = 0;
  std::int64_t atNs = 0;
  int rule = 0;
};

// Every decision of one process, in order; waits on it re-check their condition on each new
// event and every 20 ms (a detector's history grows without an event).
class Recorder {
public:
  void add(const Event& e) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back(e);
    }
    changed_.notify_all();
  }

  std::vector<Event> since(std::int64_t ns) {
    std::lock_guard lock(mutex_);
    std::vector<Event> out;
    for (const auto& e : events_) {
      if (e.atNs >= ns) out.push_back(e);
    }
    return out;
  }

  // Waits until pred(events) holds or `timeout` passes; returns whether it held.
  template <typename Pred>
  bool waitFor(std::chrono::milliseconds timeout, Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mutex_);
    while (!pred(events_)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      changed_.wait_for(lock, 20ms);
    }
    return true;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Event> events_;
};

class GroupListener final : public tasks::TaskListener {
public:
  GroupListener(Recorder& recorder, int group) : recorder_(recorder), group_(group) {}

  void onReconnect(tasks::Channel& channel, std::string_view reason, std::int64_t /*attempt*/,
                   std::chrono::nanoseconds /*backoff*/) override {
    record(channel, reason);
  }
  void onClose(tasks::Channel& channel, std::string_view reason) override {
    record(channel, reason);
  }

private:
  void record(tasks::Channel& channel, std::string_view reason) {
    const std::int64_t now = monoNs();
    auto* ch = dynamic_cast<net::Channel*>(&channel);
    recorder_.add(Event{group_, ch != nullptr ? ch->id() : 0, now, ruleOf(reason)});
  }

  Recorder& recorder_;
  const int group_;
};

void replyEvents(const std::vector<Event>& events) {
  std::string out = formatKv("events", Kv{{"n", static_cast<std::int64_t>(events.size())}});
  for (const auto& e : events) {
    out += "\n" + formatKv("ev", Kv{{"group", e.group},
                                    {"ch", static_cast<std::int64_t>(e.channel)},
                                    {"t", e.atNs},
                                    {"rule", e.rule}});
  }
  reply(out);
}

std::vector<int> parsePorts(std::string_view text) {
  std::vector<int> ports;
  while (!text.empty()) {
    const auto comma = std::min(text.find(','), text.size());
    ports.push_back(std::stoi(std::string(text.substr(0, comma))));
    text.remove_prefix(std::min(comma + 1, text.size()));
  }
  return ports;
}

// The command's tag and its key=value pairs ("await-ready samples=3 timeout_ms=5000").
std::pair<std::string, Kv> parseCommand(const std::string& line) {
  const std::string tag = line.substr(0, line.find(' '));
  return {tag, parseKv(line, tag)};
}

// --- server ---

struct D1Server {
  explicit D1Server(const BenchConfig& c)
      : groups(decodeGroups(c.groups)),
        timer(core::WheelOptions{.tickDuration = std::chrono::milliseconds(c.tickMs)}),
        loop("d1-server") {
    timer.start();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      net::ServerOptions o;
      o.listen = net::Endpoint{"127.0.0.1", 0};
      o.heartbeat = d1Heartbeat(c, groups[g]);
      listeners.push_back(std::make_shared<GroupListener>(recorder, static_cast<int>(g)));
      o.taskListener = listeners.back();
      servers.push_back(std::make_unique<net::TcpServer>(loop, timer, o, net::ChannelHandler{}));
    }
  }

  // The fewest close-idles of any group at or after `since`.
  std::int64_t leastCloses(const std::vector<Event>& events, std::int64_t since) const {
    std::vector<std::int64_t> per(groups.size(), 0);
    for (const auto& e : events) {
      if (e.atNs >= since) ++per.at(static_cast<std::size_t>(e.group));
    }
    std::int64_t least = INT64_MAX;
    for (const auto n : per) least = std::min(least, n);
    return least;
  }

  const std::vector<DetectorGroup> groups;
  Recorder recorder;
  core::HashedWheelTimer timer;
  net::EventLoop loop;
  std::vector<std::shared_ptr<GroupListener>> listeners;
  std::vector<std::unique_ptr<net::TcpServer>> servers;
};

// --- client ---

struct D1Client {
  explicit D1Client(const BenchConfig& c)
      : config(c),
        groups(decodeGroups(c.groups)),
        ports(parsePorts(c.ports)),
        timer(core::WheelOptions{.tickDuration = std::chrono::milliseconds(c.tickMs)}),
        loop("d1-client") {
    if (ports.size() != groups.size()) throw std::invalid_argument("--ports: one per group");
    timer.start();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      listeners.push_back(std::make_shared<GroupListener>(recorder, static_cast<int>(g)));
    }
  }

  net::ClientOptions options(std::size_t g) const {
    net::ClientOptions o;
    o.server = net::Endpoint{"127.0.0.1", static_cast<std::uint16_t>(ports[g])};
    o.heartbeat = d1Heartbeat(config, groups[g]);
    // How fast a torn-down client gets back between trials; detection does not depend on it.
    o.connectTimeout = 1s;
    o.heartbeat.reconnect.initialDelay = 250ms;
    o.heartbeat.reconnect.maxDelay = 2s;
    o.taskListener = listeners[g];
    return o;
  }

  // Client i of every group starts at i × heartbeat / conns: the heartbeat and check phases (set
  // by start()) spread over one cycle, in step across the groups. A pacing, not a wait for a
  // condition.
  void startAll() {
    const auto step = std::chrono::milliseconds(config.heartbeatMs) / std::max(config.conns, 1);
    for (int i = 0; i < config.conns; ++i) {
      for (std::size_t g = 0; g < groups.size(); ++g) {
        clients.push_back(
            std::make_unique<net::TcpClient>(loop, timer, options(g), net::ChannelHandler{}));
        clients.back()->start();
      }
      std::this_thread::sleep_for(step);
    }
  }

  // Clients not connected, or (phi) whose detector holds fewer than `samples` intervals.
  int notReady(std::int64_t samples) const {
    int n = 0;
    for (const auto& c : clients) {
      if (c->state() != net::ClientState::Connected) {
        ++n;
        continue;
      }
      const auto* d = c->channel().phiDetector();
      if (d != nullptr && static_cast<std::int64_t>(d->stats().samples) < samples) ++n;
    }
    return n;
  }

  int connected() const {
    int n = 0;
    for (const auto& c : clients) n += c->state() == net::ClientState::Connected ? 1 : 0;
    return n;
  }

  // Clients without a decision (rule idle or phi) at or after `since`.
  int undecided(const std::vector<Event>& events, std::int64_t since) const {
    std::vector<std::uint64_t> decided;
    for (const auto& e : events) {
      if (e.atNs >= since && e.rule != kRuleDisconnected) decided.push_back(e.channel);
    }
    int n = 0;
    for (const auto& c : clients) {
      n += std::find(decided.begin(), decided.end(), c->channel().id()) == decided.end() ? 1 : 0;
    }
    return n;
  }

  const BenchConfig& config;
  const std::vector<DetectorGroup> groups;
  const std::vector<int> ports;
  Recorder recorder;
  core::HashedWheelTimer timer;
  net::EventLoop loop;
  std::vector<std::shared_ptr<GroupListener>> listeners;
  std::vector<std::unique_ptr<net::TcpClient>> clients;
};

}  // namespace

std::vector<DetectorGroup> d1Groups(const BenchConfig& config) {
  std::vector<DetectorGroup> groups{DetectorGroup{.kind = tasks::DetectorKind::Fixed},
                                    DetectorGroup{.kind = tasks::DetectorKind::Phi}};
  for (const auto& extra : config.phiExtras) groups.push_back(parsePhiExtra(extra));
  return groups;
}

std::string encodeGroups(const std::vector<DetectorGroup>& groups) {
  std::string out;
  for (const auto& g : groups) {
    if (!out.empty()) out += ';';
    out += g.kind == tasks::DetectorKind::Fixed
               ? std::string("fixed")
               : fmt::format("phi:{}:{}:{}:{}", g.threshold, g.acceptablePauseMs, g.idleTimeoutMs,
                             g.extra ? 1 : 0);
  }
  return out;
}

std::vector<DetectorGroup> decodeGroups(std::string_view text) {
  std::vector<DetectorGroup> groups;
  while (!text.empty()) {
    const auto end = std::min(text.find(';'), text.size());
    const std::string_view item = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (item == "fixed") {
      groups.push_back(DetectorGroup{.kind = tasks::DetectorKind::Fixed});
      continue;
    }
    if (!item.starts_with("phi:")) throw std::invalid_argument(fmt::format("--groups: '{}'", item));
    const std::string_view rest = item.substr(4);
    const auto last = rest.rfind(':');
    if (last == std::string_view::npos)
      throw std::invalid_argument(fmt::format("--groups: '{}'", item));
    DetectorGroup g = parsePhiExtra(rest.substr(0, last));
    g.extra = rest.substr(last + 1) == "1";
    groups.push_back(g);
  }
  if (groups.empty()) throw std::invalid_argument("--groups: empty");
  return groups;
}

DetectorGroup parsePhiExtra(std::string_view text) {
  const auto bad = [&] {
    return std::invalid_argument(
        fmt::format("--phi-extra: '{}' (expected THRESHOLD:ACCEPTABLE_PAUSE_MS[:IDLE_TIMEOUT_MS], "
                    "e.g. 8:500 or 8:500:4000)",
                    text));
  };
  std::vector<std::string> parts;
  for (std::string_view rest = text;;) {
    const auto colon = rest.find(':');
    parts.emplace_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (parts.size() < 2 || parts.size() > 3) throw bad();
  DetectorGroup g{.kind = tasks::DetectorKind::Phi, .extra = true};
  try {
    std::size_t used = 0;
    g.threshold = std::stod(parts[0], &used);
    if (used != parts[0].size() || !(g.threshold > 0)) throw bad();
    g.acceptablePauseMs = std::stoi(parts[1], &used);
    if (used != parts[1].size() || g.acceptablePauseMs < 0) throw bad();
    if (parts.size() == 3) {
      g.idleTimeoutMs = std::stoi(parts[2], &used);
      if (used != parts[2].size() || g.idleTimeoutMs < 0) throw bad();
    }
  } catch (const std::logic_error&) {
    throw bad();
  }
  return g;
}

tasks::HeartbeatOptions d1Heartbeat(const BenchConfig& config, const DetectorGroup& group) {
  tasks::HeartbeatOptions o;
  o.interval = std::chrono::milliseconds(config.heartbeatMs);  // idle and close: 3 ×
  o.detector = group.kind;
  o.phi.threshold = group.threshold;
  o.phi.acceptablePause = std::chrono::milliseconds(group.acceptablePauseMs);
  o.idleTimeout = std::chrono::milliseconds(group.idleTimeoutMs);  // 0: 3 × heartbeat
  return o;
}

int ruleOf(std::string_view reason) {
  if (reason.starts_with("phi")) return kRulePhi;
  if (reason.starts_with("read idle") || reason.starts_with("write idle")) return kRuleIdle;
  return kRuleDisconnected;
}

int d1ServerMain(const BenchConfig& config) {
  D1Server s(config);
  Kv ready;
  for (std::size_t g = 0; g < s.servers.size(); ++g) {
    ready[fmt::format("port{}", g)] = s.servers[g]->listen();
  }
  reply(formatKv("ready", ready));
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto [tag, args] = parseCommand(line);
    if (tag == "events") {
      replyEvents(s.recorder.since(kvAt(args, "since")));
    } else if (tag == "await-closes") {
      const std::int64_t since = kvAt(args, "since");
      const std::int64_t want = kvAt(args, "n");
      std::int64_t least = 0;
      const bool ok = s.recorder.waitFor(
          std::chrono::milliseconds(kvAt(args, "timeout_ms")),
          [&](const std::vector<Event>& ev) { return (least = s.leastCloses(ev, since)) >= want; });
      reply(formatKv("closes", Kv{{"ok", ok ? 1 : 0}, {"n", least}}));
    } else {
      throw std::runtime_error(fmt::format("unknown command '{}'", line));
    }
  }
  for (auto& server : s.servers) server->stop();
  const int rc = s.loop.stop();
  s.timer.stop();
  return rc == 0 ? 0 : 1;
}

int d1ClientMain(const BenchConfig& config) {
  D1Client c(config);
  c.startAll();
  reply(formatKv("started", Kv{{"n", static_cast<std::int64_t>(c.clients.size())}}));
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto [tag, args] = parseCommand(line);
    if (tag == "events") {
      replyEvents(c.recorder.since(kvAt(args, "since")));
    } else if (tag == "await-ready") {
      const std::int64_t samples = kvAt(args, "samples");
      int left = 0;
      const bool ok = c.recorder.waitFor(
          std::chrono::milliseconds(kvAt(args, "timeout_ms")),
          [&](const std::vector<Event>&) { return (left = c.notReady(samples)) == 0; });
      reply(formatKv("ready-state",
                     Kv{{"ok", ok ? 1 : 0}, {"connected", c.connected()}, {"not_ready", left}}));
    } else if (tag == "await-decided") {
      const std::int64_t since = kvAt(args, "since");
      int missing = 0;
      const bool ok = c.recorder.waitFor(
          std::chrono::milliseconds(kvAt(args, "timeout_ms")),
          [&](const std::vector<Event>& ev) { return (missing = c.undecided(ev, since)) == 0; });
      reply(formatKv("decided", Kv{{"ok", ok ? 1 : 0}, {"missing", missing}}));
    } else {
      throw std::runtime_error(fmt::format("unknown command '{}'", line));
    }
  }
  c.clients.clear();
  return c.loop.stop() == 0 ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
