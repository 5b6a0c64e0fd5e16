// Support for the cluster client's loopback tests: an in-process RegistryServer, providers as
// real TcpServers that answer as each case needs (echo, busy, an application's error, late,
// silent, busy a few times then echo), and a client on a consumer's Registry that sees them all.
// Each provider counts the requests it received, so the tests can match the client's figures.
#pragma once

#include "../net/support.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>
#include <wheelbeat/tasks/small_rng.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace wbcluster {

using namespace wbnet;
using namespace wheelbeat::registry;
using wheelbeat::cluster::CallOptions;
using wheelbeat::cluster::CallOutcome;
using wheelbeat::cluster::ClusterOptions;
using wheelbeat::cluster::ServiceClient;
using wheelbeat::tasks::cluster::BalancerKind;
using wheelbeat::tasks::cluster::Mode;

inline const std::string kService = "org.example.Echo";

// Random: each request, drawn from `rng` (loop thread): echo (half), busy, an application's
// error, late by 10-80 ms, silent, or the connection closed.
enum class Behaviour { Echo, Busy, AppError, Late, Silent, BusyThenEcho, Random };

// A provider: a TcpServer that answers every two-way request as its behaviour says.
struct Provider {
  Provider(Env& env, Behaviour b) : behaviour(b), timer(env.timer), loop(env.loop) {
    server = std::make_unique<TcpServer>(
        env.loop, env.timer, serverOptions(),
        ChannelHandler{.onFrame = [this](Channel& ch, const FrameView& f) { answer(ch, f); },
                       .onClosed =
                           [this](Channel& ch, const CloseReason&) {
                             const auto it = open.find(&ch);
                             if (it == open.end()) return;
                             *it->second = false;
                             open.erase(it);
                           }});
    port = server->listen();
  }
  // Answers request `f` on `ch` after `delay`, from the wheel through the loop, unless the
  // connection closed meanwhile (the loop is never blocked; a closed channel is never touched).
  void answerLater(Channel& ch, const FrameView& f, std::string body,
                   std::chrono::nanoseconds delay) {
    auto& flag = open[&ch];
    if (!flag) flag = std::make_shared<bool>(true);
    (void)timer.newTimeout(
        [loop = &loop, ch = &ch, alive = flag, serialization = f.serialization(), id = f.id,
         body = std::move(body)] {
          (void)loop->post([ch, alive, serialization, id, body] {
            if (*alive) (void)ch->send(serialization, kStatusOk, id, body);
          });
        },
        delay);
  }
  void answer(Channel& ch, const FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay()) return;
    ++received;
    const std::string body = std::string(f.body);
    switch (behaviour) {
      case Behaviour::Echo: (void)ch.reply(f, body); break;
      case Behaviour::Busy: (void)ch.reply(f, "busy", 100); break;
      case Behaviour::BusyThenEcho:  // busy for the first `busyFor` requests
        if (received <= busyFor) {
          (void)ch.reply(f, "busy", 100);
        } else {
          (void)ch.reply(f, body);
        }
        break;
      case Behaviour::AppError: (void)ch.reply(f, "no such greeting", 70); break;
      case Behaviour::Silent: break;
      case Behaviour::Random: random(ch, f, body); break;
      case Behaviour::Late: answerLater(ch, f, body, 300ms); break;
    }
  }
  void random(Channel& ch, const FrameView& f, const std::string& body) {
    const std::uint64_t draw = rng() % 10;
    if (draw < 5) {
      (void)ch.reply(f, body);
    } else if (draw == 5) {
      (void)ch.reply(f, "busy", 100);
    } else if (draw == 6) {
      (void)ch.reply(f, "no such greeting", 70);
    } else if (draw == 7) {
      answerLater(ch, f, body, std::chrono::milliseconds(10 + rng() % 70));
    } else if (draw == 9) {
      ch.close("random close");
    }  // 8: silent
  }
  std::string url() const {
    return fmt::format("dubbo://127.0.0.1:{}/{}?weight=100", port, kService);
  }

  Behaviour behaviour;
  HashedWheelTimer& timer;
  std::unique_ptr<TcpServer> server;
  std::uint16_t port = 0;
  std::atomic<int> received{0};
  int busyFor = 1;                    // BusyThenEcho
  wheelbeat::tasks::SmallRng rng{1};  // Random (loop thread)
  EventLoop& loop;
  // Channels with an answer still due, and whether each is still open (loop thread).
  std::map<Channel*, std::shared_ptr<bool>> open;
};

// Outcomes collected from the loop thread.
struct Outcomes {
  std::mutex mutex;
  std::vector<CallOutcome> all;
  wheelbeat::cluster::CallDone done() {
    return [this](const CallOutcome& o) {
      std::lock_guard lock(mutex);
      all.push_back(o);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return all.size();
  }
};

inline ClusterOptions fastCluster(Mode mode = Mode::Failover) {
  ClusterOptions o;
  o.mode = mode;
  o.balancer = BalancerKind::RoundRobin;
  o.directory.client = clientOptions(1);
  o.directory.minHeartbeat = 50ms;
  o.maxExtraPercent = 100;
  o.budget.minRetriesPerSecond = 1000;
  return o;
}

// A registry node, the providers registered in it, and a client that sees all of them connected.
struct Cluster {
  Cluster(Env& e, std::vector<Behaviour> behaviours, ClusterOptions options) : env(e) {
    node = std::make_unique<RegistryServer>(env.loop, env.timer, serverOptions());
    const std::uint16_t port = node->start();
    for (const Behaviour b : behaviours) providers.push_back(std::make_unique<Provider>(env, b));
    RegistrySetup setup;
    setup.registry.address = Endpoint{"127.0.0.1", port};
    setup.client = clientOptions(port);
    setup.failback = fastFailback();
    providerRegistry = makeRegistry(env.loop, env.timer, setup);
    consumerRegistry = makeRegistry(env.loop, env.timer, setup);
    providerRegistry->start();
    consumerRegistry->start();
    for (const auto& p : providers) providerRegistry->registerUrl(p->url());
    client = std::make_unique<ServiceClient>(env.loop, env.timer, *consumerRegistry, kService,
                                             std::move(options));
    client->start();
    REQUIRE(waitFor([&] { return client->available() == providers.size(); }, 5s));
  }
  ~Cluster() {
    client->close();
    for (auto& p : providers) p->server->stop();
    providerRegistry->close();
    consumerRegistry->close();
    node->stop();
  }
  int received(std::size_t i) const { return providers[i]->received.load(); }

  Env& env;
  std::unique_ptr<RegistryServer> node;
  std::vector<std::unique_ptr<Provider>> providers;
  std::unique_ptr<Registry> providerRegistry;
  std::unique_ptr<Registry> consumerRegistry;
  std::unique_ptr<ServiceClient> client;
};

}  // namespace wbcluster
