// The greeter's urls and the provider side (see greeter.h): a dubbo::Provider serving sayHello.
#include "greeter.h"

#include <wheelbeat/net/channel.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <map>
#include <mutex>
#include <stdexcept>

namespace dubbo = wheelbeat::dubbo;
namespace hessian = wheelbeat::hessian;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;

namespace samples::rpc {

std::optional<net::Endpoint> endpointOfUrl(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const std::string_view rest = url.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::uint16_t port = 0;
  const std::string_view digits = authority.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0) return std::nullopt;
  std::string_view host = authority.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // "[::1]" -> "::1"
  }
  return net::Endpoint{std::string(host), port};
}

struct GreeterProvider::Stats {
  std::string host;
  std::atomic<std::uint16_t> port{0};
  std::atomic<std::uint64_t> served{0};
  std::atomic<std::int64_t> serviceTimeNs{0};  // how long each call "works" before it answers
  wheelbeat::core::HashedWheelTimer* timer = nullptr;
  std::mutex mutex;                                   // guards heartbeats
  std::map<std::uint64_t, std::uint64_t> heartbeats;  // channel id -> heartbeats it answered

  void sampleHeartbeats(const net::Channel& ch) {
    const std::lock_guard lock(mutex);
    heartbeats[ch.id()] = ch.heartbeatsAnswered();
  }
};

namespace {

// sayHello(name): answered now, or after the service time (a wheel timeout; the Reply sends
// nothing if the connection closed meanwhile, and the consumer's call fails over).
void sayHello(const std::shared_ptr<GreeterProvider::Stats>& stats, const dubbo::Request& request,
              dubbo::Reply reply) {
  const hessian::Value& name = request.args[0];
  if (name.type() != hessian::Type::String) {  // Java's null String
    reply.exception("java.lang.IllegalArgumentException", "sayHello: name is null");
    return;
  }
  std::string greeting =
      fmt::format("Hello, {}! ({}:{})", name.asString(), stats->host, stats->port.load());
  ++stats->served;
  const std::chrono::nanoseconds delay(stats->serviceTimeNs.load());
  if (delay <= std::chrono::nanoseconds(0)) {
    reply.value(hessian::Value::string(std::move(greeting)));
    return;
  }
  auto later = std::make_shared<dubbo::Reply>(std::move(reply));
  stats->timer->newTimeout(
      [later, greeting = std::move(greeting)] { later->value(hessian::Value::string(greeting)); },
      delay);
}

// The Provider's callbacks, with the heartbeats each connection answered sampled on its traffic.
net::ChannelHandler providerHandler(dubbo::Provider& provider,
                                    const std::shared_ptr<GreeterProvider::Stats>& stats) {
  net::ChannelHandler h = provider.channelHandler();
  h.onFrame = [stats, onFrame = std::move(h.onFrame)](net::Channel& ch, const net::FrameView& f) {
    stats->sampleHeartbeats(ch);
    onFrame(ch, f);
  };
  h.onClosed = [stats, onClosed = std::move(h.onClosed)](net::Channel& ch,
                                                         const net::CloseReason& why) {
    stats->sampleHeartbeats(ch);
    onClosed(ch, why);
  };
  return h;
}

}  // namespace

GreeterProvider::GreeterProvider(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 net::ServerOptions options, std::string advertiseHost)
    : stats_(std::make_shared<Stats>()),
      provider_(std::make_unique<dubbo::Provider>()),
      advertiseHost_(std::move(advertiseHost)) {
  stats_->host = advertiseHost_;
  stats_->timer = &timer;
  heartbeat_ = options.heartbeat.interval;
  provider_->addAsync({.interface = std::string(kGreeterService)}, std::string(kSayHello),
                      std::string(kSayHelloDescriptor),
                      [stats = stats_](const dubbo::Request& request, dubbo::Reply reply) {
                        sayHello(stats, request, std::move(reply));
                      });
  server_ = std::make_unique<net::TcpServer>(loop, timer, std::move(options),
                                             providerHandler(*provider_, stats_));
}

GreeterProvider::~GreeterProvider() { stop(); }

void GreeterProvider::setServiceTime(std::chrono::nanoseconds d) {
  if (d < std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("GreeterProvider: serviceTime = {} (expected: >= 0)", d));
  }
  stats_->serviceTimeNs = d.count();
}

std::string GreeterProvider::start(registry::Registry& registry) {
  stats_->port = server_->listen();
  registry::ServiceOptions service;
  service.interface = std::string(kGreeterService);
  url_ = provider_->providerUrl(service, {advertiseHost_, stats_->port.load()}, heartbeat_);
  // Failback: if the registry is unreachable now, the registration is retried on the wheel and
  // re-sent after every registry reconnect (the registry may come back empty).
  registry.registerUrl(url_);
  return url_;
}

void GreeterProvider::stop() { server_->stop(); }

net::ShutdownReport GreeterProvider::shutdown(registry::Registry& registry,
                                              std::chrono::nanoseconds grace) {
  if (url_.empty()) {
    server_->stop();
    return {};
  }
  return registry::shutdownProvider(registry, {url_}, *server_, grace);
}

std::uint64_t GreeterProvider::served() const noexcept { return stats_->served.load(); }

std::uint64_t GreeterProvider::heartbeatsAnswered() const {
  const std::lock_guard lock(stats_->mutex);
  std::uint64_t sum = 0;
  for (const auto& [id, n] : stats_->heartbeats) sum += n;
  return sum;
}

}  // namespace samples::rpc
