#include "address.h"
#include "server_core.h"

#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/chrono.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {
namespace detail {

// ServerChannel

ServerChannel::ServerChannel(const ChannelConfig& config, std::shared_ptr<ServerCore> server)
    : ChannelCore(config), server_(std::move(server)) {}

void ServerChannel::start(Stream* stream, const tasks::HeartbeatOptions& heartbeat,
                          const std::shared_ptr<tasks::TaskListener>& listener,
                          const std::shared_ptr<tasks::TaskMetrics>& metrics) noexcept {
  setRemote(peerOf(stream->tcp()));
  logDebug(*this, "accepted");
  attach(stream);
  if (!isConnected()) return;  // could not start reading: already closing
  safely("starting the close-idle task", [&] {
    // The task sees idleView_, sharing this channel's control block (aliasing constructor).
    std::shared_ptr<tasks::Channel> view(shared_from_this(), &idleView_);
    closeTask_ =
        std::make_shared<tasks::CloseTimerTask>(timer(), view, heartbeat, listener, metrics);
    closeTask_->start(closeTask_->checkInterval());
  });
}

void ServerChannel::closeWith(CloseKind kind, std::string reason) {
  markClosed();
  loop().post([self = std::static_pointer_cast<ServerChannel>(shared_from_this()), kind,
               reason = std::move(reason)]() mutable {
    self->closeCurrent(CloseReason{kind, {}, std::move(reason)});
  });
}

void ServerChannel::shutdown(CloseReason why) noexcept {
  markClosed();
  closeCurrent(std::move(why));
}

void ServerChannel::reconnect(std::string_view reason) {
  closeWith(CloseKind::Reconnect, std::string(reason));
}

void ServerChannel::close(std::string_view reason) {
  closeWith(CloseKind::ClosedByOwner, std::string(reason));
}

void ServerChannel::unansweredChanged(std::int64_t delta) noexcept {
  server_->unansweredDelta(delta);
}

void ServerChannel::streamClosed(Stream& stream, const CloseReason& reason) noexcept {
  logDebug(*this, "closed: {}", reason);
  ChannelCore::streamClosed(stream, reason);
  if (const std::int64_t left = dropUnanswered(); left != 0) server_->unansweredDelta(-left);
  markClosed();
  if (closeTask_) closeTask_->cancel();
  notifyClosed(reason);
  server_->channelClosed(this);
}

// ServerCore

ServerCore::ServerCore(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
                       ChannelHandler handler, std::shared_ptr<tasks::TaskListener> listener,
                       std::shared_ptr<tasks::TaskMetrics> metrics)
    : loop_(loop),
      timer_(timer),
      options_(std::move(options)),
      heartbeat_(options_.heartbeat.resolved()),
      handler_(std::make_shared<const ChannelHandler>(std::move(handler))),
      listener_(std::move(listener)),
      metrics_(std::move(metrics)) {}

ServerCore::ListenOutcome ServerCore::listen(const sockaddr_storage& addr) noexcept {
  ListenOutcome out;
  if (stopping_ || listened_) {
    out.misuse = stopping_ ? "wheelbeat: TcpServer::listen() after stop()"
                           : "wheelbeat: TcpServer::listen() called twice";
    return out;
  }
  out.where = where();
  if (int rc = uv_tcp_init(loop_.native(), &tcp_); rc != 0) {
    out.error = NetError(rc);
    return out;
  }
  listened_ = true;
  listenerOpen_ = true;
  tcp_.data = static_cast<LoopHandle*>(this);
  registerHandle(loop_.native(), this);
  self_ = shared_from_this();
  int rc = uv_tcp_bind(&tcp_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) rc = uv_listen(asStream(&tcp_), options_.backlog, &ServerCore::onConnection);
  if (rc != 0) {
    stop();
    out.error = NetError(rc);
    return out;
  }
  out.port = localOf(&tcp_).port;
  port.store(out.port, std::memory_order_release);
  return out;
}

std::string ServerCore::where() const {
  return fmt::format("listen on {}:{}", options_.listen.host, options_.listen.port);
}

void ServerCore::onConnection(uv_stream_t* listener, int status) noexcept {
  auto* self = static_cast<ServerCore*>(static_cast<LoopHandle*>(asHandle(listener)->data));
  if (status < 0) {
    core::log(core::LogLevel::Warn, "server on port {}: accept: {}", self->port.load(),
              NetError(status));
    return;
  }
  self->accept();
}

void ServerCore::accept() noexcept {
  if (options_.maxConnections != 0 && channels_.size() >= options_.maxConnections) {
    reject();
    return;
  }
  try {
    ChannelConfig config{loop_,
                         timer_,
                         handler_,
                         options_.codec,
                         options_.maxSendQueue,
                         options_.heartbeat,
                         options_.metrics};
    auto channel = std::make_shared<ServerChannel>(config, shared_from_this());
    Stream* stream = Stream::create(loop_.native(), channel, options_.codec);
    if (int rc = uv_accept(asStream(&tcp_), asStream(stream->tcp())); rc != 0) {
      stream->close(reasonFromError(NetError(rc), false, "accept"));
      return;  // the channel was never announced; its close callback finds nothing to remove
    }
    channels_.emplace(channel.get(), channel);
    open.fetch_add(1, std::memory_order_relaxed);
    accepted.fetch_add(1, std::memory_order_relaxed);
    channel->metrics().accepted.fetch_add(1, std::memory_order_relaxed);
    channel->metrics().moveChannel(ChannelMetrics::kNoState,
                                   static_cast<int>(ClientState::Connected));
    channel->start(stream, heartbeat_, listener_, metrics_);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "server on port {}: accept failed: {}", port.load(), e.what());
    reject();  // libuv reads the listener again only once the pending connection is taken
  }
}

// Takes the pending connection and closes it at once: beyond maxConnections, or when its channel
// could not be set up. Without the uv_accept libuv would stop watching the listener for good.
void ServerCore::reject() noexcept {
  auto* tcp = new (std::nothrow) uv_tcp_t{};
  if (tcp == nullptr) return;        // nothing to accept with; the next connection retries
  uv_tcp_init(loop_.native(), tcp);  // cannot fail on a running loop
  if (uv_accept(asStream(&tcp_), asStream(tcp)) == 0) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    channelMetrics().rejected.fetch_add(1, std::memory_order_relaxed);
  }
  uv_close(asHandle(tcp), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
}

void ServerCore::channelClosed(ServerChannel* channel) noexcept {
  if (channels_.erase(channel) != 0) {
    open.fetch_sub(1, std::memory_order_relaxed);
    channel->metrics().moveChannel(static_cast<int>(ClientState::Connected),
                                   ChannelMetrics::kNoState);
  }
  checkStopped();
}

void ServerCore::shutdown(std::chrono::nanoseconds grace, ShutdownReport& report) noexcept {
  if (stopping_ || draining_.exchange(true)) {
    stop();
    return;
  }
  closeListener();  // no connection is accepted any more
  for (auto& [raw, channel] : channels_) {
    if (channel->sendReadOnly() == SendResult::Queued) ++report.notified;
    channel->flush();
  }
  report.inFlightAtStart = unanswered.load(std::memory_order_acquire);
  if (grace <= std::chrono::nanoseconds(0)) {
    stop();
    return;
  }
  std::weak_ptr<ServerCore> weak = weak_from_this();
  auto onLoop = [weak, &loop = loop_](void (ServerCore::*step)() noexcept) {
    return [weak, &loop, step] {
      loop.post([weak, step] {
        if (auto self = weak.lock()) (self.get()->*step)();
      });
    };
  };
  try {
    graceTimeout_ = timer_.newTimeout(onLoop(&ServerCore::stop), grace);
    quietTimeout_ = timer_.newTimeout(onLoop(&ServerCore::quietOver),
                                      std::min<std::chrono::nanoseconds>(grace, kQuiet));
  } catch (const std::exception& e) {  // the wheel stopped: no grace to give
    core::log(core::LogLevel::Warn, "server on port {}: shutdown: {}", port.load(), e.what());
    stop();
  }
}

// Requests already on the wire when READONLY went out still arrive: the drain is not over before
// the quiet period, even with nothing unanswered.
void ServerCore::quietOver() noexcept {
  quiet_ = true;
  if (unanswered.load(std::memory_order_acquire) <= 0) stop();
}

void ServerCore::unansweredDelta(std::int64_t delta) noexcept {
  const std::int64_t now = unanswered.fetch_add(delta, std::memory_order_acq_rel) + delta;
  if (now != 0 || !draining_.load(std::memory_order_acquire)) return;
  std::weak_ptr<ServerCore> weak = weak_from_this();
  loop_.post([weak] {  // drained: close now (a refused post means the loop closes everything)
    if (auto self = weak.lock(); self && self->quiet_) self->stop();
  });
}

void ServerCore::stop() noexcept {
  if (!stopping_) {
    stopping_ = true;
    graceTimeout_.cancel();
    quietTimeout_.cancel();
    if (draining_.load(std::memory_order_acquire)) {
      abandoned.store(std::max<std::int64_t>(0, unanswered.load(std::memory_order_acquire)),
                      std::memory_order_release);
    }
    closeListener();
    for (auto& [raw, channel] : channels_) {
      channel->shutdown(CloseReason{CloseKind::ClosedByOwner, {}, "server stopped"});
    }
  }
  checkStopped();
}

void ServerCore::closeListener() noexcept {
  if (!listenerOpen_ || listenerClosing_) return;
  listenerClosing_ = true;
  uv_close(asHandle(&tcp_), &ServerCore::onListenerClosed);
}

void ServerCore::onListenerClosed(uv_handle_t* handle) noexcept {
  auto* self = static_cast<ServerCore*>(static_cast<LoopHandle*>(handle->data));
  unregisterHandle(handle->loop, self);
  self->listenerOpen_ = false;
  std::shared_ptr<ServerCore> keep = std::move(self->self_);
  self->checkStopped();
}

void ServerCore::checkStopped() noexcept {
  if (!stopping_ || listenerOpen_ || !channels_.empty()) return;
  std::lock_guard lock(doneMutex_);
  done_ = true;
  doneCv_.notify_all();
}

void ServerCore::waitStopped() {
  std::unique_lock lock(doneMutex_);
  doneCv_.wait(lock, [this] { return done_; });
}

}  // namespace detail

// TcpServer

TcpServer::TcpServer(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
                     ChannelHandler handler)
    : loop_(loop) {
  validate(options);
  // Copied out first: `options` moves into the core in the same call.
  std::shared_ptr<tasks::TaskListener> listener = options.taskListener;
  std::shared_ptr<tasks::TaskMetrics> metrics = options.taskMetrics;
  core_ = std::make_shared<detail::ServerCore>(loop, timer, std::move(options), std::move(handler),
                                               std::move(listener), std::move(metrics));
}

TcpServer::~TcpServer() { stop(); }

std::uint16_t TcpServer::listen() {
  sockaddr_storage addr{};
  // On the caller's thread: a host name's resolution must not block the loop.
  if (NetError e = detail::resolveBlocking(core_->endpoint(), addr)) {
    throw NetException(e, core_->where());
  }
  detail::ServerCore::ListenOutcome out;
  if (!loop_.call([&] { out = core_->listen(addr); })) {
    throw std::runtime_error("wheelbeat: TcpServer::listen(): the event loop is stopped");
  }
  if (!out.misuse.empty()) throw std::logic_error(out.misuse);
  if (out.error) throw NetException(out.error, out.where);
  return out.port;
}

std::uint16_t TcpServer::port() const noexcept {
  return core_->port.load(std::memory_order_acquire);
}
std::size_t TcpServer::connections() const noexcept {
  return core_->open.load(std::memory_order_relaxed);
}
std::uint64_t TcpServer::rejected() const noexcept {
  return core_->rejected.load(std::memory_order_relaxed);
}

std::uint64_t TcpServer::accepted() const noexcept {
  return core_->accepted.load(std::memory_order_relaxed);
}

ShutdownReport TcpServer::shutdown() { return shutdown(core_->options().shutdownGrace); }

ShutdownReport TcpServer::shutdown(std::chrono::nanoseconds grace) {
  if (grace < std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("TcpServer::shutdown: grace = {} (expected: >= 0)", grace));
  }
  const auto start = std::chrono::steady_clock::now();
  auto report = std::make_shared<ShutdownReport>();
  if (loop_.isLoopThread()) {
    core_->shutdown(grace, *report);
    return *report;
  }
  if (!loop_.call([&] { core_->shutdown(grace, *report); })) return {};  // the loop closed all
  core_->waitStopped();
  report->abandoned = core_->abandoned.load(std::memory_order_acquire);
  report->elapsed = std::chrono::steady_clock::now() - start;
  return *report;
}

std::int64_t TcpServer::unanswered() const noexcept {
  return std::max<std::int64_t>(0, core_->unanswered.load(std::memory_order_acquire));
}

void TcpServer::stop() {
  if (!loop_.post([core = core_] { core->stop(); })) return;  // the loop's shutdown closes all
  if (!loop_.isLoopThread()) core_->waitStopped();
}

}  // namespace wheelbeat::net
