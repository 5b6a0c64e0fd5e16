// T0 / T1's command line (t1_cli.h).
#include "t1_cli.h"

#include "t1_consumer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace wheelbeat::bench::netbench {
namespace {

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t comma = text.find(',', at);
    parts.emplace_back(text.substr(at, comma - at));
    if (comma == std::string_view::npos) return parts;
    at = comma + 1;
  }
}

// A whole-string number, or nullopt.
template <typename T>
std::optional<T> numberOf(const std::string& v) {
  std::size_t used = 0;
  try {
    T x{};
    if constexpr (std::is_same_v<T, int>) {
      x = std::stoi(v, &used);
    } else {
      x = std::stod(v, &used);
    }
    if (used == v.size()) return x;
  } catch (const std::exception&) {  // not a number: nullopt
  }
  return std::nullopt;
}

// An integer in [min, max].
CLI::Validator intIn(int min, int max) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        const auto x = numberOf<int>(v);
        if (x && *x >= min && *x <= max) return {};
        return fmt::format("'{}' (expected an integer in [{}, {}])", v, min, max);
      },
      "");
}

// A finite number in (min, max] (minOpen) or [min, max].
CLI::Validator realIn(double min, bool minOpen, double max, std::string_view what) {
  return CLI::Validator(
      [=](std::string& v) -> std::string {
        const auto x = numberOf<double>(v);
        if (x && std::isfinite(*x) && (minOpen ? *x > min : *x >= min) && *x <= max) return {};
        return fmt::format("'{}' (expected {} in {}{}, {}])", v, what, minOpen ? "(" : "[", min,
                           max);
      },
      "");
}

CLI::Validator configCheck() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const auto& names = t1ConfigNames();
        for (const auto& word : splitList(v)) {
          if (std::find(names.begin(), names.end(), word) == names.end()) {
            return fmt::format("\"{}\" in \"{}\" (expected a comma list of {})", word, v,
                               wheelbeat::cli::listText(names));
          }
        }
        return {};
      },
      "");
}

void addLoadOptions(CLI::App& app, T1Args& a) {
  T1Config& c = a.config;
  a.options.push_back(app.add_option("--config", a.configs,
                                     "T0 / T1: the cluster settings, a comma list (see above)")
                          ->type_name("C,...")
                          ->check(configCheck())
                          ->capture_default_str());
  a.options.push_back(app.add_option("--providers", c.providers, "T0 / T1: provider processes")
                          ->type_name("N")
                          ->check(intIn(1, 64))
                          ->capture_default_str());
  a.options.push_back(app.add_option("--rate", c.rate, "T0 / T1: calls per second, offered")
                          ->type_name("R")
                          ->check(realIn(0, true, 1e6, "calls per second"))
                          ->default_str("2000"));
  a.options.push_back(app.add_option("--duration", c.durationS, "T0 / T1: the measured window")
                          ->type_name("S")
                          ->check(realIn(0, true, 3600, "seconds"))
                          ->default_str("60"));
  a.options.push_back(app.add_option("--deadline-ms", c.deadlineMs, "T0 / T1: each call's deadline")
                          ->type_name("MS")
                          ->check(intIn(1, 600000))
                          ->capture_default_str());
  a.options.push_back(
      app.add_option("--payload", c.payloadBytes, "T0 / T1: request body bytes (echoed)")
          ->type_name("B")
          ->check(intIn(1, 1 << 20))
          ->capture_default_str());
}

void addFaultOptions(CLI::App& app, T1Args& a) {
  T1Faults& f = a.config.faults;
  a.options.push_back(
      app.add_option("--slow-every", f.slowEvery, "T1: provider 0 answers every K-th call late")
          ->type_name("K")
          ->check(intIn(0, 1000000000))
          ->default_str("100; 0: off"));
  a.options.push_back(app.add_option("--slow-ms", f.slowMs, "T1: how late (provider 0)")
                          ->type_name("M")
                          ->check(intIn(1, 600000))
                          ->capture_default_str());
  a.options.push_back(app.add_option("--error-fraction", f.errorFraction,
                                     "T1: provider 1's share of calls answered with status 100")
                          ->type_name("F")
                          ->check(realIn(0, false, 1, "a fraction"))
                          ->default_str("0.3; 0: off"));
  a.options.push_back(app.add_option("--stop-for", f.stopForS, "T1: provider 2's SIGSTOP length")
                          ->type_name("S")
                          ->check(realIn(0, false, 3600, "seconds"))
                          ->default_str("2; 0: off"));
  a.options.push_back(
      app.add_option("--stop-every", f.stopEveryS, "T1: provider 2's SIGSTOP period")
          ->type_name("P")
          ->check(realIn(0, true, 3600, "seconds"))
          ->default_str("20"));
  a.options.push_back(
      app.add_option("--stop-start", f.stopStartS, "T1: the first SIGSTOP, into the window")
          ->type_name("T")
          ->check(realIn(0, false, 3600, "seconds"))
          ->default_str("5"));
}

}  // namespace

void addT1Options(CLI::App& app, T1Args& a) {
  addLoadOptions(app, a);
  addFaultOptions(app, a);
  const std::string group = "Child processes (set by the driver)";
  a.options.push_back(app.add_option("--registry-port", a.config.registryPort,
                                     "T provider: the driver's registry node")
                          ->type_name("PORT")
                          ->check(intIn(1, 65535))
                          ->group(group));
  a.options.push_back(app.add_option("--marker", a.config.marker,
                                     "T0 / T1: a text on every provider's command line (pgrep)")
                          ->type_name("TEXT"));
}

bool isTScenario(std::string_view scenario) {
  const auto parts = splitList(scenario);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != "T0" && parts[i] != "T1") return false;
    if (std::find(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i), parts[i]) !=
        parts.begin() + static_cast<std::ptrdiff_t>(i)) {
      return false;  // each once
    }
  }
  return true;
}

CLI::Validator scenarioCheck() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v == "H1" || v == "H2" || v == "D1" || v == "R1" || isTScenario(v)) return {};
        return fmt::format(
            "\"{}\" (expected: H1, H2, D1, R1, T0, T1 or a comma list of T0 and "
            "T1, each once)",
            v);
      },
      "{H1|H2|D1|R1|T0,T1}");
}

std::string givenT1Flag(const T1Args& args) {
  for (const CLI::Option* o : args.options) {
    if (o->count() > 0) return o->get_name();
  }
  return {};
}

void validateT1(const T1Config& c) {
  const T1Faults& f = c.faults;
  const bool t1 = std::find(c.scenarios.begin(), c.scenarios.end(), "T1") != c.scenarios.end();
  if (t1 && c.providers < 3) {
    throw std::invalid_argument(
        fmt::format("--providers {}: T1 needs at least 3 (its faults are on providers 0, 1 and 2)",
                    c.providers));
  }
  if (f.stopForS > 0 && f.stopForS >= f.stopEveryS) {
    throw std::invalid_argument(
        fmt::format("--stop-for {}: expected less than --stop-every ({}), or 0 (off)", f.stopForS,
                    f.stopEveryS));
  }
  if (c.warmupS * c.rate + c.durationS * c.rate > 1e8) {
    throw std::invalid_argument(
        fmt::format("--rate {}: (warm-up {} s + window {} s) x rate is over 10^8 calls", c.rate,
                    c.warmupS, c.durationS));
  }
}

T1Config t1ConfigOf(T1Args args, std::string_view scenario, double warmupS, std::string role,
                    int procIndex) {
  T1Config c = std::move(args.config);
  c.scenarios = splitList(scenario);
  c.configs = splitList(args.configs);
  c.warmupS = warmupS < 0 ? 5 : warmupS;
  c.role = std::move(role);
  c.procIndex = procIndex;
  if (!c.role.empty() && c.role != "provider") {
    throw std::invalid_argument(fmt::format("--role {}: T0 / T1 children are providers", c.role));
  }
  if (c.role == "provider" && c.registryPort == 0) {
    throw std::invalid_argument("--role provider: needs --registry-port");
  }
  validateT1(c);
  return c;
}

}  // namespace wheelbeat::bench::netbench
