// R1's driver (r1.h): per case, a server process and a client process, a warm-up, a measured
// window between two snapshots (CPU from each process's getrusage, answers from the client's
// counters, latency from its histogram), then the client drains (every request out ends) and
// the line is printed. The floor's cases run first, so that each wheelbeat line can state its
// ratios to the floor's line with the same loops, conns and depth.
#include "child_process.h"
#include "r1.h"
#include "rtt_histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

struct Snapshot {
  Clock::time_point at;
  Kv server;
  Kv client;
  RttHistogram::Counts rtt;
  double load = 0;
};

// The server is finished first (H1's reason: the side that closes first keeps TIME_WAIT, and on
// the server that holds no ephemeral port).
struct Pair {
  std::unique_ptr<ChildProcess> server;
  std::unique_ptr<ChildProcess> client;

  bool finish() {
    bool ok = !server || server->finish(Clock::now() + 30s) == 0;
    ok = (!client || client->finish(Clock::now() + 30s) == 0) && ok;
    return ok;
  }
  ~Pair() { (void)finish(); }
};

std::vector<std::string> childArgs(const BenchConfig& c, Impl impl, std::string_view role) {
  return {"--scenario", "R1",
          "--role",     std::string(role),
          "--impl",     impl == Impl::Raw ? "raw" : "wheelbeat",
          "--tick-ms",  std::to_string(c.tickMs)};
}

Clock::time_point after(Clock::time_point t, double secs) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
}

void start(Pair& p, const BenchConfig& config, R1Pair pair, int loops, R1Case c) {
  auto serverArgs = childArgs(config, pair == R1Pair::Raw ? Impl::Raw : Impl::Wheelbeat, "server");
  serverArgs.insert(serverArgs.end(), {"--loops", std::to_string(loops)});
  p.server = std::make_unique<ChildProcess>("server", serverArgs);
  const Kv ready = parseKv(p.server->readLine(Clock::now() + 15s), "ready");
  auto clientArgs =
      childArgs(config, pair == R1Pair::Wheelbeat ? Impl::Wheelbeat : Impl::Raw, "client");
  clientArgs.insert(clientArgs.end(),
                    {"--port", std::to_string(kvAt(ready, "port0")), "--conns",
                     std::to_string(c.conns), "--depth", std::to_string(c.depth),
                     "--request-timeout-ms", std::to_string(config.requestTimeoutMs)});
  p.client = std::make_unique<ChildProcess>("client", clientArgs);
  (void)parseKv(p.client->readLine(Clock::now() + 15s), "ready");
  const auto deadline = Clock::now() + 45s + std::chrono::milliseconds(5 * c.conns);
  (void)parseKv(p.client->readLine(deadline), "connected");
}

// Both "stats" go out before either reply is read: the processes are sampled together.
Snapshot snapshot(Pair& p) {
  Snapshot s;
  const auto deadline = Clock::now() + 10s;
  p.server->send("stats");
  p.client->send("stats");
  s.at = Clock::now();
  s.load = loadAverage1m();
  s.server = parseKv(p.server->readLine(deadline), "stats");
  s.client = parseKv(p.client->readLine(deadline), "stats");
  s.rtt = parseCounts(p.client->ask("rtt", deadline));
  return s;
}

void fillWindow(R1Measurement& m, const Snapshot& a, const Snapshot& b) {
  m.windowS = std::chrono::duration<double>(b.at - a.at).count();
  const auto delta = [](const Kv& x, const Kv& y, std::string_view key) {
    return static_cast<double>(kvAt(y, key) - kvAt(x, key));
  };
  const double answered = delta(a.client, b.client, "answered");
  m.requestsPerS = answered / m.windowS;
  if (answered > 0) {
    m.serverCpuUsPerRequest = delta(a.server, b.server, "cpu_ns") / 1e3 / answered;
    m.clientCpuUsPerRequest = delta(a.client, b.client, "cpu_ns") / 1e3 / answered;
  }
  const auto rtt = minus(b.rtt, a.rtt);
  m.rttSamples = total(rtt);
  m.p50Us = quantile(rtt, 0.50) / 1e3;
  m.p99Us = quantile(rtt, 0.99) / 1e3;
  m.p999Us = quantile(rtt, 0.999) / 1e3;
  m.loadStart = a.load;
  m.loadEnd = b.load;
}

// The whole run's counts, once the client has drained.
void fillCounts(R1Measurement& m, Pair& p) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(m.config.requestTimeoutMs) + 20s;
  const Kv drained = parseKv(p.client->ask("drain", deadline), "drained");
  const Kv server = parseKv(p.server->ask("stats", Clock::now() + 10s), "stats");
  m.sent = kvAt(drained, "sent");
  m.answered = kvAt(drained, "answered");
  m.timeouts = kvAt(drained, "timeouts");
  m.closed = kvAt(drained, "closed");
  m.errors = kvAt(drained, "errors") + kvAt(server, "errors");
  m.handled = kvAt(server, "handled");
}

struct CaseRun {
  R1Measurement m;
  bool ok = true;
};

CaseRun runCase(const BenchConfig& config, R1Pair pair, int loops, R1Case c,
                const R1Measurement* raw, const R1Measurement* oneLoop) {
  fmt::print(stderr,
             "wheelbeat_net_bench: R1 {} loops={} conns={} depth={}: warm-up {} s, "
             "window {} s\n",
             r1PairName(pair), loops, c.conns, c.depth, config.warmupS, config.windowS);
  CaseRun r;
  r.m.config = config;
  r.m.pair = pair;
  r.m.loops = loops;
  r.m.c = c;
  r.m.raw = raw;
  r.m.oneLoop = oneLoop;
  Pair p;
  start(p, config, pair, loops, c);
  watchUntil({p.server.get(), p.client.get()}, after(Clock::now(), config.warmupS));
  const Snapshot a = snapshot(p);
  watchUntil({p.server.get(), p.client.get()}, after(a.at, config.windowS));
  const Snapshot b = snapshot(p);
  fillWindow(r.m, a, b);
  fillCounts(r.m, p);
  const std::string line = r1Line(r.m);
  fmt::print("{}\n", line);
  std::fflush(stdout);
  r.ok = p.finish();
  if (!r.ok) fmt::print(stderr, "wheelbeat_net_bench: an R1 child exited with an error\n");
  if (config.selfCheck) {
    const auto problems = r1SelfCheck(line, r.m);
    for (const auto& problem : problems) fmt::print(stderr, "self-check: {}\n", problem);
    r.ok = r.ok && problems.empty();
    fmt::print(stderr, "self-check: {}\n", r.ok ? "OK" : "FAILED");
  }
  return r;
}

const R1Measurement* find(const std::vector<CaseRun>& runs, R1Pair pair, int loops, R1Case c) {
  for (const auto& r : runs) {
    if (r.m.pair == pair && r.m.loops == loops && r.m.c.conns == c.conns &&
        r.m.c.depth == c.depth) {
      return &r.m;
    }
  }
  return nullptr;
}

// Per loop count (1 first: the other lines compare themselves to it), the floor for every case,
// then wheelbeat, then (with --impl both) wheelbeat's server asked by the floor's client. The
// floor runs with the same loop count, so that a line's ratios to it and to one loop can be told
// apart from what the machine's cores allow.
int runAll(const BenchConfig& config) {
  std::vector<R1Pair> pairs;
  if (config.impl != Impl::Wheelbeat) pairs.push_back(R1Pair::Raw);
  if (config.impl != Impl::Raw) pairs.push_back(R1Pair::Wheelbeat);
  if (config.impl == Impl::Both) pairs.push_back(R1Pair::WheelbeatServer);
  std::vector<CaseRun> runs;  // never reallocated: find() hands out pointers into it
  runs.reserve(config.r1Cases.size() * config.loops.size() * pairs.size());
  for (const int loops : config.loops) {
    for (const R1Pair pair : pairs) {
      for (const auto c : config.r1Cases) {
        const auto* raw = pair == R1Pair::Raw ? nullptr : find(runs, R1Pair::Raw, loops, c);
        const auto* one = loops > 1 ? find(runs, pair, 1, c) : nullptr;
        runs.push_back(runCase(config, pair, loops, c, raw, one));
      }
    }
  }
  return std::all_of(runs.begin(), runs.end(), [](const CaseRun& r) { return r.ok; }) ? 0 : 1;
}

// The whole of `text` as an int >= 1, else 0.
int positiveInt(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 1) return 0;
  return v;
}

std::vector<std::string_view> splitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const std::size_t comma = text.find(',', at);
    parts.push_back(text.substr(at, comma - at));
    if (comma == std::string_view::npos) return parts;
    at = comma + 1;
  }
}

}  // namespace

std::vector<R1Case> parseR1Cases(std::string_view text) {
  std::vector<R1Case> cases;
  for (const auto part : splitCommas(text)) {
    const std::size_t x = part.find('x');
    const int conns = positiveInt(part.substr(0, x));
    const int depth = x == std::string_view::npos ? 0 : positiveInt(part.substr(x + 1));
    if (conns == 0 || depth == 0 || depth > 1024) {
      throw std::invalid_argument(fmt::format(
          "--cases: '{}' in '{}' (expected CONNSxDEPTH, both >= 1, depth <= 1024, e.g. 64x16)",
          part, text));
    }
    cases.push_back(R1Case{conns, depth});
  }
  return cases;
}

std::vector<int> parseR1Loops(std::string_view text) {
  std::vector<int> loops;
  for (const auto part : splitCommas(text)) {
    const int n = positiveInt(part);
    if (n == 0 || n > 64) {
      throw std::invalid_argument(
          fmt::format("--loops: '{}' in '{}' (expected integers 1 .. 64, e.g. 1,2)", part, text));
    }
    loops.push_back(n);
  }
  return loops;
}

int r1DriverMain(const BenchConfig& config) {
  installInterruptHandlers();
  try {
    return runAll(config);
  } catch (const Interrupted&) {
    fmt::print(stderr, "wheelbeat_net_bench: interrupted; the children are stopped\n");
    return 130;
  }
}

}  // namespace wheelbeat::bench::netbench
