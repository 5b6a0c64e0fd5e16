// T0 / T1's provider role (t1.h): a TcpServer that echoes each two-way request's body, with its
// faults (a late answer every K-th request, a busy error on a fixed share), registered in the
// driver's registry node as a Dubbo provider.
//
// Threads: the main thread reads the driver's commands from stdin and reads the counters through
// EventLoop::call(); the handler, the late answers and the counters live on the loop thread. The
// wheel only hands a late answer to the loop (post): it never touches a channel.
#include "t1.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry.h>

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <unordered_map>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kBusyText = "thread pool exhausted";

// Request i (from 0) fails iff floor((i + 1) f) > floor(i f): exactly floor(n f) of the first n
// fail, spread as evenly as the fraction allows (0.3: 3 in every 10).
bool failsAt(std::int64_t i, double f) {
  if (f <= 0) return false;
  return std::floor(static_cast<double>(i + 1) * f) > std::floor(static_cast<double>(i) * f);
}

class T1Provider {
public:
  explicit T1Provider(const T1Config& c)
      : config_(c),
        // A late answer is a timeout on this wheel: 1 ms ticks keep it within a millisecond.
        timer_(core::WheelOptions{.tickDuration = c.faults.slowEvery > 0 ? 1ms : 10ms}),
        loop_("t1-provider") {
    timer_.start();
    net::ServerOptions o;
    o.listen = net::Endpoint{"127.0.0.1", 0};
    server_ = std::make_unique<net::TcpServer>(loop_, timer_, o, handler());
  }

  // Listens, registers in the driver's node; returns the port.
  std::uint16_t start() {
    const std::uint16_t port = server_->listen();
    registry::RegistrySetup setup;
    setup.registry.address =
        net::Endpoint{"127.0.0.1", static_cast<std::uint16_t>(config_.registryPort)};
    registry_ = registry::makeRegistry(loop_, timer_, setup);
    registry_->start();
    registry_->registerUrl(fmt::format("dubbo://127.0.0.1:{}/{}?weight=100", port, kT1Service));
    return port;
  }

  Kv stats() {
    Kv s = selfUsage();
    const bool ran = loop_.call([&] {
      s["received"] = received_;
      s["measured"] = measured_;
      s["errors"] = errors_;
      s["slow"] = slow_;
    });
    if (!ran) throw std::runtime_error("t1 provider: the loop is stopped");
    return s;
  }

  // Unregisters (the registry closes), closes every connection, stops the wheel and the loop.
  bool shutdown() {
    registry_->close();
    server_->stop();
    timer_.stop();
    return loop_.stop() == 0;
  }

private:
  net::ChannelHandler handler() {
    return net::ChannelHandler{
        .onConnected = [this](net::Channel& ch) { open_[ch.id()] = &ch; },
        .onFrame = [this](net::Channel& ch, const net::FrameView& f) { onRequest(ch, f); },
        .onClosed = [this](net::Channel& ch, const net::CloseReason&) { open_.erase(ch.id()); },
    };
  }

  // Loop thread.
  void onRequest(net::Channel& ch, const net::FrameView& f) {
    if (!f.isRequest() || !f.isTwoWay() || f.isEvent()) return;
    const std::int64_t i = received_++;
    if (!f.body.empty() && f.body.front() == kT1MeasuredMark) ++measured_;
    if (failsAt(i, config_.faults.errorFraction)) {
      ++errors_;
      (void)ch.reply(f, kBusyText, kT1BusyStatus);
      return;
    }
    const int every = config_.faults.slowEvery;
    if (every > 0 && (i + 1) % every == 0) {
      ++slow_;
      answerLater(ch, f);
      return;
    }
    (void)ch.reply(f, f.body);
  }

  // The answer leaves slowMs later: the wheel posts it to the loop, which sends it if the
  // connection is still open (a channel is used on the loop only while listed in open_).
  void answerLater(net::Channel& ch, const net::FrameView& f) {
    const std::uint64_t channel = ch.id();
    const std::uint8_t serialization = f.serialization();
    const std::uint64_t id = f.id;
    auto body = std::make_shared<const std::string>(f.body);
    (void)timer_.newTimeout(
        [this, channel, serialization, id, body] {
          (void)loop_.post([this, channel, serialization, id, body] {
            const auto it = open_.find(channel);
            if (it != open_.end()) (void)it->second->send(serialization, net::kStatusOk, id, *body);
          });
        },
        std::chrono::milliseconds(config_.faults.slowMs));
  }

  const T1Config& config_;
  core::HashedWheelTimer timer_;
  net::EventLoop loop_;
  std::unique_ptr<net::TcpServer> server_;
  std::unique_ptr<registry::Registry> registry_;
  std::unordered_map<std::uint64_t, net::Channel*> open_;  // loop thread
  std::int64_t received_ = 0;                              // loop thread, as the three below
  std::int64_t measured_ = 0;
  std::int64_t errors_ = 0;
  std::int64_t slow_ = 0;
};

}  // namespace

int t1ProviderMain(const T1Config& config) {
  T1Provider provider(config);
  Kv ready = selfUsage();
  ready["port"] = provider.start();
  reply(formatKv("ready", ready));
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command != "stats") throw std::runtime_error(fmt::format("unknown command '{}'", command));
    reply(formatKv("stats", provider.stats()));
  }
  return provider.shutdown() ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
