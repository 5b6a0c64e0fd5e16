// R1's driver (r1.h): per case, a server process and a client process, a warm-up, a measured
// window between two snapshots (CPU from each process's getrusage, answers from the client's
// counters, latency from its histogram), then the client drains (every request out ends) and
// the case's round is kept. Every case runs once per round (--rounds), the floor's first; then
// each case's line is its median round, so that each wheelbeat line can state its ratios to the
// floor's line with the same loops, conns and depth, both medians of rounds run side by side;
// and each hessian2- or raw-sized-bodies line its ratio to the raw-bodies line of the same pair
// and case.
#include "child_process.h"
#include "r1.h"
#include "report.h"
#include "rtt_histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>

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

std::vector<std::string> childArgs(const BenchConfig& c, Impl impl, std::string_view role,
                                   R1Bodies bodies) {
  return {"--scenario", "R1",
          "--role",     std::string(role),
          "--impl",     impl == Impl::Raw ? "raw" : "wheelbeat",
          "--tick-ms",  std::to_string(c.tickMs),
          "--bodies",   r1BodiesName(bodies)};
}

Clock::time_point after(Clock::time_point t, double secs) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
}

void start(Pair& p, const BenchConfig& config, R1Pair pair, R1Bodies bodies, int loops, R1Case c) {
  auto serverArgs =
      childArgs(config, pair == R1Pair::Raw ? Impl::Raw : Impl::Wheelbeat, "server", bodies);
  serverArgs.insert(serverArgs.end(), {"--loops", std::to_string(loops)});
  p.server = std::make_unique<ChildProcess>("server", serverArgs);
  const Kv ready = parseKv(p.server->readLine(Clock::now() + 15s), "ready");
  auto clientArgs =
      childArgs(config, pair == R1Pair::Wheelbeat ? Impl::Wheelbeat : Impl::Raw, "client", bodies);
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

CaseRun runCase(const BenchConfig& config, R1Pair pair, R1Bodies bodies, int loops, R1Case c) {
  fmt::print(stderr,
             "wheelbeat_net_bench: R1 {} bodies={} loops={} conns={} depth={}: warm-up {} s, "
             "window {} s\n",
             r1PairName(pair), r1BodiesName(bodies), loops, c.conns, c.depth, config.warmupS,
             config.windowS);
  CaseRun r;
  r.m.config = config;
  r.m.pair = pair;
  r.m.bodies = bodies;
  r.m.loops = loops;
  r.m.c = c;
  Pair p;
  start(p, config, pair, bodies, loops, c);
  watchUntil({p.server.get(), p.client.get()}, after(Clock::now(), config.warmupS));
  const Snapshot a = snapshot(p);
  watchUntil({p.server.get(), p.client.get()}, after(a.at, config.windowS));
  const Snapshot b = snapshot(p);
  fillWindow(r.m, a, b);
  fillCounts(r.m, p);
  r.ok = p.finish();
  if (!r.ok) fmt::print(stderr, "wheelbeat_net_bench: an R1 child exited with an error\n");
  return r;
}

// One line: the pair's loops and case, every round of it in run order.
struct CaseRounds {
  R1Pair pair = R1Pair::Raw;
  R1Bodies bodies = R1Bodies::Raw;
  int loops = 1;
  R1Case c;
  std::vector<CaseRun> rounds;
  R1Measurement line;  // the median round, with the comparisons and every round's figures
};

CaseRounds* find(std::vector<CaseRounds>& all, R1Pair pair, R1Bodies bodies, int loops, R1Case c) {
  for (auto& r : all) {
    if (r.pair == pair && r.bodies == bodies && r.loops == loops && r.c.conns == c.conns &&
        r.c.depth == c.depth) {
      return &r;
    }
  }
  return nullptr;
}

// The median round by server CPU per request (the lower middle of an even count), with every
// round's server CPU per request and, given the floor's rounds, each one's ratio to the floor
// round of the same round number.
R1Measurement medianLine(const CaseRounds& r, const CaseRounds* raw) {
  R1Measurement m =
      medianBy(r.rounds, [](const CaseRun& run) { return run.m.serverCpuUsPerRequest; }).m;
  m.roundsServerCpuUsPerRequest.reserve(r.rounds.size());
  for (std::size_t k = 0; k < r.rounds.size(); ++k) {
    const double cpu = r.rounds[k].m.serverCpuUsPerRequest;
    m.roundsServerCpuUsPerRequest.push_back(cpu);
    if (raw != nullptr) {
      const double floor = raw->rounds[k].m.serverCpuUsPerRequest;
      m.roundsServerCpuVsRaw.push_back(floor > 0 ? cpu / floor : 0);
    }
  }
  return m;
}

// Prints the line (and with --self-check checks it and every round's own line); false on a
// problem or a child's error.
bool report(const CaseRounds& r, const BenchConfig& config) {
  const std::string text = r1Line(r.line);
  fmt::print("{}\n", text);
  (void)std::fflush(stdout);
  bool ok = std::all_of(r.rounds.begin(), r.rounds.end(), [](const CaseRun& c) { return c.ok; });
  if (!config.selfCheck) return ok;
  std::vector<std::string> problems = r1SelfCheck(text, r.line);
  for (std::size_t k = 0; k < r.rounds.size(); ++k) {
    R1Measurement alone = r.rounds[k].m;  // the round's own line, as a single round prints it
    alone.config.rounds = 1;
    for (auto& p : r1SelfCheck(r1Line(alone), alone)) {
      problems.push_back(fmt::format("round {}: {}", k + 1, p));
    }
  }
  for (const auto& problem : problems) fmt::print(stderr, "self-check: {}\n", problem);
  ok = ok && problems.empty();
  fmt::print(stderr, "self-check: {}\n", ok ? "OK" : "FAILED");
  return ok;
}

// The lines to run, in run order: per loop count (1 first), per body mode (--bodies), the floor
// for every case, then wheelbeat, then (with --impl both) wheelbeat's server asked by the floor's
// client. Hessian2 and raw-sized bodies: no floor (it has no Dubbo decoder, and raw-sized is the
// floor of hessian2), wheelbeat and wheelbeat-server.
std::vector<CaseRounds> plan(const BenchConfig& config) {
  std::vector<CaseRounds> all;
  for (const int loops : config.loops) {
    for (const R1Bodies bodies : config.r1Bodies) {
      std::vector<R1Pair> pairs;
      const bool raw = bodies == R1Bodies::Raw;
      if (raw && config.impl != Impl::Wheelbeat) pairs.push_back(R1Pair::Raw);
      if (config.impl != Impl::Raw) pairs.push_back(R1Pair::Wheelbeat);
      if (config.impl == Impl::Both) pairs.push_back(R1Pair::WheelbeatServer);
      for (const R1Pair pair : pairs) {
        for (const auto c : config.r1Cases)
          all.push_back(CaseRounds{pair, bodies, loops, c, {}, {}});
      }
    }
  }
  return all;
}

// --rounds times, interleaved (plan()'s order). Then one line per pair, body mode, loop count and
// case, in that order: its median round, with its ratios to the floor's line with the same
// loops, conns and depth, to the same pair's 1-loop line, and (hessian2, raw-sized) to the
// raw-bodies line. The floor runs with the same loop count, so that a line's ratios to it and to
// one loop can be told apart from what the machine's cores allow.
int runAll(const BenchConfig& config) {
  std::vector<CaseRounds> all = plan(config);  // never reallocated after: lines point into it
  for (int round = 1; round <= config.rounds; ++round) {
    if (config.rounds > 1) {
      fmt::print(stderr, "wheelbeat_net_bench: R1 round {} of {}\n", round, config.rounds);
    }
    for (auto& r : all) r.rounds.push_back(runCase(config, r.pair, r.bodies, r.loops, r.c));
  }
  auto rawOf = [&](const CaseRounds& r) {
    return r.pair == R1Pair::Raw ? nullptr : find(all, R1Pair::Raw, R1Bodies::Raw, r.loops, r.c);
  };
  for (auto& r : all) r.line = medianLine(r, rawOf(r));
  for (auto& r : all) {  // every line is complete first: pointers to lines, not to rounds
    const CaseRounds* raw = rawOf(r);
    const CaseRounds* one = r.loops > 1 ? find(all, r.pair, r.bodies, 1, r.c) : nullptr;
    const CaseRounds* rawBodies =
        r.bodies == R1Bodies::Raw ? nullptr : find(all, r.pair, R1Bodies::Raw, r.loops, r.c);
    r.line.raw = raw != nullptr ? &raw->line : nullptr;
    r.line.oneLoop = one != nullptr ? &one->line : nullptr;
    r.line.rawBodies = rawBodies != nullptr ? &rawBodies->line : nullptr;
  }
  bool ok = true;
  for (const auto& r : all) ok = report(r, config) && ok;
  return ok ? 0 : 1;
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

std::vector<R1Bodies> parseR1Bodies(std::string_view text) {
  std::vector<R1Bodies> bodies;
  for (const auto part : splitCommas(text)) {
    std::optional<R1Bodies> b;
    for (const R1Bodies known :
         {R1Bodies::Raw, R1Bodies::Hessian2, R1Bodies::RawSized, R1Bodies::Hessian2InPlace}) {
      if (part == r1BodiesName(known)) b = known;
    }
    if (!b || std::find(bodies.begin(), bodies.end(), *b) != bodies.end()) {
      throw std::invalid_argument(
          fmt::format("--bodies: '{}' in '{}' (expected raw, hessian2, hessian2-inplace and/or "
                      "raw-sized, each once, e.g. raw,hessian2)",
                      part, text));
    }
    bodies.push_back(*b);
  }
  return bodies;
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
