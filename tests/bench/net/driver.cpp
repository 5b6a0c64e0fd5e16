// The driver: spawns the server and the client processes, takes stats snapshots over their
// pipes at fixed points (all connected, window start, window end), watches them in between (a
// child that dies or speaks up spoils the window), prints the JSON line and reaps every child.
// --impl both: that whole run for each, raw-epoll first (its children all reaped before
// wheelbeat's start), --rounds times, so the wheelbeat line can state its cost against the floor
// measured in the same minutes; each line is its implementation's median round.
#include "child_process.h"
#include "net_bench.h"
#include "proto.h"
#include "report.h"
#include "rtt_histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

struct Snapshot {
  Clock::time_point at;
  Kv server;
  std::vector<Kv> clients;
  RttHistogram::Counts rtt;          // heartbeat round trips from their writes
  RttHistogram::Counts rttDecision;  // from their ticks (the decision to send)
  double load = 0;
};

struct Children {
  std::unique_ptr<ChildProcess> server;
  std::vector<std::unique_ptr<ChildProcess>> clients;

  std::vector<ChildProcess*> all() const {
    std::vector<ChildProcess*> out{server.get()};
    for (const auto& c : clients) out.push_back(c.get());
    return out;
  }
  // The server first: the side that closes first keeps its end in TIME_WAIT for 60 s, and on
  // the server that end holds no ephemeral port. Closed by the clients, 20 000 TIME_WAIT
  // client ports would starve the next run's connects (28 232 ephemeral ports by default).
  bool finish() {
    bool ok = server->finish(Clock::now() + 30s) == 0;
    for (auto& c : clients) ok = c->finish(Clock::now() + 30s) == 0 && ok;
    return ok;
  }
  // Also on an error or Ctrl-C: the same order.
  ~Children() {
    if (server) (void)finish();
  }
};

std::vector<std::string> commonArgs(const BenchConfig& c) {
  return {"--impl",         c.impl == Impl::Raw ? "raw" : implName(c.impl),
          "--tick-ms",      std::to_string(c.tickMs),
          "--heartbeat-ms", std::to_string(c.heartbeatMs),
          "--schedule",     c.schedule};
}

Clock::time_point after(Clock::time_point t, double secs) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
}

// Every stats request goes out before any reply is read, so the processes are sampled at
// (nearly) the same instant.
Snapshot snapshot(Children& ch, bool withRtt) {
  Snapshot s;
  const auto deadline = Clock::now() + 10s;
  for (auto* c : ch.all()) c->send("stats");
  s.at = Clock::now();
  s.load = loadAverage1m();
  s.server = parseKv(ch.server->readLine(deadline), "stats");
  for (auto& c : ch.clients) s.clients.push_back(parseKv(c->readLine(deadline), "stats"));
  s.rtt.assign(RttHistogram::kBuckets, 0);
  s.rttDecision.assign(RttHistogram::kBuckets, 0);
  if (withRtt) {
    for (auto& c : ch.clients) {
      addTo(s.rtt, parseCounts(c->ask("rtt", deadline)));
      addTo(s.rttDecision, parseCounts(c->ask("rtt-decision", deadline)));
    }
  }
  return s;
}

std::int64_t clientSum(const Snapshot& s, std::string_view key) {
  std::int64_t sum = 0;
  for (const auto& kv : s.clients) sum += kvAt(kv, key);
  return sum;
}

std::int64_t serverDelta(const Snapshot& a, const Snapshot& b, std::string_view key) {
  return kvAt(b.server, key) - kvAt(a.server, key);
}
std::int64_t clientDelta(const Snapshot& a, const Snapshot& b, std::string_view key) {
  return clientSum(b, key) - clientSum(a, key);
}

std::int64_t startServer(Children& ch, const BenchConfig& config, Kv& ready) {
  auto args = commonArgs(config);
  args.insert(args.begin(),
              {"--role", "server", "--client-procs", std::to_string(config.clientProcs)});
  ch.server = std::make_unique<ChildProcess>("server", args);
  ready = parseKv(ch.server->readLine(Clock::now() + 15s), "ready");
  return kvAt(ready, "capacity");
}

// Starts the client processes with conns spread evenly; returns their "ready" baselines.
std::vector<Kv> startClients(Children& ch, const BenchConfig& config, std::int64_t conns,
                             const Kv& serverReady) {
  std::vector<Kv> ready;
  for (int i = 0; i < config.clientProcs; ++i) {
    const std::int64_t n = conns / config.clientProcs + (i < conns % config.clientProcs ? 1 : 0);
    auto args = commonArgs(config);
    args.insert(args.begin(), {"--role", "client", "--port",
                               std::to_string(kvAt(serverReady, fmt::format("port{}", i))),
                               "--conns", std::to_string(n), "--proc-index", std::to_string(i),
                               "--client-procs", std::to_string(config.clientProcs)});
    ch.clients.push_back(std::make_unique<ChildProcess>(fmt::format("client {}", i), args));
  }
  for (auto& c : ch.clients) ready.push_back(parseKv(c->readLine(Clock::now() + 15s), "ready"));
  // Each client process bounds its own connect phase (30 s + 5 ms per connection); this is
  // only the backstop.
  const auto deadline = Clock::now() + 45s + std::chrono::milliseconds(5 * conns);
  for (auto& c : ch.clients) (void)parseKv(c->readLine(deadline), "connected");
  return ready;
}

void fillWindow(Measurement& m, const Snapshot& a, const Snapshot& b) {
  m.windowS = std::chrono::duration<double>(b.at - a.at).count();
  m.heartbeatsPerS = clientDelta(a, b, "hb_sent") / m.windowS;
  m.cpuServerS = serverDelta(a, b, "cpu_ns") / 1e9;
  m.cpuClientsS = clientDelta(a, b, "cpu_ns") / 1e9;
  m.serverWakeupsPerS = serverDelta(a, b, "loop_wakeups") / m.windowS;
  m.clientWakeupsPerS = clientDelta(a, b, "loop_wakeups") / m.windowS;
  const auto rtt = minus(b.rtt, a.rtt);
  m.rttSamples = total(rtt);
  m.rttP50Us = quantile(rtt, 0.50) / 1e3;
  m.rttP99Us = quantile(rtt, 0.99) / 1e3;
  m.rttMaxUs = quantile(rtt, 1.0) / 1e3;
  const auto fromDecision = minus(b.rttDecision, a.rttDecision);
  m.rttDecisionP50Us = quantile(fromDecision, 0.50) / 1e3;
  m.rttDecisionP99Us = quantile(fromDecision, 0.99) / 1e3;
  m.loadStart = a.load;
  m.loadEnd = b.load;
}

void fillRun(Measurement& m, const Snapshot& connected, const Snapshot& end, const Kv& serverReady,
             const std::vector<Kv>& clientReady) {
  m.connsHeld = std::min(kvAt(end.server, "conns"), clientSum(end, "connected"));
  m.serverIdleCloses = serverDelta(connected, end, "idle_closes");
  m.serverOtherCloses = serverDelta(connected, end, "other_closes");
  m.clientReconnects = clientDelta(connected, end, "reconnects");
  if (m.config.impl != Impl::Raw) {
    m.serverIdleDeferred = serverDelta(connected, end, "idle_deferred");
    m.clientIdleDeferred = clientDelta(connected, end, "idle_deferred");
  }
  m.clientDisconnects = clientDelta(connected, end, "disconnects");
  if (m.config.impl == Impl::Raw) m.clientHbSkipped = clientDelta(connected, end, "hb_skipped");
  const double conns = static_cast<double>(std::max<std::int64_t>(m.conns, 1));
  auto perConn = [&](std::string_view key, double& server, double& client) {
    server = (kvAt(end.server, key) - kvAt(serverReady, key)) / conns;
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < clientReady.size(); ++i) {
      sum += kvAt(end.clients[i], key) - kvAt(clientReady[i], key);
    }
    client = sum / conns;
  };
  perConn("rss", m.rssPerConnServer, m.rssPerConnClient);
  perConn("heap", m.heapPerConnServer, m.heapPerConnClient);
}

// Waits until `until` in steps of at most 5 s, printing one progress line per step to stderr
// (connections, closes and reconnects so far, heartbeats/s of the step): the timeline of a run
// that goes wrong. A stats round trip per step costs each process microseconds.
void progressUntil(Children& ch, const Snapshot& base, Clock::time_point until) {
  Snapshot prev = base;
  while (Clock::now() < until) {
    watchUntil(ch.all(), std::min(until, Clock::now() + 5s));
    Snapshot now = snapshot(ch, false);
    const double dt = std::chrono::duration<double>(now.at - prev.at).count();
    fmt::print(stderr,
               "  t={:6.1f}s server conns={} idle_closes={} other_closes={} | clients "
               "connected={} reconnects={} hb/s={:.0f} | load {:.2f}\n",
               std::chrono::duration<double>(now.at - base.at).count(), kvAt(now.server, "conns"),
               serverDelta(base, now, "idle_closes"), serverDelta(base, now, "other_closes"),
               clientSum(now, "connected"), clientDelta(base, now, "reconnects"),
               dt > 0 ? clientDelta(prev, now, "hb_sent") / dt : 0.0, now.load);
    prev = std::move(now);
  }
}

// `knownTimeWait`: TIME_WAIT sockets an earlier run of this driver left, all on its server's
// side (Children::finish()): they hold no ephemeral port, so only the rest deserve a warning.
Measurement measure(Children& ch, const BenchConfig& config, std::int64_t knownTimeWait) {
  Measurement m;
  m.config = config;
  Kv serverReady;
  m.capacity = startServer(ch, config, serverReady);
  m.conns = config.conns > 0 ? config.conns : m.capacity;
  if (m.conns > m.capacity) {
    throw std::runtime_error(fmt::format("--conns {} exceeds what the server process can hold ({})",
                                         m.conns, m.capacity));
  }
  fmt::print(stderr,
             "wheelbeat_net_bench: {}: {} connections over {} client process(es), server ports "
             "{}..\n",
             implName(config.impl), m.conns, config.clientProcs, kvAt(serverReady, "port0"));
  if (const auto tw = timeWaitSockets(); tw - knownTimeWait > 1000) {
    fmt::print(stderr,
               "wheelbeat_net_bench: warning: {} sockets in TIME_WAIT (an earlier run?): "
               "connects may slow down or fail for want of ephemeral ports\n",
               tw);
  }
  const auto t0 = Clock::now();
  const auto clientReady = startClients(ch, config, m.conns, serverReady);
  m.connectS = std::chrono::duration<double>(Clock::now() - t0).count();
  const Snapshot connected = snapshot(ch, false);
  fmt::print(stderr, "wheelbeat_net_bench: all connected in {:.2f} s; warm-up {} s, window {} s\n",
             m.connectS, config.warmupS, config.windowS);
  progressUntil(ch, connected, after(connected.at, config.warmupS));
  const Snapshot start = snapshot(ch, true);
  progressUntil(ch, connected, after(start.at, config.windowS));
  const Snapshot end = snapshot(ch, true);
  fillWindow(m, start, end);
  fillRun(m, connected, end, serverReady, clientReady);
  return m;
}

struct Run {
  int rc = 0;
  Measurement m;
};

// One implementation's whole run: its children, measured, then reaped (also when it throws:
// Children's destructor). Their shutdown is not part of the measurement.
Run runOnce(const BenchConfig& config, std::int64_t knownTimeWait) {
  Children ch;
  Run r;
  r.m = measure(ch, config, knownTimeWait);
  if (!ch.finish()) {
    fmt::print(stderr, "wheelbeat_net_bench: a child exited with an error\n");
    r.rc = 1;
  }
  return r;
}

BenchConfig withImpl(BenchConfig config, Impl impl) {
  config.impl = impl;
  return config;
}

// Prints one implementation's line (its median run, with every round's figure) and, with
// --self-check, checks every round's line. Returns the exit status.
int report(const std::vector<Run>& runs, const Measurement& line) {
  const std::string text = resultLine(line);
  fmt::print("{}\n", text);
  (void)std::fflush(stdout);
  int rc = 0;
  for (const auto& r : runs) rc = r.rc != 0 ? r.rc : rc;
  if (!line.config.selfCheck) return rc;
  std::vector<std::string> problems = selfCheck(text, line);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Measurement alone = runs[i].m;  // the round's own line, as a single run prints it
    alone.config.rounds = 1;
    for (auto& p : selfCheck(resultLine(alone), alone)) {
      problems.push_back(fmt::format("round {}: {}", i + 1, p));
    }
  }
  for (const auto& p : problems) fmt::print(stderr, "self-check: {}\n", p);
  fmt::print(stderr, "self-check: {}\n", problems.empty() && rc == 0 ? "OK" : "FAILED");
  return problems.empty() && rc == 0 ? 0 : 1;
}

// --rounds runs of each implementation, interleaved (raw-epoll, then wheelbeat, per round), so
// that a drift of the machine over minutes reaches both alike; then one line per implementation.
int runRounds(const BenchConfig& config) {
  const std::vector<Impl> impls =
      config.impl == Impl::Both ? std::vector<Impl>{Impl::Raw, Impl::Wheelbeat, Impl::LoopWheel}
                                : std::vector<Impl>{config.impl};
  std::vector<std::vector<Run>> runs(impls.size());
  std::int64_t timeWait = 0;  // left by this driver's runs: server-side, no ephemeral port held
  for (int round = 1; round <= config.rounds; ++round) {
    for (std::size_t i = 0; i < impls.size(); ++i) {
      runs[i].push_back(runOnce(withImpl(config, impls[i]), timeWait));
      timeWait = std::max<std::int64_t>(timeWaitSockets(), 0);
      fmt::print(stderr, "wheelbeat_net_bench: round {} of {}: {} {:.3f} us CPU per heartbeat\n",
                 round, config.rounds, implName(impls[i]), cpuUsPerHeartbeat(runs[i].back().m));
    }
  }
  int rc = 0;
  std::optional<double> rawCpu;
  for (std::size_t i = 0; i < impls.size(); ++i) {
    // The median run by CPU per heartbeat.
    Measurement line = medianBy(runs[i], [](const Run& r) { return cpuUsPerHeartbeat(r.m); }).m;
    line.roundsCpuUsPerHeartbeat.reserve(runs[i].size());
    for (std::size_t k = 0; k < runs[i].size(); ++k) {
      const double cpu = cpuUsPerHeartbeat(runs[i][k].m);
      line.roundsCpuUsPerHeartbeat.push_back(cpu);
      if (impls[i] != Impl::Raw && impls[0] == Impl::Raw) {
        const double raw = cpuUsPerHeartbeat(runs[0][k].m);
        line.roundsVsRaw.push_back(raw > 0 ? cpu / raw : 0);
      }
    }
    if (impls[i] != Impl::Raw) line.rawCpuUsPerHeartbeat = rawCpu;
    if (impls[i] == Impl::Raw) rawCpu = cpuUsPerHeartbeat(line);
    const int lineRc = report(runs[i], line);
    rc = rc != 0 ? rc : lineRc;
  }
  return rc;
}

}  // namespace

int driverMain(const BenchConfig& config) {
  installInterruptHandlers();
  try {
    return runRounds(config);
  } catch (const Interrupted&) {
    fmt::print(stderr, "wheelbeat_net_bench: interrupted; the children are stopped\n");
    return 130;
  }
}

}  // namespace wheelbeat::bench::netbench
