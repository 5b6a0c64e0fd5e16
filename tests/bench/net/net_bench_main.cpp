// wheelbeat_net_bench: heartbeat-at-scale benchmarks (see net_bench.h), R1 (r1.h), T0 / T1
// (t1.h).
//   wheelbeat_net_bench [--scenario H1|H2|D1|R1] [--impl wheelbeat|raw|both] [--conns N]
//                       [--window S] [--warmup S] [--rounds N] [--client-procs N] [--tick-ms MS]
//                       [--heartbeat-ms MS]
//                       [--quick] [--self-check] [--cases CxD,...] [--loops N,...]
//                       [--request-timeout-ms MS]
//   wheelbeat_net_bench --scenario T0,T1 [--config C,...] [--providers N] [--rate R] ... (t1.h)
// One JSON line per implementation on stdout (raw-epoll first); progress and errors on stderr.
#include "command_line_cli11.h"
#include "d1.h"
#include "net_bench.h"
#include "r1.h"
#include "t1_cli.h"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace wheelbeat::bench::netbench {
namespace {

constexpr const char* kSynopsis =
    "usage: wheelbeat_net_bench [--scenario H1|H2|D1|R1] [--impl IMPL] [--conns N]\n"
    "                           [--window S] [--warmup S] [--rounds N] [--client-procs N]\n"
    "                           [--tick-ms MS] [--heartbeat-ms MS] [--schedule even|connect]\n"
    "                           [--quick] [--self-check]\n"
    "                           [--trials N] [--pauses N] [--phi-extra T:MS]... [--seed N]\n"
    "                           [--cases CxD,...] [--loops N,...] [--request-timeout-ms MS]\n"
    "       wheelbeat_net_bench --scenario T0|T1|T0,T1 [--config C,...] [--providers N]\n"
    "                           [--rate R] [--duration S] [--warmup S] [--deadline-ms MS]\n"
    "                           [--payload B] [--slow-every K] [--slow-ms M]\n"
    "                           [--error-fraction F] [--stop-for S] [--stop-every P]\n"
    "                           [--stop-start T] [--marker TEXT]\n"
    "       wheelbeat_net_bench --help | --version";

constexpr const char* kDescription =
    "  H1: 5000 connections, 5 s warm-up, 10 s window, 1 client process\n"
    "  H2: as many connections as the server process can hold, 20 s window, 4 client processes\n"
    "  H1 / H2 with --impl both: 3 rounds (--rounds), each a raw-epoll run, then a wheelbeat run,\n"
    "      then a wheelbeat-loopwheel run;\n"
    "      each implementation's line is its median round (by CPU per heartbeat) and lists every\n"
    "      round's figure: the floor moves by up to ~20 % between runs minutes apart here\n"
    "  H1 / H2 --schedule: a heartbeat follows its connection's connect (Dubbo's rule); \"even\"\n"
    "      (default) connects wheelbeat's connection i in the tick slot i % (heartbeat / tick),\n"
    "      so its heartbeats come on the floor's schedule, an equal share in every tick;\n"
    "      \"connect\": as fast as they connect, the heartbeats clustered in a few ticks\n"
    "  D1: the fixed idle rule against phi-accrual (Akka's defaults) at one heartbeat, under\n"
    "      faults (root + nftables; else exit 77): dead peer (--trials, default 10), SIGSTOP\n"
    "      pauses of 0.5-2.5 heartbeats (--pauses, 20), 10 % loss (--window S, 30); --conns\n"
    "      per detector (20); --phi-extra THRESHOLD:ACCEPTABLE_PAUSE_MS[:IDLE_TIMEOUT_MS] adds\n"
    "      a phi variant (repeatable; default 8:0, Akka's exact defaults; 'none': no\n"
    "      variant); --quick: 8 conns, 4 trials, 8 pauses, 10 s loss\n"
    "  R1: request / response, 64-byte bodies, Channel::request (each with its wheel timeout)\n"
    "      against a handler's reply, per case of --cases CONNSxDEPTH (requests in flight per\n"
    "      connection; default 64x16,1000x1) and server --loops (1,2), 2 s warm-up, 3 s window;\n"
    "      raw-epoll runs the same frames and pipelining on plain sockets (a server thread per\n"
    "      loop), first; lines with loops > 1 add their ratios to the same impl's 1-loop line;\n"
    "      with --impl both also \"wheelbeat-server\": wheelbeat's server asked by the floor's\n"
    "      client (the server's own cost, without the wheelbeat client's pace), and 3 rounds\n"
    "      of every case (--rounds): each line is its median round by server CPU per request;\n"
    "      --bodies raw,hessian2 (default raw) adds wheelbeat lines with real Dubbo bodies\n"
    "      (echo(String) of 64 characters through dubbo::Provider, \"bodies\":\"hessian2\"), each\n"
    "      with its server CPU per request vs the raw-bodies line, rounds interleaved;\n"
    "      raw-sized adds the floor under hessian2: raw bytes of the hessian2 bodies' lengths,\n"
    "      echoed at the response's length (\"bodies\":\"raw-sized\", nothing decoded);\n"
    "      hessian2-inplace, the hessian2 bodies served by Provider::addInPlace (views of\n"
    "      the frame, the answer encoded straight from them)\n"
    "  --impl raw: the kernel's floor (\"impl\":\"raw-epoll\"): the same sockets, frames and\n"
    "      heartbeat schedule served by a bare epoll loop per process, nothing but the syscalls\n"
    "  --impl wheelbeat: the library (EventLoop, wheel, heartbeat/reconnect/close-idle tasks)\n"
    "  --impl wheelbeat-loopwheel (H1 / H2): the same, each process's wheel advanced by its\n"
    "      loop (net::LoopWheel) instead of a wheel thread: one thread per process\n"
    "  --impl both (default): raw, then wheelbeat (H1 / H2: then wheelbeat-loopwheel); their\n"
    "      lines add raw_cpu_us_per_heartbeat and cpu_per_heartbeat_vs_raw (CPU per heartbeat /\n"
    "      raw's)\n"
    "  T0 / T1: the cluster client (cluster::ServiceClient) over --providers provider\n"
    "      processes (8) found through a registry node, open-loop --rate calls/s (2000) of\n"
    "      --payload bytes (64), --deadline-ms (500) each, 5 s warm-up, --duration (60 s); one\n"
    "      line per scenario and --config (round_robin: failfast round robin; failover: + 2\n"
    "      retries under the retry budget; full: P2C, failover, outlier ejection and suspicion,\n"
    "      adaptive hedging, budget and load cap). T0: no fault; T1: provider 0 answers every\n"
    "      --slow-every-th call --slow-ms late (100, 50), provider 1 fails --error-fraction of\n"
    "      its calls with status 100 (0.3), provider 2 is SIGSTOPped --stop-for s every\n"
    "      --stop-every s from --stop-start s into the window (2, 20, 5)\n"
    "One JSON line per implementation on stdout; progress on stderr. Exit status: 0 done, 1 a\n"
    "run or the self-check failed, 2 bad usage, 77 D1 without root or nftables.";

constexpr const char* kExamples =
    "  wheelbeat_net_bench --scenario H1 --impl wheelbeat --conns 50 --warmup 1 --window 2 "
    "--self-check\n"
    "  wheelbeat_net_bench --scenario=D1 --quick --phi-extra 8:0 --phi-extra 12:500\n"
    "  wheelbeat_net_bench --scenario R1 --cases 64x16 --loops 1 --window 3\n"
    "  wheelbeat_net_bench --scenario T0,T1 --config round_robin,full --duration 20\n";

// The command line as given: the enumerated flags as text, the rest straight into the config.
struct Args {
  BenchConfig config;
  std::string scenario = "H1";
  std::string impl = "both";
  std::string cases = "64x16,1000x1";
  std::string loops = "1,2";
  std::string bodies = "raw";
  T1Args t1;
};

// An integer >= min (the old parser's rule, kept: --conns 0 is H2's "as many as it holds").
CLI::Validator atLeast(int min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        std::size_t used = 0;
        try {
          if (std::stoi(v, &used) >= min && used == v.size()) return {};
        } catch (const std::exception&) {  // not an int: the message below
        }
        return fmt::format("'{}' (expected an integer >= {})", v, min);
      },
      "");
}

// Seconds in (0, 3600].
CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::size_t used = 0;
        try {
          const double s = std::stod(v, &used);
          if (used == v.size() && s > 0 && s <= 3600) return {};
        } catch (const std::exception&) {  // not a number: the message below
        }
        return fmt::format("'{}' (expected seconds in (0, 3600])", v);
      },
      "");
}

// --phi-extra: "none" or what parsePhiExtra takes (its message names the flag already).
std::string checkPhiExtra(std::string& v) {
  if (v == "none") return {};
  try {
    (void)parsePhiExtra(v);
    return {};
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    const std::string prefix = "--phi-extra: ";
    return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
  }
}

void addScenarioOptions(CLI::App& app, Args& a) {
  BenchConfig& c = a.config;
  app.add_option("--scenario", a.scenario, "what to measure (see above)")
      ->type_name("S")
      ->check(scenarioCheck())
      ->capture_default_str();
  app.add_option("--impl", a.impl, "the implementations measured (see above)")
      ->type_name("IMPL")
      ->check(wheelbeat::cli::cli11(
          wheelbeat::cli::oneOf({"wheelbeat", "raw", "both", "wheelbeat-loopwheel"})))
      ->capture_default_str();
  app.add_option("--conns", c.conns, "connections (D1: per detector; H2: 0 = as many as it holds)")
      ->type_name("N")
      ->check(atLeast(0))
      ->default_str("H1 5000, H2 0, D1 20; --quick 200, 1000, 8");
  app.add_option("--window", c.windowS, "the measured window (D1: the packet-loss window)")
      ->type_name("S")
      ->check(seconds())
      ->default_str("H1 10, H2 20, D1 30, R1 3; --quick 3, 3, 10, 1");
  app.add_option("--warmup", c.warmupS, "the warm-up before the window")
      ->type_name("S")
      ->check(seconds())
      ->default_str("5, R1 2; --quick 1, R1 0.5");
  app.add_option("--rounds", c.rounds, "H1 / H2 / R1: runs of each implementation, interleaved")
      ->type_name("N")
      ->check(atLeast(1))
      ->default_str("3 with --impl both, else 1; --quick 1");
  app.add_option("--client-procs", c.clientProcs, "client processes")
      ->type_name("N")
      ->check(atLeast(1))
      ->default_str("H1 1, H2 4; --quick 1, 2");
  app.add_option("--tick-ms", c.tickMs, "the wheel's tick")
      ->type_name("MS")
      ->check(atLeast(1))
      ->capture_default_str();
  app.add_option("--heartbeat-ms", c.heartbeatMs, "the heartbeat interval")
      ->type_name("MS")
      ->check(atLeast(1))
      ->capture_default_str();
  app.add_option("--schedule", c.schedule,
                 "H1 / H2: when wheelbeat's clients connect, which sets their heartbeats' ticks "
                 "(see above)")
      ->type_name("S")
      ->check(wheelbeat::cli::cli11(wheelbeat::cli::oneOf({"even", "connect"})))
      ->capture_default_str();
  app.add_flag("--quick", c.quick, "short runs, fewer connections: a smoke run");
  app.add_flag("--self-check", c.selfCheck, "validate the printed lines; exit 1 on a problem");
}

void addD1Options(CLI::App& app, BenchConfig& c) {
  app.add_option("--trials", c.trials, "D1: dead-peer trials")
      ->type_name("N")
      ->check(atLeast(1))
      ->default_str("10; --quick 4");
  app.add_option("--pauses", c.pauses, "D1: SIGSTOP / SIGCONT pauses")
      ->type_name("N")
      ->check(atLeast(1))
      ->default_str("20; --quick 8");
  app.add_option("--phi-extra", c.phiExtras,
                 "D1: one more phi detector, THRESHOLD:ACCEPTABLE_PAUSE_MS[:IDLE_TIMEOUT_MS] "
                 "(repeatable; none: no variant)")
      ->type_name("T:MS")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(checkPhiExtra, ""))
      ->default_str("8:0");
  app.add_option("--seed", c.seed, "D1: the random seed")
      ->type_name("N")
      ->default_str("0, a fresh one (printed in the lines)");
}

void addR1Options(CLI::App& app, Args& a) {
  app.add_option("--cases", a.cases, "R1: CONNSxDEPTH,... (connections, requests in flight each)")
      ->type_name("CxD,...")
      ->capture_default_str();
  app.add_option("--loops", a.loops, "R1: the server's event loops (raw: epoll threads), per run")
      ->type_name("N,...")
      ->capture_default_str();
  app.add_option("--bodies", a.bodies,
                 "R1: raw (64 bytes echoed), hessian2 (Dubbo echo(String), no floor), "
                 "hessian2-inplace (the same, Provider::addInPlace) and/or raw-sized (raw bytes "
                 "of hessian2's lengths)")
      ->type_name("B,...")
      ->capture_default_str();
  app.add_option("--request-timeout-ms", a.config.requestTimeoutMs,
                 "R1: each wheelbeat request's timeout")
      ->type_name("MS")
      ->check(atLeast(1))
      ->capture_default_str();
}

// Set by the driver on the processes it starts (this binary again): not for people.
void addChildOptions(CLI::App& app, BenchConfig& c) {
  const std::string group = "Child processes (set by the driver)";
  app.add_option("--role", c.role, "run as the driver's server, client or (T0 / T1) provider")
      ->type_name("ROLE")
      ->check(wheelbeat::cli::cli11(wheelbeat::cli::oneOf({"server", "client", "provider"})))
      ->default_str("none: the driver")
      ->group(group);
  app.add_option("--port", c.port, "the server's first port")
      ->type_name("PORT")
      ->check(atLeast(1))
      ->group(group);
  app.add_option("--proc-index", c.procIndex, "this client process's index")
      ->type_name("N")
      ->check(atLeast(0))
      ->capture_default_str()
      ->group(group);
  app.add_option("--depth", c.depth, "R1 client: requests in flight per connection")
      ->type_name("N")
      ->check(atLeast(1))
      ->group(group);
  app.add_option("--groups", c.groups, "D1: the detector groups")->type_name("G")->group(group);
  app.add_option("--ports", c.ports, "D1 client: the server's port per group")
      ->type_name("P,P,...")
      ->group(group);
}

BenchConfig configOf(Args a) {
  BenchConfig c = std::move(a.config);
  c.scenario = a.scenario == "H1"   ? Scenario::H1
               : a.scenario == "H2" ? Scenario::H2
               : a.scenario == "D1" ? Scenario::D1
                                    : Scenario::R1;
  c.r1Cases = parseR1Cases(a.cases);
  c.loops = parseR1Loops(a.loops);
  c.r1Bodies = parseR1Bodies(a.bodies);
  c.impl = a.impl == "raw"                   ? Impl::Raw
           : a.impl == "both"                ? Impl::Both
           : a.impl == "wheelbeat-loopwheel" ? Impl::LoopWheel
                                             : Impl::Wheelbeat;
  applyDefaults(c);
  return c;
}

// A child runs the roles of the implementation the driver named (wheelbeat's unless raw).
int childMain(const BenchConfig& config) {
  if (config.role == "provider") {
    throw std::invalid_argument("--role provider: for T0 / T1 only");
  }
  if (config.scenario == Scenario::D1) {
    if (config.role == "server") return d1ServerMain(config);
    if (config.role == "client") return d1ClientMain(config);
    throw std::invalid_argument(fmt::format("--role: '{}'", config.role));
  }
  const bool raw = config.impl == Impl::Raw;
  if (config.scenario == Scenario::R1) {
    if (config.role == "server") return raw ? r1RawServerMain(config) : r1ServerMain(config);
    return raw ? r1RawClientMain(config) : r1ClientMain(config);
  }
  if (config.role == "server") return raw ? rawServerMain(config) : serverMain(config);
  if (config.role == "client") return raw ? rawClientMain(config) : clientMain(config);
  throw std::invalid_argument(fmt::format("--role: '{}'", config.role));
}

// T0 / T1: the driver, or a provider.
int tMain(Args a) {
  const BenchConfig& c = a.config;
  T1Config config = t1ConfigOf(std::move(a.t1), a.scenario, c.warmupS, c.role, c.procIndex);
  return config.role == "provider" ? t1ProviderMain(config) : t1DriverMain(config);
}

}  // namespace

const char* implName(Impl impl) {
  switch (impl) {
    case Impl::Wheelbeat: return "wheelbeat";
    case Impl::Raw: return "raw-epoll";
    case Impl::Both: return "both";
    case Impl::LoopWheel: return "wheelbeat-loopwheel";
  }
  return "?";
}

void applyDefaults(BenchConfig& c) {
  if (c.scenario == Scenario::D1 && c.rounds > 0) {
    throw std::invalid_argument(fmt::format("--rounds {}: for H1, H2 and R1 only", c.rounds));
  }
  if (c.impl == Impl::LoopWheel && (c.scenario == Scenario::D1 || c.scenario == Scenario::R1)) {
    throw std::invalid_argument("--impl wheelbeat-loopwheel: for H1 and H2 only");
  }
  if (c.rounds < 0) c.rounds = c.impl == Impl::Both && !c.quick ? 3 : 1;
  if (c.scenario == Scenario::D1) {
    if (c.conns < 0) c.conns = c.quick ? 8 : 20;
    if (c.conns < 1) throw std::invalid_argument("--conns: D1 needs at least 1 per detector");
    if (c.trials < 0) c.trials = c.quick ? 4 : 10;
    if (c.pauses < 0) c.pauses = c.quick ? 8 : 20;
    if (c.windowS < 0) c.windowS = c.quick ? 10 : 30;
    // Beside the library's defaults (acceptable pause 1 s), Akka's exact ones (pause 0): the
    // README's D1 section shows why they differ ("none": no variant).
    if (c.phiExtras.empty()) c.phiExtras = {"8:0"};
    std::erase(c.phiExtras, "none");
    return;
  }
  if (c.scenario == Scenario::R1) {
    if (c.role.empty() && c.conns >= 0) {
      throw std::invalid_argument(fmt::format(
          "--conns {}: R1 takes its connections from --cases CONNSxDEPTH,...", c.conns));
    }
    if (c.windowS < 0) c.windowS = c.quick ? 1 : 3;
    if (c.warmupS < 0) c.warmupS = c.quick ? 0.5 : 2;
    c.clientProcs = 1;
    return;
  }
  const bool h1 = c.scenario == Scenario::H1;
  if (c.conns < 0) c.conns = h1 ? (c.quick ? 200 : 5000) : (c.quick ? 1000 : 0);
  if (c.windowS < 0) c.windowS = c.quick ? 3 : (h1 ? 10 : 20);
  if (c.warmupS < 0) c.warmupS = c.quick ? 1 : 5;
  if (c.clientProcs < 0) c.clientProcs = h1 ? 1 : (c.quick ? 2 : 4);
  if (c.scenario == Scenario::H1 && c.conns == 0) {
    throw std::invalid_argument("--conns 0 (as many as the server holds) is for H2 only");
  }
  if (c.conns > 0 && c.clientProcs > c.conns) c.clientProcs = c.conns;
}

}  // namespace wheelbeat::bench::netbench

int main(int argc, char** argv) {
  namespace nb = wheelbeat::bench::netbench;
  wheelbeat::cli::CommandLine cmd("wheelbeat_net_bench", nb::kSynopsis, nb::kDescription,
                                  nb::kExamples);
  nb::Args args;
  nb::addScenarioOptions(wheelbeat::cli::cli11App(cmd), args);
  nb::addD1Options(wheelbeat::cli::cli11App(cmd), args.config);
  nb::addR1Options(wheelbeat::cli::cli11App(cmd), args);
  nb::addChildOptions(wheelbeat::cli::cli11App(cmd), args.config);
  nb::addT1Options(wheelbeat::cli::cli11App(cmd), args.t1);
  if (const auto status = cmd.parse(argc, argv)) return *status;
  try {
    if (nb::isTScenario(args.scenario)) return nb::tMain(std::move(args));
    if (const std::string flag = nb::givenT1Flag(args.t1); !flag.empty()) {
      throw std::invalid_argument(fmt::format("{}: for T0 / T1 only", flag));
    }
    const nb::BenchConfig config = nb::configOf(std::move(args));
    if (!config.role.empty()) return nb::childMain(config);
    if (config.scenario == nb::Scenario::R1) return nb::r1DriverMain(config);
    return config.scenario == nb::Scenario::D1 ? nb::d1DriverMain(config) : nb::driverMain(config);
  } catch (const std::invalid_argument& e) {
    return cmd.fail(e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "wheelbeat_net_bench: FAILED: {}\n", e.what());
    return 1;
  }
}
