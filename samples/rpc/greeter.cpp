// The greeter's serialization, its urls, and the provider side (see greeter.h).
#include "greeter.h"

#include "common/say.h"

#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <map>
#include <mutex>
#include <stdexcept>

namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;

namespace samples::rpc {

namespace {
constexpr std::size_t kLengthBytes = 4;
constexpr std::uint8_t kStatusBadRequest = 40;  // Dubbo's BAD_REQUEST
}  // namespace

std::string encodeString(std::string_view text) {
  std::string out;
  out.reserve(kLengthBytes + text.size());
  const auto n = static_cast<std::uint32_t>(text.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(text);
  return out;
}

std::optional<std::string> decodeString(std::string_view body) {
  if (body.size() < kLengthBytes) return std::nullopt;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i) n = (n << 8) | static_cast<std::uint8_t>(body[i]);
  if (n != body.size() - kLengthBytes) return std::nullopt;  // one string, nothing after it
  return std::string(body.substr(kLengthBytes));
}

std::string providerUrl(const net::Endpoint& endpoint) {
  return fmt::format("wheelbeat://{}:{}/{}", endpoint.host, endpoint.port, kGreeterService);
}

std::optional<net::Endpoint> endpointOfUrl(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const std::string_view rest = url.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find('/'));
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
  net::EventLoop* loop = nullptr;
  wheelbeat::core::HashedWheelTimer* timer = nullptr;
  std::mutex mutex;                                   // guards heartbeats and open
  std::map<std::uint64_t, std::uint64_t> heartbeats;  // channel id -> heartbeats it answered
  std::map<std::uint64_t, net::Channel*> open;        // channel id -> channel (loop: onClosed)

  void sampleHeartbeats(const net::Channel& ch) {
    const std::lock_guard lock(mutex);
    heartbeats[ch.id()] = ch.heartbeatsAnswered();
  }
};

namespace {

// The service itself: one request in, one response out, on the loop thread.
void serve(GreeterProvider::Stats& stats, net::Channel& ch, const net::FrameView& f) {
  const std::optional<std::string> name = decodeString(f.body);
  net::SendResult sent = net::SendResult::Queued;
  if (!name) {
    sent = ch.send(kStringSerialization, kStatusBadRequest, f.id,
                   encodeString(fmt::format("malformed body of {} bytes", f.body.size())));
  } else {
    const std::string greeting =
        fmt::format("Hello, {}! ({}:{})", *name, stats.host, stats.port.load());
    sent = ch.send(kStringSerialization, net::kStatusOk, f.id, encodeString(greeting));
    ++stats.served;
  }
  if (sent != net::SendResult::Queued) {
    // The consumer's request times out and its failback retries elsewhere: nothing else to do.
    samples::warn("greeter: response {} not sent: {}", f.id, net::sendResultName(sent));
  }
}

// With a service time: the answer is computed after that delay (the wheel), then sent on the
// loop, if the connection is still open (a channel is only used on the loop while listed).
void serveLater(const std::shared_ptr<GreeterProvider::Stats>& stats, net::Channel& ch,
                const net::FrameView& f, std::chrono::nanoseconds delay) {
  const std::uint64_t channelId = ch.id();
  net::FrameView copy = f;
  auto body = std::make_shared<std::string>(f.body);
  copy.body = {};
  std::weak_ptr<GreeterProvider::Stats> weak = stats;
  stats->timer->newTimeout(
      [weak, channelId, copy, body] {
        const auto s = weak.lock();
        if (!s) return;
        s->loop->post([weak, channelId, copy, body]() mutable {
          const auto st = weak.lock();
          if (!st) return;
          net::Channel* channel = nullptr;
          {
            const std::lock_guard lock(st->mutex);
            const auto it = st->open.find(channelId);
            if (it != st->open.end()) channel = it->second;
          }
          if (channel == nullptr) return;  // closed meanwhile: the consumer's call fails over
          copy.body = *body;
          serve(*st, *channel, copy);
        });
      },
      delay);
}

net::ChannelHandler providerHandler(const std::shared_ptr<GreeterProvider::Stats>& stats) {
  net::ChannelHandler h;
  h.onConnected = [stats](net::Channel& ch) {
    const std::lock_guard lock(stats->mutex);
    stats->open[ch.id()] = &ch;
  };
  h.onFrame = [stats](net::Channel& ch, const net::FrameView& f) {
    // Another framework's frames could share the port: ours carry our serialization id.
    if (!f.isRequest() || !f.isTwoWay() || f.serialization() != kStringSerialization) return;
    stats->sampleHeartbeats(ch);
    const std::chrono::nanoseconds delay(stats->serviceTimeNs.load());
    if (delay > std::chrono::nanoseconds(0)) {
      serveLater(stats, ch, f, delay);
    } else {
      serve(*stats, ch, f);
    }
  };
  h.onClosed = [stats](net::Channel& ch, const net::CloseReason&) {
    stats->sampleHeartbeats(ch);
    const std::lock_guard lock(stats->mutex);
    stats->open.erase(ch.id());
  };
  return h;
}

}  // namespace

GreeterProvider::GreeterProvider(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 net::ServerOptions options, std::string advertiseHost)
    : stats_(std::make_shared<Stats>()), advertiseHost_(std::move(advertiseHost)) {
  stats_->host = advertiseHost_;
  stats_->loop = &loop;
  stats_->timer = &timer;
  server_ =
      std::make_unique<net::TcpServer>(loop, timer, std::move(options), providerHandler(stats_));
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
  url_ = providerUrl({advertiseHost_, stats_->port.load()});
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
