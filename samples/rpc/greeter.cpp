// The greeter's serialization, its urls, and the provider side (see greeter.h).
#include "greeter.h"

#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>

#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <map>
#include <mutex>

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
  std::mutex mutex;                                   // guards heartbeats
  std::map<std::uint64_t, std::uint64_t> heartbeats;  // channel id -> heartbeats it answered

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
    fmt::print(stderr, "greeter: response {} not sent: {}\n", f.id, net::sendResultName(sent));
  }
}

net::ChannelHandler providerHandler(const std::shared_ptr<GreeterProvider::Stats>& stats) {
  net::ChannelHandler h;
  h.onFrame = [stats](net::Channel& ch, const net::FrameView& f) {
    // Another framework's frames could share the port: ours carry our serialization id.
    if (!f.isRequest() || !f.isTwoWay() || f.serialization() != kStringSerialization) return;
    stats->sampleHeartbeats(ch);
    serve(*stats, ch, f);
  };
  h.onClosed = [stats](net::Channel& ch, const net::CloseReason&) { stats->sampleHeartbeats(ch); };
  return h;
}

}  // namespace

GreeterProvider::GreeterProvider(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 net::ServerOptions options, std::string advertiseHost)
    : stats_(std::make_shared<Stats>()), advertiseHost_(std::move(advertiseHost)) {
  stats_->host = advertiseHost_;
  server_ =
      std::make_unique<net::TcpServer>(loop, timer, std::move(options), providerHandler(stats_));
}

GreeterProvider::~GreeterProvider() { stop(); }

std::string GreeterProvider::start(registry::Registry& registry) {
  stats_->port = server_->listen();
  const std::string url = providerUrl({advertiseHost_, stats_->port.load()});
  // Failback: if the registry is unreachable now, the registration is retried on the wheel and
  // re-sent after every registry reconnect (the registry may come back empty).
  registry.registerUrl(url);
  return url;
}

void GreeterProvider::stop() { server_->stop(); }

std::uint64_t GreeterProvider::served() const noexcept { return stats_->served.load(); }

std::uint64_t GreeterProvider::heartbeatsAnswered() const {
  const std::lock_guard lock(stats_->mutex);
  std::uint64_t sum = 0;
  for (const auto& [id, n] : stats_->heartbeats) sum += n;
  return sum;
}

}  // namespace samples::rpc
