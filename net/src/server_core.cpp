// ServerChannel and ServerCore (server_core.h): accepting, handing connections to their loop,
// maxConnections, stop and the graceful drain of one loop's share of a server.
#include "server_core.h"

#include "address.h"

#include <wheelbeat/net/tcp_client.h>

#include <fcntl.h>
#include <fmt/chrono.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net::detail {

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

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

ServerCore::ServerCore(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
                       std::shared_ptr<const ChannelHandler> handler,
                       std::shared_ptr<tasks::TaskListener> listener,
                       std::shared_ptr<tasks::TaskMetrics> metrics,
                       std::shared_ptr<ServerShared> shared)
    : loop_(loop),
      timer_(timer),
      options_(std::move(options)),
      heartbeat_(options_.heartbeat.resolved()),
      handler_(std::move(handler)),
      listener_(std::move(listener)),
      metrics_(std::move(metrics)),
      shared_(std::move(shared)) {}

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
  if (!reserve()) {
    reject();
    return;
  }
  const std::size_t target = nextPeer_;
  nextPeer_ = (nextPeer_ + 1) % (peers_.size() + 1);
  if (target == 0) {
    acceptHere();
  } else {
    handOver(*peers_[target - 1]);
  }
}

bool ServerCore::reserve() noexcept {
  const std::size_t before = shared_->open.fetch_add(1, std::memory_order_acq_rel);
  if (options_.maxConnections == 0 || before < options_.maxConnections) return true;
  release();
  return false;
}

void ServerCore::release() noexcept { shared_->open.fetch_sub(1, std::memory_order_acq_rel); }

ChannelConfig ServerCore::channelConfig() const {
  return ChannelConfig{
      loop_,           timer_, handler_, options_.codec, options_.maxSendQueue, options_.heartbeat,
      options_.metrics};
}

void ServerCore::acceptHere() noexcept {
  try {
    auto channel = std::make_shared<ServerChannel>(channelConfig(), shared_from_this());
    Stream* stream = Stream::create(loop_.native(), channel, options_.codec);
    if (int rc = uv_accept(asStream(&tcp_), asStream(stream->tcp())); rc != 0) {
      release();
      stream->close(reasonFromError(NetError(rc), false, "accept"));
      return;  // the channel was never announced; its close callback finds nothing to remove
    }
    announce(channel, stream);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "server on port {}: accept failed: {}", port.load(), e.what());
    release();
    reject();  // libuv reads the listener again only once the pending connection is taken
  }
}

// libuv has no call that moves an accepted socket to another loop: the connection is taken on
// this loop into a throw-away handle, its descriptor duplicated, the handle closed, and the
// duplicate opened on the peer's loop (uv_tcp_open).
void ServerCore::handOver(ServerCore& peer) noexcept {
  try {
    auto* tcp = new uv_tcp_t{};
    uv_tcp_init(loop_.native(), tcp);  // cannot fail on a running loop
    int fd = -1;
    if (uv_accept(asStream(&tcp_), asStream(tcp)) == 0) {
      uv_os_fd_t own = -1;
      if (uv_fileno(asHandle(tcp), &own) == 0) fd = ::fcntl(own, F_DUPFD_CLOEXEC, 0);
    }
    uv_close(asHandle(tcp), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    if (fd < 0) {
      release();
      return;
    }
    auto owned = std::make_shared<OwnedFd>(fd);
    if (!peer.loop_.post([core = peer.shared_from_this(), owned] { core->adopt(*owned); })) {
      release();  // the peer's loop is stopping: the connection closes with `owned`
    }
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "server on port {}: hand-over failed: {}", port.load(),
              e.what());
    release();
  }
}

void ServerCore::adopt(OwnedFd& fd) noexcept {
  if (stopping_ || draining_.load(std::memory_order_acquire)) {
    release();  // as a connection still in the backlog when the listener closes
    rejected.fetch_add(1, std::memory_order_relaxed);
    channelMetrics().rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    auto channel = std::make_shared<ServerChannel>(channelConfig(), shared_from_this());
    Stream* stream = Stream::create(loop_.native(), channel, options_.codec);
    if (int rc = uv_tcp_open(stream->tcp(), fd.get()); rc != 0) {
      release();
      stream->close(reasonFromError(NetError(rc), false, "accept"));
      return;
    }
    fd.release();  // the stream's now
    announce(channel, stream);
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "server on port {}: accept failed: {}", port.load(), e.what());
    release();
    rejected.fetch_add(1, std::memory_order_relaxed);
    channelMetrics().rejected.fetch_add(1, std::memory_order_relaxed);
  }
}

void ServerCore::announce(const std::shared_ptr<ServerChannel>& channel, Stream* stream) {
  channels_.emplace(channel.get(), channel);
  accepted.fetch_add(1, std::memory_order_relaxed);
  channel->metrics().accepted.fetch_add(1, std::memory_order_relaxed);
  channel->metrics().moveChannel(ChannelMetrics::kNoState,
                                 static_cast<int>(ClientState::Connected));
  channel->start(stream, heartbeat_, listener_, metrics_);
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
    release();
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

}  // namespace wheelbeat::net::detail
