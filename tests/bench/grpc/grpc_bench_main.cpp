// wheelbeat_grpc_bench: the cluster benchmark's T0 / T1 on gRPC C++ (grpc_bench.h).
//   wheelbeat_grpc_bench [--scenario T0,T1] [--config round_robin,retry,outlier,best] [flags]
// One JSON line per (scenario, config) on stdout (report.h); progress and errors on stderr.
#include "command_line_cli11.h"
#include "grpc_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <sstream>
#include <string>

namespace wheelbeat::bench::grpcbench {
namespace {

constexpr const char* kSynopsis =
    "usage: wheelbeat_grpc_bench [--scenario T0,T1] [--config round_robin,retry,outlier,best]\n"
    "                            [--providers N] [--rate R] [--duration S] [--warmup S]\n"
    "                            [--deadline-ms MS] [--payload BYTES]\n"
    "                            [--slow-every K] [--slow-ms MS] [--error-fraction F]\n"
    "                            [--stop-for S] [--stop-every S] [--stop-start S]\n"
    "       wheelbeat_grpc_bench --help | --version";

constexpr const char* kDescription =
    "The cluster benchmark on gRPC C++: N provider processes (gRPC servers with one unary\n"
    "method, Echo(bytes) -> bytes) and this process as the consumer, one channel to them all,\n"
    "calls at a fixed rate (open loop: latency from each call's scheduled time).\n"
    "  T0: no fault\n"
    "  T1: provider 0 answers every K-th call M ms late, provider 1 fails a fraction F of its\n"
    "      calls with UNAVAILABLE, provider 2 is SIGSTOPped for --stop-for s every --stop-every s\n"
    "      from --stop-start s into the measured window\n"
    "Channel configurations (--config, gRPC service config):\n"
    "  round_robin  round_robin over every provider\n"
    "  retry        + retryPolicy (3 attempts on UNAVAILABLE) + retryThrottling\n"
    "  outlier      + outlier_detection (failure share over 1 s) wrapping round_robin\n"
    "  best         outlier + perAttemptRecvTimeout 100 ms (gRPC C++ has no hedging), no\n"
    "               throttling\n"
    "One JSON line per (scenario, config) on stdout; progress on stderr. Exit status: 0 done,\n"
    "1 a run failed, 2 bad usage, 128 + N after signal N (every provider stopped first).";

constexpr const char* kExamples =
    "  wheelbeat_grpc_bench --scenario T0,T1 --config round_robin,retry,outlier,best --duration "
    "20\n"
    "  wheelbeat_grpc_bench --duration 2 --warmup 0.5 --rate 200 --providers 3 "
    "--config round_robin,best\n";

// A number in [lo, hi] (loOpen: lo itself excluded); integral: no fraction allowed.
CLI::Validator number(double lo, bool loOpen, double hi, bool integral) {
  const std::string expected = fmt::format("{} in {}{}, {}]", integral ? "an integer" : "a number",
                                           loOpen ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& v) -> std::string {
        std::size_t used = 0;
        try {
          const double x = std::stod(v, &used);
          const bool whole = !integral || x == static_cast<double>(static_cast<long long>(x));
          if (used == v.size() && whole && (loOpen ? x > lo : x >= lo) && x <= hi) return {};
        } catch (const std::exception&) {  // not a number: the message below
        }
        return fmt::format("'{}' (expected {})", v, expected);
      },
      "");
}

// A comma list whose every item is one of `allowed`.
CLI::Validator listOf(std::vector<std::string> allowed) {
  std::string names;
  for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
  const std::string expected = fmt::format("(expected a comma list of: {})", names);
  return CLI::Validator(
      [allowed, expected](std::string& v) -> std::string {
        std::istringstream in(v);
        std::string item;
        bool any = false;
        while (std::getline(in, item, ',')) {
          any = true;
          if (std::find(allowed.begin(), allowed.end(), item) != allowed.end()) continue;
          return item == v ? fmt::format("'{}' {}", v, expected)
                           : fmt::format("'{}': '{}' {}", v, item, expected);
        }
        return any ? "" : fmt::format("'{}' {}", v, expected);
      },
      "");
}

std::vector<std::string> split(const std::string& v) {
  std::vector<std::string> out;
  std::istringstream in(v);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

struct Args {
  Options options;
  std::string scenarios = "T0,T1";
  std::string configs = "round_robin,retry,outlier,best";
  std::string role;
  ProviderOptions provider;
};

void addRunOptions(CLI::App& app, Args& a) {
  Options& o = a.options;
  app.add_option("--scenario", a.scenarios, "the scenarios, in order (T0, T1)")
      ->type_name("LIST")
      ->check(listOf({"T0", "T1"}))
      ->capture_default_str();
  app.add_option("--config", a.configs, "the channel configurations, in order (see above)")
      ->type_name("LIST")
      ->check(listOf({"round_robin", "retry", "outlier", "best"}))
      ->capture_default_str();
  app.add_option("--providers", o.providers, "provider processes (T1: at least 3)")
      ->type_name("N")
      ->check(number(1, false, 64, true))
      ->capture_default_str();
  app.add_option("--rate", o.rate, "calls per second, offered whatever the answers")
      ->type_name("R")
      ->check(number(0, true, 100000, false))
      ->capture_default_str();
  app.add_option("--duration", o.durationS, "the measured window, in seconds")
      ->type_name("S")
      ->check(number(0, true, 3600, false))
      ->capture_default_str();
  app.add_option("--warmup", o.warmupS, "seconds of calls before the window, not measured")
      ->type_name("S")
      ->check(number(0, false, 3600, false))
      ->capture_default_str();
  app.add_option("--deadline-ms", o.deadlineMs, "each call's deadline, from when it is sent")
      ->type_name("MS")
      ->check(number(1, false, 60000, true))
      ->capture_default_str();
  app.add_option("--payload", o.payload, "request bytes (echoed back)")
      ->type_name("BYTES")
      ->check(number(0, false, 1 << 20, true))
      ->capture_default_str();
}

void addFaultOptions(CLI::App& app, Args& a) {
  Options& o = a.options;
  app.add_option("--slow-every", o.slowEvery, "T1, provider 0: every K-th call is slow (0: none)")
      ->type_name("K")
      ->check(number(0, false, 1e9, true))
      ->capture_default_str();
  app.add_option("--slow-ms", o.slowMs, "T1, provider 0: how late a slow call is answered")
      ->type_name("MS")
      ->check(number(0, false, 60000, true))
      ->capture_default_str();
  app.add_option("--error-fraction", o.errorFraction,
                 "T1, provider 1: the share of its calls failed with UNAVAILABLE")
      ->type_name("F")
      ->check(number(0, false, 1, false))
      ->capture_default_str();
  app.add_option("--stop-for", o.stopForS, "T1, provider 2: each SIGSTOP's length (0: none)")
      ->type_name("S")
      ->check(number(0, false, 3600, false))
      ->capture_default_str();
  app.add_option("--stop-every", o.stopEveryS, "T1, provider 2: the period of the stops")
      ->type_name("S")
      ->check(number(0, true, 3600, false))
      ->capture_default_str();
  app.add_option("--stop-start", o.stopStartS, "T1, provider 2: the first stop, into the window")
      ->type_name("S")
      ->check(number(0, false, 3600, false))
      ->capture_default_str();
}

// Set by the driver on the processes it starts (this binary again): not for people.
void addChildOptions(CLI::App& app, Args& a) {
  const std::string group = "Child processes (set by the driver)";
  app.add_option("--role", a.role, "run as one of the driver's providers")
      ->type_name("ROLE")
      ->check(wheelbeat::cli::cli11(wheelbeat::cli::oneOf({"provider"})))
      ->default_str("none: the driver")
      ->group(group);
  app.add_option("--index", a.provider.index, "this provider's index")
      ->type_name("N")
      ->check(number(0, false, 63, true))
      ->group(group);
  app.add_option("--parent-pid", a.provider.parentPid, "the driver's pid")
      ->type_name("PID")
      ->check(number(1, false, 1e9, true))
      ->group(group);
}

// Rules across flags, checked after parsing: "" when the options hold together.
std::string crossCheck(const Options& o) {
  const bool t1 =
      std::find(o.scenarios.begin(), o.scenarios.end(), Scenario::T1) != o.scenarios.end();
  if (t1 && o.providers < 3) {
    return fmt::format(
        "--providers {}: T1 needs at least 3 (its faults are on providers 0, 1 "
        "and 2)",
        o.providers);
  }
  if (o.stopForS >= o.stopEveryS) {
    return fmt::format("--stop-for {}: must be shorter than --stop-every ({})", o.stopForS,
                       o.stopEveryS);
  }
  if (std::llround(o.durationS * o.rate) < 1) {
    return fmt::format("--duration {} at --rate {}: no call in the window", o.durationS, o.rate);
  }
  return {};
}

}  // namespace
}  // namespace wheelbeat::bench::grpcbench

int main(int argc, char** argv) {
  namespace gb = wheelbeat::bench::grpcbench;
  wheelbeat::cli::CommandLine cmd("wheelbeat_grpc_bench", gb::kSynopsis, gb::kDescription,
                                  gb::kExamples);
  gb::Args a;
  gb::addRunOptions(wheelbeat::cli::cli11App(cmd), a);
  gb::addFaultOptions(wheelbeat::cli::cli11App(cmd), a);
  gb::addChildOptions(wheelbeat::cli::cli11App(cmd), a);
  if (const auto status = cmd.parse(argc, argv)) return *status;
  if (a.role == "provider") {
    if (a.provider.parentPid == 0) return cmd.fail("--role provider needs --parent-pid");
    a.provider.slowEvery = a.options.slowEvery;
    a.provider.slowMs = a.options.slowMs;
    a.provider.errorFraction = a.options.errorFraction;
    return gb::providerMain(a.provider);
  }
  a.options.scenarios.clear();
  for (const auto& s : gb::split(a.scenarios)) {
    a.options.scenarios.push_back(s == "T0" ? gb::Scenario::T0 : gb::Scenario::T1);
  }
  a.options.configs.clear();
  for (const auto& c : gb::split(a.configs)) {
    a.options.configs.push_back(c == "round_robin" ? gb::ChannelConfig::RoundRobin
                                : c == "retry"     ? gb::ChannelConfig::Retry
                                : c == "outlier"   ? gb::ChannelConfig::Outlier
                                                   : gb::ChannelConfig::Best);
  }
  if (const std::string problem = gb::crossCheck(a.options); !problem.empty()) {
    return cmd.fail(problem);
  }
  return gb::driverMain(a.options);
}
