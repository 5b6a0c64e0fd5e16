#include "scenario.h"

#include "common/say.h"
#include "table.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

namespace demo {

namespace {
using Seconds = std::chrono::duration<double>;
}  // namespace

Scenario::Scenario(Cluster& cluster, DemoOptions options, wheelbeat::net::ShutdownSignal& shutdown)
    : cluster_(cluster),
      options_(std::move(options)),
      shutdown_(shutdown),
      start_(SteadyClock::now()) {}

double Scenario::sinceStart() const { return Seconds(SteadyClock::now() - start_).count(); }

void Scenario::event(const std::string& text) {
  events_.push_back(fmt::format("t+{:5.1f}s  {}", sinceStart(), text));
  if (options_.plain) {
    samples::info("{}", events_.back());
    std::fflush(stdout);
  }
}

void Scenario::show(bool final) {
  std::string screen = options_.plain || final ? "" : "\x1b[H\x1b[J";
  screen += fmt::format("wheelbeat cluster demo ({} registry), t+{:.1f}s\n\n", options_.registry,
                        sinceStart());
  screen += renderTable(cluster_.nodes());
  if (!options_.plain) {
    screen += "\n";
    const std::size_t first = events_.size() > 12 ? events_.size() - 12 : 0;
    for (std::size_t i = first; i < events_.size(); ++i) screen += events_[i] + "\n";
  }
  fmt::print("{}\n", screen);
  std::fflush(stdout);
}

void Scenario::pumpFor(std::chrono::milliseconds d) {
  const auto end = SteadyClock::now() + d;
  while (SteadyClock::now() < end) {
    if (shutdown_.requested()) throw Interrupted{};
    cluster_.pump(std::chrono::milliseconds(50));
    checkAlive();
    if (!options_.plain && SteadyClock::now() - lastDraw_ >= std::chrono::milliseconds(500)) {
      show(false);
      lastDraw_ = SteadyClock::now();
    }
  }
}

void Scenario::await(const std::string& step, std::vector<Check> checks,
                     std::chrono::nanoseconds bound) {
  const auto t0 = SteadyClock::now();
  std::vector<std::optional<double>> seenAt(checks.size());
  auto pending = [&] { return std::count(seenAt.begin(), seenAt.end(), std::nullopt) > 0; };
  while (pending() && SteadyClock::now() - t0 < bound) {
    pumpFor(std::chrono::milliseconds(50));
    for (std::size_t i = 0; i < checks.size(); ++i) {
      if (seenAt[i] || !checks[i].holds()) continue;
      seenAt[i] = Seconds(SteadyClock::now() - t0).count();
      event(fmt::format("seen after {:.1f}s: {}", *seenAt[i], checks[i].what));
    }
  }
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (!seenAt[i])
      event(fmt::format("NOT seen within {:.0f}s: {}", Seconds(bound).count(), checks[i].what));
    results_.push_back({step, checks[i].what, seenAt[i].has_value(), seenAt[i].value_or(0),
                        Seconds(bound).count()});
  }
  if (options_.plain) show(false);
}

// A node that exits on its own (a crash, a bad configuration) ends the demo at once, with the
// end of its log: waiting for recoveries it can no longer take part in would only hide why.
void Scenario::checkAlive() {
  for (const Node& n : cluster_.nodes()) {
    if (n.life != Life::Exited) continue;
    std::string tail;
    if (std::FILE* f =
            std::fopen(fmt::format("{}/{}.log", cluster_.logDir(), n.name).c_str(), "r")) {
      if (std::fseek(f, -4096, SEEK_END) != 0) std::rewind(f);  // the last 4 KiB
      char buf[4096];
      const std::size_t len = std::fread(buf, 1, sizeof buf, f);
      std::fclose(f);
      tail.assign(buf, len);
    }
    throw std::runtime_error(fmt::format(
        "{} exited by itself with status {}; its log ends with:\n{}", n.name, n.exitStatus, tail));
  }
}

bool Scenario::consumersFresh(SteadyClock::time_point since) {
  for (const Node& n : cluster_.nodes()) {
    if (n.role == "consumer" && n.status.at <= since) return false;
  }
  return true;
}

bool Scenario::everyConsumer(const std::function<bool(const Node&)>& pred) {
  for (const Node& n : cluster_.nodes()) {
    if (n.role == "consumer" && !pred(n)) return false;
  }
  return true;
}

std::string Scenario::port(const std::string& provider) {
  return cluster_.node(provider).status.text("port");
}

bool Scenario::registryLists(const std::string& providerPort, bool present,
                             SteadyClock::time_point since) {
  if (options_.sessionBased()) return true;  // no status lines: the consumers' views decide
  const Node& r = cluster_.node(registryName_);
  const auto known = r.status.list("known");
  const bool listed = std::find(known.begin(), known.end(), providerPort) != known.end();
  return r.status.at > since && listed == present;
}

void Scenario::run() {
  // Between steps the cluster runs undisturbed for a while: the table shows the steady state.
  constexpr std::chrono::seconds kSettle{3};
  startCluster();
  warmUp();
  pumpFor(kSettle);
  killProvider();
  pumpFor(kSettle);
  freezeProvider();
  pumpFor(kSettle);
  restartRegistry();
  pumpFor(kSettle);
  rollingRestart();
  pumpFor(kSettle);
  event("scenario complete");
}

}  // namespace demo
