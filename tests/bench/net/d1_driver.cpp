// D1's driver (scenario in d1.h): one fresh server + client pair per case (dead, pause, loss),
// the faults, the timestamps, and the JSON lines (d1_report.cpp). Every child is reaped and the
// nft table deleted on every way out: the destructors of Session and NftFault run on return, on
// an exception and on SIGINT/SIGTERM/SIGHUP (the waits throw Interrupted); a stopped server is
// resumed first.
#include "child_process.h"
#include "d1.h"
#include "d1_report.h"
#include "nft_fault.h"
#include "proto.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

std::int64_t toNs(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

double msBetween(std::int64_t fromNs, std::int64_t toNsValue) {
  return static_cast<double>(toNsValue - fromNs) / 1e6;
}

struct Ev {
  int group = 0;
  std::int64_t channel = 0;
  std::int64_t atNs = 0;
  int rule = 0;
};

// A server and a client process for one case. The destructor resumes a stopped server, then
// ends both (EOF on stdin, 3 s, SIGKILL).
class Session {
public:
  Session(const BenchConfig& config, const std::vector<DetectorGroup>& groups) : config_(config) {
    const std::vector<std::string> common{"--scenario",     "D1",
                                          "--tick-ms",      std::to_string(config.tickMs),
                                          "--heartbeat-ms", std::to_string(config.heartbeatMs),
                                          "--groups",       encodeGroups(groups)};
    auto args = common;
    args.insert(args.begin(), {"--role", "server"});
    server_ = std::make_unique<ChildProcess>("server", args);
    const Kv ready = parseKv(server_->readLine(Clock::now() + 15s), "ready");
    std::string ports;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      ports_.push_back(static_cast<int>(kvAt(ready, fmt::format("port{}", g))));
      ports += fmt::format("{}{}", g == 0 ? "" : ",", ports_.back());
    }
    args = common;
    args.insert(args.begin(),
                {"--role", "client", "--conns", std::to_string(config.conns), "--ports", ports});
    client_ = std::make_unique<ChildProcess>("client", args);
    (void)parseKv(
        client_->readLine(Clock::now() + 15s + std::chrono::milliseconds(config.heartbeatMs)),
        "started");
    awaitReady();
  }

  ~Session() {
    resume();
    const auto deadline = Clock::now() + 3s;
    if (server_) server_->finish(deadline);
    if (client_) client_->finish(deadline);
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Every client connected and every phi channel's detector holding >= 3 intervals (its
  // estimate settled; until the second one it uses Akka's first guess, σ = heartbeat / 4).
  void awaitReady() {
    const int timeoutMs = 30000;
    const Kv r = parseKv(client_->ask(fmt::format("await-ready samples=3 timeout_ms={}", timeoutMs),
                                      Clock::now() + std::chrono::milliseconds(timeoutMs) + 5s),
                         "ready-state");
    if (kvAt(r, "ok") != 1) {
      throw std::runtime_error(fmt::format("clients not ready in {} ms: {} connected, {} not ready",
                                           timeoutMs, kvAt(r, "connected"), kvAt(r, "not_ready")));
    }
  }

  // Waits (a fault's or an observation's duration) while watching both children.
  void hold(Clock::duration d) { watchUntil({server_.get(), client_.get()}, Clock::now() + d); }

  bool awaitDecided(std::int64_t sinceNs, int timeoutMs) {
    const Kv r = parseKv(
        client_->ask(fmt::format("await-decided since={} timeout_ms={}", sinceNs, timeoutMs),
                     Clock::now() + std::chrono::milliseconds(timeoutMs) + 5s),
        "decided");
    return kvAt(r, "ok") == 1;
  }

  bool awaitServerCloses(std::int64_t sinceNs, int n, int timeoutMs) {
    const Kv r = parseKv(
        server_->ask(fmt::format("await-closes since={} n={} timeout_ms={}", sinceNs, n, timeoutMs),
                     Clock::now() + std::chrono::milliseconds(timeoutMs) + 5s),
        "closes");
    return kvAt(r, "ok") == 1;
  }

  std::vector<Ev> clientEvents(std::int64_t sinceNs) { return events(*client_, sinceNs); }
  std::vector<Ev> serverEvents(std::int64_t sinceNs) { return events(*server_, sinceNs); }

  void stopServer() {
    if (::kill(server_->pid(), SIGSTOP) != 0) throw std::runtime_error("kill(SIGSTOP) failed");
    stopped_ = true;
  }
  void resume() {
    if (stopped_ && server_) ::kill(server_->pid(), SIGCONT);
    stopped_ = false;
  }

  [[nodiscard]] const std::vector<int>& ports() const noexcept { return ports_; }

private:
  static std::vector<Ev> events(ChildProcess& c, std::int64_t sinceNs) {
    const auto deadline = Clock::now() + 10s;
    const Kv head = parseKv(c.ask(fmt::format("events since={}", sinceNs), deadline), "events");
    std::vector<Ev> out;
    for (std::int64_t i = 0; i < kvAt(head, "n"); ++i) {
      const Kv e = parseKv(c.readLine(deadline), "ev");
      out.push_back(Ev{static_cast<int>(kvAt(e, "group")), kvAt(e, "ch"), kvAt(e, "t"),
                       static_cast<int>(kvAt(e, "rule"))});
    }
    return out;
  }

  const BenchConfig& config_;
  std::unique_ptr<ChildProcess> server_;
  std::unique_ptr<ChildProcess> client_;
  std::vector<int> ports_;
  bool stopped_ = false;
};

Clock::duration ms(double v) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(v));
}

// A random point of the heartbeat cycle (a connection beats every 1–1.33 heartbeats).
Clock::duration randomPhase(const BenchConfig& c, std::mt19937_64& rng) {
  return ms(std::uniform_real_distribution<double>(0, c.heartbeatMs * 4.0 / 3.0)(rng));
}

// Events that are false closes: client decisions by a rule (not the reconnects after a close),
// every server close-idle.
void countFalse(const std::vector<Ev>& client, const std::vector<Ev>& server, std::int64_t from,
                std::int64_t to, std::vector<GroupResult>& out, std::vector<int>* perGroup) {
  for (const auto& e : client) {
    if (e.atNs < from || e.atNs >= to || e.rule == kRuleDisconnected) continue;
    auto& g = out[static_cast<std::size_t>(e.group)];
    ++g.falseReconnectsClient;
    ++(e.rule == kRulePhi ? g.falseByPhi : g.falseByIdle);
    if (perGroup) ++(*perGroup)[static_cast<std::size_t>(e.group)];
  }
  for (const auto& e : server) {
    if (e.atNs < from || e.atNs >= to) continue;
    auto& g = out[static_cast<std::size_t>(e.group)];
    ++g.falseClosesServer;
    ++(e.rule == kRulePhi ? g.falseByPhi : g.falseByIdle);
    if (perGroup) ++(*perGroup)[static_cast<std::size_t>(e.group)];
  }
}

// (a) The server goes silent (nft drops everything to and from its ports): per trial, each
// client's first decision after the rule went in, and each server channel's close.
std::vector<GroupResult> runDead(const BenchConfig& c, const std::vector<DetectorGroup>& groups,
                                 std::mt19937_64& rng, CaseInfo& info) {
  std::vector<GroupResult> r(groups.size());
  Session s(c, groups);
  NftFault nft(s.ports());
  // The slowest rule: the last read up to 1.33 heartbeats before the fault, then the longest
  // idleTimeout and up to one check interval (a third of it), ticks, margin.
  int idleMs = 3 * c.heartbeatMs;
  for (const auto& g : groups) idleMs = std::max(idleMs, g.idleTimeoutMs);
  const int boundMs = idleMs * 4 / 3 + 2 * c.heartbeatMs + 2000;
  std::int64_t quietSince = toNs(Clock::now());
  for (int t = 0; t < c.trials; ++t) {
    s.hold(randomPhase(c, rng));
    const auto before = Clock::now();
    nft.dropAll();
    const auto after = Clock::now();
    // The rule took effect somewhere in the nft call: its midpoint, ± half its duration.
    const std::int64_t fault = (toNs(before) + toNs(after)) / 2;
    info.faultUncertaintyMs =
        std::max(info.faultUncertaintyMs, msBetween(toNs(before), toNs(after)) / 2);
    const bool decided = s.awaitDecided(fault, boundMs);
    const bool closed = s.awaitServerCloses(fault, c.conns, boundMs);
    nft.clear();
    const std::int64_t cleared = toNs(Clock::now());
    if (!decided || !closed) {
      fmt::print(stderr, "wheelbeat_net_bench: D1 dead trial {}: {}{}\n", t + 1,
                 decided ? "" : "some clients never decided ",
                 closed ? "" : "some server channels never closed");
    }
    const auto client = s.clientEvents(quietSince);
    const auto server = s.serverEvents(quietSince);
    countFalse(client, server, quietSince, fault, r, nullptr);  // before the fault: false
    std::vector<std::vector<std::int64_t>> seen(groups.size());
    for (const auto& e : client) {
      if (e.atNs < fault || e.atNs > cleared || e.rule == kRuleDisconnected) continue;
      auto& ids = seen[static_cast<std::size_t>(e.group)];
      if (std::find(ids.begin(), ids.end(), e.channel) != ids.end()) continue;  // first only
      ids.push_back(e.channel);
      auto& g = r[static_cast<std::size_t>(e.group)];
      g.detectMs.push_back(msBetween(fault, e.atNs));
      ++(e.rule == kRulePhi ? g.byPhi : g.byIdle);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      r[g].undetected += c.conns - static_cast<int>(seen[g].size());
    }
    for (const auto& e : server) {
      if (e.atNs < fault || e.atNs > cleared) continue;
      r[static_cast<std::size_t>(e.group)].serverDetectMs.push_back(msBetween(fault, e.atNs));
    }
    s.awaitReady();
    quietSince = cleared;
    fmt::print(stderr, "wheelbeat_net_bench: D1 dead trial {}/{} done\n", t + 1, c.trials);
  }
  // Closes after the last trial's recovery: false too.
  countFalse(s.clientEvents(quietSince), s.serverEvents(quietSince), quietSince, toNs(Clock::now()),
             r, nullptr);
  return r;
}

// (b) The server process stopped for 0.5–2.5 heartbeats, evenly spread and shuffled.
std::vector<GroupResult> runPause(const BenchConfig& c, const std::vector<DetectorGroup>& groups,
                                  std::mt19937_64& rng, CaseInfo& info) {
  std::vector<GroupResult> r(groups.size());
  for (auto& g : r) g.falseByPauseBin.assign(kPauseBins, 0);
  std::vector<double> pauses;
  for (int i = 0; i < c.pauses; ++i) {
    pauses.push_back(c.heartbeatMs * (kPauseMin + (kPauseMax - kPauseMin) * (i + 0.5) / c.pauses));
  }
  std::shuffle(pauses.begin(), pauses.end(), rng);
  const auto [lo, hi] = std::minmax_element(pauses.begin(), pauses.end());
  if (lo == pauses.end()) throw std::invalid_argument("--pauses: at least 1");
  info.pauseMsMin = *lo;
  info.pauseMsMax = *hi;
  Session s(c, groups);
  // After SIGCONT the server answers what queued up within milliseconds; a decision later than
  // this is not the pause's.
  const auto observe = ms(std::max(500.0, c.heartbeatMs / 2.0));
  int n = 0;
  for (const double pause : pauses) {
    s.hold(randomPhase(c, rng));
    const std::int64_t from = toNs(Clock::now());
    s.stopServer();
    s.hold(ms(pause));
    s.resume();
    s.hold(observe);
    const std::int64_t to = toNs(Clock::now());
    std::vector<int> perGroup(groups.size(), 0);
    countFalse(s.clientEvents(from), s.serverEvents(from), from, to, r, &perGroup);
    const auto bin = std::min<std::size_t>(
        kPauseBins - 1, static_cast<std::size_t>((pause / c.heartbeatMs - kPauseMin) /
                                                 (kPauseMax - kPauseMin) * kPauseBins));
    for (std::size_t g = 0; g < groups.size(); ++g) {
      r[g].falseByPauseBin[bin] += perGroup[g];
      r[g].pausesWithFalse += perGroup[g] > 0 ? 1 : 0;
    }
    s.awaitReady();  // false reconnects settled before the next pause
    fmt::print(stderr, "wheelbeat_net_bench: D1 pause {}/{} ({:.0f} ms) done\n", ++n, c.pauses,
               pause);
  }
  return r;
}

// (c) 10 % of the packets to and from the server's ports dropped for the window.
std::vector<GroupResult> runLoss(const BenchConfig& c, const std::vector<DetectorGroup>& groups,
                                 CaseInfo& info) {
  std::vector<GroupResult> r(groups.size());
  Session s(c, groups);
  NftFault nft(s.ports());
  const std::int64_t from = toNs(Clock::now());
  nft.dropRandom(kLossPct);
  s.hold(ms(c.windowS * 1000));
  nft.clear();
  s.hold(ms(c.heartbeatMs));  // a decision made of the last lost packets comes this late at most
  const std::int64_t to = toNs(Clock::now());
  info.lossWindowS = static_cast<double>(to - from) / 1e9;
  countFalse(s.clientEvents(from), s.serverEvents(from), from, to, r, nullptr);
  return r;
}

}  // namespace

int d1DriverMain(const BenchConfig& config) {
  installInterruptHandlers();
  if (const std::string why = nftUnavailableReason(); !why.empty()) {
    fmt::print(stderr, "wheelbeat_net_bench: D1 SKIPPED: {}\n", why);
    return kSkipped;
  }
  const auto groups = d1Groups(config);
  D1Run run;
  run.config = config;
  run.groups = groups;
  run.seed = config.seed != 0 ? config.seed : std::random_device{}();
  std::mt19937_64 rng(run.seed);
  run.loadStart = loadAverage1m();
  const auto t0 = Clock::now();
  try {
    fmt::print(stderr,
               "wheelbeat_net_bench: D1: {} detectors x {} connections, heartbeat {} ms; dead: "
               "{} trials, pause: {}, loss: {} s\n",
               groups.size(), config.conns, config.heartbeatMs, config.trials, config.pauses,
               config.windowS);
    run.dead = runDead(config, groups, rng, run.info);
    run.pause = runPause(config, groups, rng, run.info);
    run.loss = runLoss(config, groups, run.info);
  } catch (const Interrupted&) {
    fmt::print(stderr, "wheelbeat_net_bench: interrupted; children stopped, nft table deleted\n");
    return 130;
  }
  run.elapsedS = std::chrono::duration<double>(Clock::now() - t0).count();
  run.loadEnd = loadAverage1m();
  const auto lines = d1Lines(run);
  for (const auto& line : lines) fmt::print("{}\n", line);
  std::fflush(stdout);
  if (!config.selfCheck) return 0;
  const auto problems = d1SelfCheck(lines, run);
  for (const auto& p : problems) fmt::print(stderr, "self-check: {}\n", p);
  fmt::print(stderr, "self-check: {}\n", problems.empty() ? "OK" : "FAILED");
  return problems.empty() ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
