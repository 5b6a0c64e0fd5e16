// wheelbeat_net_bench: heartbeat-at-scale benchmarks (see net_bench.h).
//   wheelbeat_net_bench [--scenario H1|H2|D1] [--impl wheelbeat|raw|both] [--conns N] [--window S]
//                       [--warmup S] [--client-procs N] [--tick-ms MS] [--heartbeat-ms MS]
//                       [--quick] [--self-check]
// One JSON line per implementation on stdout (raw-epoll first); progress and errors on stderr.
#include "d1.h"
#include "net_bench.h"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::bench::netbench {
namespace {

constexpr std::string_view kUsage =
    "usage: wheelbeat_net_bench [--scenario H1|H2|D1] [--impl wheelbeat|raw|both] [--conns N]\n"
    "                           [--window S] [--warmup S] [--client-procs N] [--tick-ms MS]\n"
    "                           [--heartbeat-ms MS] [--quick] [--self-check]\n"
    "                           [--trials N] [--pauses N] [--phi-extra T:MS]... [--seed N]\n"
    "  H1: 5000 connections, 5 s warm-up, 30 s window, 1 client process\n"
    "  H2: as many connections as the server process can hold, 60 s window, 4 client processes\n"
    "  D1: the fixed idle rule against phi-accrual (Akka's defaults) at one heartbeat, under\n"
    "      faults (root + nftables; else exit 77): dead peer (--trials, default 10), SIGSTOP\n"
    "      pauses of 0.5-2.5 heartbeats (--pauses, 20), 10 % loss (--window S, 30); --conns\n"
    "      per detector (20); --phi-extra THRESHOLD:ACCEPTABLE_PAUSE_MS[:IDLE_TIMEOUT_MS] adds\n"
    "      a phi variant (repeatable; default 8:0, Akka's exact defaults; 'none': no\n"
    "      variant); --quick: 8 conns, 4 trials, 8 pauses, 10 s loss\n"
    "  --impl raw: the kernel's floor (\"impl\":\"raw-epoll\"): the same sockets, frames and\n"
    "      heartbeat schedule served by a bare epoll loop per process, nothing but the syscalls\n"
    "  --impl wheelbeat: the library (EventLoop, wheel, heartbeat/reconnect/close-idle tasks)\n"
    "  --impl both (default): raw, then wheelbeat; the wheelbeat line adds\n"
    "      raw_cpu_us_per_heartbeat and cpu_per_heartbeat_vs_raw (its CPU per heartbeat / raw's)\n";

int positiveInt(std::string_view flag, std::string_view v, int min) {
  std::size_t used = 0;
  const int n = std::stoi(std::string(v), &used);
  if (used != v.size() || n < min) {
    throw std::invalid_argument(fmt::format("{}: '{}' (expected an integer >= {})", flag, v, min));
  }
  return n;
}

double seconds(std::string_view flag, std::string_view v) {
  std::size_t used = 0;
  const double s = std::stod(std::string(v), &used);
  if (used != v.size() || !(s > 0) || s > 3600) {
    throw std::invalid_argument(fmt::format("{}: '{}' (expected seconds in (0, 3600])", flag, v));
  }
  return s;
}

// Returns false if `arg` is not a flag this parser knows.
bool parseOne(BenchConfig& c, std::string_view arg, std::string_view v) {
  if (arg == "--scenario") {
    if (v != "H1" && v != "H2" && v != "D1")
      throw std::invalid_argument(fmt::format("--scenario: '{}' (expected H1, H2 or D1)", v));
    c.scenario = v == "H1" ? Scenario::H1 : (v == "H2" ? Scenario::H2 : Scenario::D1);
  } else if (arg == "--impl") {
    if (v != "wheelbeat" && v != "raw" && v != "both")
      throw std::invalid_argument(fmt::format("--impl: '{}' (expected wheelbeat, raw or both)", v));
    c.impl = v == "raw" ? Impl::Raw : (v == "both" ? Impl::Both : Impl::Wheelbeat);
  } else if (arg == "--conns") {
    c.conns = positiveInt(arg, v, 0);
  } else if (arg == "--window") {
    c.windowS = seconds(arg, v);
  } else if (arg == "--warmup") {
    c.warmupS = seconds(arg, v);
  } else if (arg == "--client-procs") {
    c.clientProcs = positiveInt(arg, v, 1);
  } else if (arg == "--tick-ms") {
    c.tickMs = positiveInt(arg, v, 1);
  } else if (arg == "--heartbeat-ms") {
    c.heartbeatMs = positiveInt(arg, v, 1);
  } else if (arg == "--trials") {
    c.trials = positiveInt(arg, v, 1);
  } else if (arg == "--pauses") {
    c.pauses = positiveInt(arg, v, 1);
  } else if (arg == "--phi-extra") {
    if (v != "none") (void)parsePhiExtra(v);  // validated now, used by the driver
    c.phiExtras.emplace_back(v);
  } else if (arg == "--seed") {
    c.seed = std::stoull(std::string(v));
  } else if (arg == "--groups") {
    c.groups = std::string(v);
  } else if (arg == "--ports") {
    c.ports = std::string(v);
  } else if (arg == "--role") {
    c.role = std::string(v);
  } else if (arg == "--port") {
    c.port = positiveInt(arg, v, 1);
  } else if (arg == "--proc-index") {
    c.procIndex = positiveInt(arg, v, 0);
  } else {
    return false;
  }
  return true;
}

BenchConfig parseArgs(int argc, char** argv) {
  BenchConfig c;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      c.quick = true;
    } else if (arg == "--self-check") {
      c.selfCheck = true;
    } else if (i + 1 < argc && parseOne(c, arg, argv[i + 1])) {
      ++i;
    } else {
      throw std::invalid_argument(fmt::format("unknown argument or missing value: '{}'", arg));
    }
  }
  applyDefaults(c);
  return c;
}

// A child runs the roles of the implementation the driver named (wheelbeat's unless raw).
int childMain(const BenchConfig& config) {
  if (config.scenario == Scenario::D1) {
    if (config.role == "server") return d1ServerMain(config);
    if (config.role == "client") return d1ClientMain(config);
    throw std::invalid_argument(fmt::format("--role: '{}'", config.role));
  }
  const bool raw = config.impl == Impl::Raw;
  if (config.role == "server") return raw ? rawServerMain(config) : serverMain(config);
  if (config.role == "client") return raw ? rawClientMain(config) : clientMain(config);
  throw std::invalid_argument(fmt::format("--role: '{}'", config.role));
}

}  // namespace

const char* implName(Impl impl) {
  switch (impl) {
    case Impl::Wheelbeat: return "wheelbeat";
    case Impl::Raw: return "raw-epoll";
    case Impl::Both: return "both";
  }
  return "?";
}

void applyDefaults(BenchConfig& c) {
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
  const bool h1 = c.scenario == Scenario::H1;
  if (c.conns < 0) c.conns = h1 ? (c.quick ? 200 : 5000) : (c.quick ? 1000 : 0);
  if (c.windowS < 0) c.windowS = c.quick ? 3 : (h1 ? 30 : 60);
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
  try {
    if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
      fmt::print("{}", nb::kUsage);
      return 0;
    }
    const nb::BenchConfig config = nb::parseArgs(argc, argv);
    if (!config.role.empty()) return nb::childMain(config);
    return config.scenario == nb::Scenario::D1 ? nb::d1DriverMain(config) : nb::driverMain(config);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "wheelbeat_net_bench: {}\n{}", e.what(), nb::kUsage);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wheelbeat_net_bench{}: FAILED: {}\n", argc > 2 ? "" : "", e.what());
    return 1;
  }
}
