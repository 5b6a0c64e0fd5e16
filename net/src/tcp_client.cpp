#include "address.h"
#include "client_channel.h"

#include <wheelbeat/net/tcp_client.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {

std::string_view clientStateName(ClientState state) noexcept {
  switch (state) {
    case ClientState::Disconnected: return "disconnected";
    case ClientState::Connecting: return "connecting";
    case ClientState::Connected: return "connected";
    case ClientState::ReadOnly: return "read-only";
    case ClientState::Closed: return "closed";
  }
  return "unknown";
}

// The same words as clientStateName(): one vocabulary in logs, labels and callbacks.
std::string_view connectivityName(Connectivity c) noexcept {
  switch (c) {
    case Connectivity::Idle: return "idle";
    case Connectivity::Connecting: return clientStateName(ClientState::Connecting);
    case Connectivity::Ready: return clientStateName(ClientState::Connected);
    case Connectivity::TransientFailure: return clientStateName(ClientState::Disconnected);
    case Connectivity::ReadOnly: return clientStateName(ClientState::ReadOnly);
    case Connectivity::Shutdown: return clientStateName(ClientState::Closed);
  }
  return "unknown";
}

// TcpClient

TcpClient::TcpClient(EventLoop& loop, core::HashedWheelTimer& timer, ClientOptions options,
                     ChannelHandler handler, StateCallback onStateChange)
    : loop_(loop), listener_(options.taskListener), metrics_(options.taskMetrics) {
  validate(options, timer.tickDuration());
  build(timer, std::move(options), std::move(handler), std::move(onStateChange));
}

namespace {
// Validated before the group's round robin moves on: a rejected call changes no state.
EventLoop& pickLoop(EventLoopGroup& group, const ClientOptions& options,
                    const core::HashedWheelTimer& timer) {
  validate(options, timer.tickDuration());
  return group.next();
}
}  // namespace

TcpClient::TcpClient(EventLoopGroup& group, core::HashedWheelTimer& timer, ClientOptions options,
                     ChannelHandler handler, StateCallback onStateChange)
    : loop_(pickLoop(group, options, timer)),
      listener_(options.taskListener),
      metrics_(options.taskMetrics) {
  build(timer, std::move(options), std::move(handler), std::move(onStateChange));
}

void TcpClient::build(core::HashedWheelTimer& timer, ClientOptions options, ChannelHandler handler,
                      StateCallback onStateChange) {
  const std::string user = fmt::format("TcpClient {}:{}", options.server.host, options.server.port);
  loopUse_ = loop_.use(user);
  const std::size_t maxQueue = options.maxSendQueue;
  const CodecOptions codec = options.codec;
  // `options` is read by the channel's base before it moves into the channel.
  detail::ChannelConfig config{
      loop_,          timer,    std::make_shared<const ChannelHandler>(std::move(handler)),
      codec,          maxQueue, options.heartbeat,
      options.metrics};
  channel_ =
      std::make_shared<detail::ClientChannel>(config, std::move(options), std::move(onStateChange));
  // The timer stopped under this client: its heartbeats and reconnects would silently stop, so
  // it closes instead (the channel, not `this`: the client may be in its destructor meanwhile).
  timerUse_ =
      timer.use(user, [weak = std::weak_ptr<detail::ClientChannel>(channel_), loop = &loop_] {
        const auto channel = weak.lock();
        // As close(): off the loop thread, returns once closed.
        if (channel && channel->closeForGood("the timer stopped") && !loop->isLoopThread()) {
          channel->waitClosed();
        }
      });
}

TcpClient::~TcpClient() { close("client destroyed"); }

void TcpClient::start() { channel_->start(listener_, metrics_); }

void TcpClient::close(std::string_view reason) {
  timerUse_.quiet();  // closed: a timer stopped from now on has nothing to tell it
  if (channel_->closeForGood(std::string(reason)) && !loop_.isLoopThread()) {
    channel_->waitClosed();
  }
}

ClientState TcpClient::state() const noexcept { return channel_->state(); }
Connectivity TcpClient::connectivity() const noexcept { return channel_->connectivity(); }
void TcpClient::onConnectivity(ConnectivityCallback callback) {
  if (!channel_->setConnectivityCallback(std::move(callback))) {
    throw std::logic_error("wheelbeat: TcpClient::onConnectivity() after start()");
  }
}
Channel& TcpClient::channel() const noexcept { return *channel_; }
std::uint64_t TcpClient::connectAttempts() const noexcept { return channel_->attempts(); }

}  // namespace wheelbeat::net
