// The steps of the demo's script (see scenario.h) and what each expects to see.
#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace demo {

namespace {

constexpr std::chrono::seconds kMargin{10};  // loaded 2-core machine, ASan / TSan builds
constexpr int kProviders = 3;
constexpr int kConsumers = 2;

std::optional<LinkView> linkTo(const NodeStatus& s, const std::string& port) {
  for (const LinkView& l : linksOf(s)) {
    if (l.port == port) return l;
  }
  return std::nullopt;
}

bool lists(const NodeStatus& s, const std::string& port) {
  const auto known = s.list("known");
  return std::find(known.begin(), known.end(), port) != known.end();
}

bool usable(const NodeStatus& s, const std::string& port) {
  const auto l = linkTo(s, port);
  return l && l->usable;
}

// Calls answered by the providers other than `port`, as a consumer last reported them.
std::uint64_t okElsewhere(const NodeStatus& s, const std::string& port) {
  std::uint64_t sum = 0;
  for (const LinkView& l : linksOf(s)) sum += l.port == port ? 0 : l.ok;
  return sum;
}

}  // namespace

std::chrono::nanoseconds Scenario::dropBound() const {
  if (options_.sessionBased()) return options_.session + options_.session / 2 + options_.heartbeat;
  return options_.closeTimeout + options_.closeTimeout / 3 + options_.heartbeat;
}

std::vector<std::string> Scenario::argvFor(const std::string& role, const std::string& name) const {
  return {options_.nodeBinary,
          "--role",
          role,
          "--name",
          name,
          "--config",
          options_.configPath,
          "--registry-port",
          std::to_string(registryPort_),
          "--registry-kind",
          options_.registry};
}

// A standalone ZooKeeper from Debian's package (java + /usr/share/java/zookeeper.jar), its
// config and data in options_.zkDir; tick 200 ms and sessions of 2 .. 10 s, so the cluster's
// session (6 s) is granted as asked.
void Scenario::startZookeeper() {
  namespace fs = std::filesystem;
  const fs::path dir = options_.zkDir;
  fs::create_directories(dir / "data");
  {
    std::ofstream cfg(dir / "zoo.cfg", std::ios::trunc);
    cfg << "tickTime=200\nminSessionTimeout=2000\nmaxSessionTimeout=10000\n"
        << "dataDir=" << (dir / "data").string() << "\nclientPort=" << registryPort_
        << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
        << "4lw.commands.whitelist=srvr\n";
  }
  const std::string slf4j = "/usr/share/java/slf4j-simple.jar";
  const std::string classpath =
      "/usr/share/java/zookeeper.jar" + (fs::exists(slf4j) ? ":" + slf4j : std::string());
  Node& zk = cluster_.start(
      "zookeeper", "zookeeper",
      {"java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath,
       "org.apache.zookeeper.server.ZooKeeperServerMain", (dir / "zoo.cfg").string()},
      false);
  zk.cleanExit = 143;  // the JVM's exit on SIGTERM
  awaitZookeeper();
}

// The JVM takes a second or two: the others dial it only once it takes sessions.
void Scenario::awaitZookeeper() {
  const auto end = SteadyClock::now() + std::chrono::seconds(30);
  while (!zookeeperServing(registryPort_)) {
    if (SteadyClock::now() >= end) {
      throw std::runtime_error(
          fmt::format("ZooKeeper did not serve on port {} within 30 s (see {}/zookeeper.log)",
                      registryPort_, cluster_.logDir()));
    }
    pumpFor(std::chrono::milliseconds(100));
  }
}

void Scenario::startCluster() {
  registryPort_ = freeLoopbackPort();
  registryName_ = options_.sessionBased() ? options_.registry : "registry";
  if (options_.registry == "zookeeper") {
    startZookeeper();
  } else if (options_.registry == "redis") {
    cluster_.start("redis", "redis",
                   {"redis-server", "--port", std::to_string(registryPort_), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no"},
                   false);
  } else {
    cluster_.start("registry", "registry", argvFor("registry", "registry"));
  }
  event(fmt::format("{} started on 127.0.0.1:{}", registryName_, registryPort_));
  pumpFor(std::chrono::milliseconds(500));  // let it listen before the others dial it
  for (int i = 1; i <= kProviders; ++i) {
    const std::string name = fmt::format("provider-{}", i);
    cluster_.start(name, "provider", argvFor("provider", name));
  }
  for (int i = 1; i <= kConsumers; ++i) {
    const std::string name = fmt::format("consumer-{}", i);
    cluster_.start(name, "consumer", argvFor("consumer", name));
  }
  event(fmt::format("{} providers and {} consumers started; logs in {}", kProviders, kConsumers,
                    cluster_.logDir()));
}

// Every consumer calls every provider successfully: the cluster is healthy.
void Scenario::warmUp() {
  const auto since = SteadyClock::now();
  await("start",
        {{"every consumer calls all 3 providers",
          [this, since] {
            if (!consumersFresh(since)) return false;
            return everyConsumer([this](const Node& n) {
              for (int i = 1; i <= kProviders; ++i) {
                const auto l = linkTo(n.status, port(fmt::format("provider-{}", i)));
                if (!l || !l->usable || l->ok == 0) return false;
              }
              return true;
            });
          }}},
        std::chrono::seconds(20) + kMargin);
}

void Scenario::killProvider() {
  const std::string p1 = port("provider-1");
  std::map<std::string, std::uint64_t> before;
  for (const Node& n : cluster_.nodes()) before[n.name] = okElsewhere(n.status, p1);
  cluster_.kill("provider-1");
  const auto t = SteadyClock::now();
  event(fmt::format("kill -9 provider-1 (port {})", p1));
  std::vector<Check> checks{{"consumers stopped calling provider-1",
                             [=, this] {
                               return consumersFresh(t) && everyConsumer([&](const Node& n) {
                                        return !usable(n.status, p1);
                                      });
                             }},
                            {"consumers' calls moved to provider-2/3", [=, this] {
                               return consumersFresh(t) && everyConsumer([&](const Node& n) {
                                        return okElsewhere(n.status, p1) >= before.at(n.name) + 3;
                                      });
                             }}};
  // The embedded registry sees the connection end at once; Redis lets the registration expire.
  checks.push_back({options_.sessionBased()
                        ? "registration of provider-1 expired, consumers were told"
                        : "registry dropped provider-1, consumers were told",
                    [=, this] {
                      return registryLists(p1, false, t) && consumersFresh(t) &&
                             everyConsumer([&](const Node& n) { return !lists(n.status, p1); });
                    }});
  await("kill provider-1", std::move(checks),
        (options_.sessionBased() ? dropBound() : options_.idleTimeout) + kMargin);
}

void Scenario::freezeProvider() {
  const std::string p2 = port("provider-2");
  std::map<std::string, std::uint64_t> halfOpensBefore;  // only provider-2 goes silent now
  for (const Node& n : cluster_.nodes()) halfOpensBefore[n.name] = n.status.number("halfopens");
  cluster_.freeze("provider-2");
  const auto t = SteadyClock::now();
  event(fmt::format("SIGSTOP provider-2 (port {}): alive for the kernel, silent", p2));
  std::vector<Check> checks{
      {"consumers' heartbeats found the half-open link (reconnect on read idle)",
       [=, this] {
         return everyConsumer([&](const Node& n) {
           return n.status.number("halfopens") > halfOpensBefore.at(n.name);
         });
       }},
      {"consumers stopped using provider-2",
       [=, this] {
         return consumersFresh(t) &&
                everyConsumer([&](const Node& n) { return !usable(n.status, p2); });
       }},
      {options_.sessionBased() ? "registration of provider-2 expired, consumers were told"
                               : "registry dropped provider-2 (close-idle), consumers were told",
       [=, this] {
         return registryLists(p2, false, t) && consumersFresh(t) &&
                everyConsumer([&](const Node& n) { return !lists(n.status, p2); });
       }}};
  await("freeze provider-2", std::move(checks), dropBound() + kMargin);
  thawProvider(p2);
}

// SIGCONT: the provider's registry connection was closed while it slept; it reconnects and its
// failback re-registers it; consumers connect again and, once it answers, call it again.
void Scenario::thawProvider(const std::string& p2) {
  pumpFor(std::chrono::seconds(1));
  std::map<std::string, std::uint64_t> okBefore;
  for (const Node& n : cluster_.nodes()) {
    const auto l = linkTo(n.status, p2);
    okBefore[n.name] = l ? l->ok : 0;
  }
  cluster_.thaw("provider-2");
  const auto t = SteadyClock::now();
  event("SIGCONT provider-2");
  std::vector<Check> checks{{"provider-2 re-registered and consumers call it again", [=, this] {
                               return registryLists(p2, true, t) && consumersFresh(t) &&
                                      everyConsumer([&](const Node& n) {
                                        const auto l = linkTo(n.status, p2);
                                        return lists(n.status, p2) && l && l->usable && l->ok > 0 &&
                                               l->ok != okBefore.at(n.name);
                                      });
                             }}};
  // Redis: the thawed provider's renewal (every session / 2) restores its registration.
  const auto rejoin = options_.reconnectMax + options_.registryRetry + options_.closeTimeout +
                      (options_.sessionBased() ? options_.session : std::chrono::nanoseconds(0));
  await("thaw provider-2", std::move(checks), rejoin + kMargin);
}

// The registry restarts empty on the same port: every registration comes back through the
// providers' failback (recover() after their reconnect), every subscription through the
// consumers'.
void Scenario::restartRegistry() {
  const std::string p2 = port("provider-2");
  const std::string p3 = port("provider-3");
  cluster_.kill(registryName_);
  event(fmt::format("kill -9 {}", registryName_));
  pumpFor(std::chrono::seconds(2));  // down for a while: retries pile up (column "pending")
  std::map<std::string, std::uint64_t> notifiesBefore;
  for (const Node& n : cluster_.nodes()) notifiesBefore[n.name] = n.status.number("notifies");
  if (options_.registry == "zookeeper") {  // empty, as the others restart: sessions and nodes gone
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(options_.zkDir) / "data", ec);
  }
  cluster_.restart(registryName_);
  const auto t = SteadyClock::now();
  event(fmt::format("{} restarted on the same port {}", registryName_, registryPort_));
  std::vector<Check> checks;
  if (!options_.sessionBased()) {
    checks.push_back({"providers re-registered by failback", [=, this] {
                        return registryLists(p2, true, t) && registryLists(p3, true, t);
                      }});
  }
  checks.push_back({"consumers see provider-2 and provider-3 again and call them", [=, this] {
                      // A list sent by the new registry (re-subscribed by failback), not the
                      // last one of the old registry, which consumers keep through an outage.
                      return consumersFresh(t) && everyConsumer([&](const Node& n) {
                               return n.status.number("notifies") > notifiesBefore.at(n.name) &&
                                      lists(n.status, p2) && lists(n.status, p3) &&
                                      usable(n.status, p2) && usable(n.status, p3);
                             });
                    }});
  // ZooKeeper: a client finds its session gone only once it has tried for a session timeout.
  const auto back =
      options_.reconnectMax + options_.registryRetry + options_.heartbeat +
      (options_.registry == "zookeeper" ? options_.session : std::chrono::nanoseconds(0));
  await("restart registry", std::move(checks), back + kMargin);
}

// A rolling restart of provider-3: SIGTERM, and the provider leaves in Dubbo's order
// (unregister, READONLY to every consumer, answer what is in flight, close, exit 0); then it is
// started again (a new port) and consumers call it. Not one consumer call may fail meanwhile.
void Scenario::rollingRestart() {
  const std::string p3 = port("provider-3");
  std::map<std::string, std::uint64_t> failedBefore;
  for (const Node& n : cluster_.nodes()) {
    if (n.role == "consumer") failedBefore[n.name] = n.status.number("fail");
  }
  cluster_.terminate("provider-3");
  event(fmt::format("SIGTERM provider-3 (port {}): graceful shutdown", p3));
  await(
      "rolling restart",
      {{"provider-3 drained and exited 0",
        [this] {
          const Node& n = cluster_.node("provider-3");
          return n.pid <= 0 && n.exitStatus == 0;
        }},
       {"consumers stopped calling provider-3",
        [=, this] { return everyConsumer([&](const Node& n) { return !usable(n.status, p3); }); }}},
      options_.shutdownGrace + kMargin);
  const NodeStatus& last = cluster_.node("provider-3").status;  // its "state=stopped" line
  event(fmt::format(
      "provider-3 stopped: READONLY sent on {} link(s), {} call(s) in flight, "
      "{} abandoned, drained in {} ms",
      last.text("notified"), last.text("inflight"), last.text("abandoned"), last.text("drain_ms")));
  cluster_.restart("provider-3");
  const auto t = SteadyClock::now();
  event("provider-3 started again");
  await("rolling restart",
        {{"provider-3 is back and every consumer calls it",
          [=, this] {
            const Node& p = cluster_.node("provider-3");
            const std::string now = port("provider-3");
            return p.status.at > t && !now.empty() && consumersFresh(t) &&
                   everyConsumer([&](const Node& n) {
                     const auto l = linkTo(n.status, now);
                     return l && l->usable && l->ok > 0;
                   });
          }}},
        std::chrono::seconds(10) + kMargin);
  // Monotonic counts: equal now means no call failed from the SIGTERM to here.
  await("rolling restart",
        {{"0 failed calls from SIGTERM to rejoin",
          [=, this] {
            return everyConsumer(
                [&](const Node& n) { return n.status.number("fail") == failedBefore.at(n.name); });
          }}},
        std::chrono::seconds(1));
}

}  // namespace demo
