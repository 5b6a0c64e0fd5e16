// ClientChannel (client_channel.h): connecting, reconnecting and closing a TcpClient's channel.
#include "client_channel.h"

#include "address.h"

#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {
namespace detail {

ClientChannel::ClientChannel(const ChannelConfig& config, ClientOptions options,
                             TcpClient::StateCallback onState)
    : ChannelCore(config), options_(std::move(options)), onState_(std::move(onState)) {
  setRemote(options_.server);
  metrics().moveChannel(ChannelMetrics::kNoState, static_cast<int>(ClientState::Disconnected));
}

void ClientChannel::start(const std::shared_ptr<tasks::TaskListener>& listener,
                          const std::shared_ptr<tasks::TaskMetrics>& metrics) {
  std::lock_guard lock(mutex_);
  if (started_ || isClosed())
    throw std::logic_error("wheelbeat: TcpClient::start() twice or after close()");
  // As TcpServer::listen(): a client on a stopped loop would never connect, silently.
  if (loop().isStopped()) {
    throw std::runtime_error("wheelbeat: TcpClient::start(): the event loop is stopped");
  }
  started_ = true;
  auto self = std::static_pointer_cast<ClientChannel>(shared_from_this());
  std::weak_ptr<tasks::Channel> weak = self;
  heartbeatTask_ = std::make_shared<tasks::HeartbeatTimerTask>(timer(), weak, options_.heartbeat,
                                                               listener, metrics);
  reconnectTask_ = std::make_shared<tasks::ReconnectTimerTask>(timer(), weak, options_.heartbeat,
                                                               listener, metrics);
  heartbeatTask_->start(heartbeatTask_->checkInterval());
  reconnectTask_->start(reconnectTask_->checkInterval());
  if (!loop().post([self] { self->connect(); })) {  // the loop stopped meanwhile
    heartbeatTask_->cancel();
    reconnectTask_->cancel();
    throw std::runtime_error("wheelbeat: TcpClient::start(): the event loop is stopped");
  }
}

std::string ClientChannel::target() const {
  return fmt::format("{}:{}", options_.server.host, options_.server.port);
}

void ClientChannel::readOnlyReceived() noexcept {
  if (state() != ClientState::Connected) return;
  core::log(core::LogLevel::Info, "client {}: the server is shutting down (READONLY)", target());
  setState(ClientState::ReadOnly, "READONLY event: the server is shutting down");
}

namespace {
Connectivity connectivityOf(ClientState s) noexcept {
  switch (s) {
    case ClientState::Disconnected: return Connectivity::TransientFailure;
    case ClientState::Connecting: return Connectivity::Connecting;
    case ClientState::Connected: return Connectivity::Ready;
    case ClientState::ReadOnly: return Connectivity::ReadOnly;
    case ClientState::Closed: return Connectivity::Shutdown;
  }
  return Connectivity::Shutdown;
}
}  // namespace

bool ClientChannel::setConnectivityCallback(TcpClient::ConnectivityCallback callback) {
  std::lock_guard lock(mutex_);
  if (started_) return false;
  onConnectivity_ = std::move(callback);
  return true;
}

void ClientChannel::setState(ClientState next, std::string_view reason) noexcept {
  const ClientState prev = state_.exchange(next, std::memory_order_acq_rel);
  if (prev == next) return;
  // Closed is not counted (moveChannel ignores its value): the client leaves the gauge.
  metrics().moveChannel(static_cast<int>(prev), static_cast<int>(next));
  if (onState_) safely("the state callback", [&] { onState_(prev, next); });
  const Connectivity to = connectivityOf(next);
  const Connectivity from = connectivity_.exchange(to, std::memory_order_acq_rel);
  if (from == to) return;
  logDebug(*this, "{} -> {}: {}", connectivityName(from), connectivityName(to), reason);
  if (onConnectivity_) {
    safely("the connectivity callback", [&] {
      onConnectivity_(ConnectivityChange{from, to, std::string(reason)});
    });
  }
}

// Connecting

void ClientChannel::connect() noexcept {
  if (isClosed() || current() != nullptr) return;
  const std::uint64_t attempt = ++attempt_;
  attempts_.fetch_add(1, std::memory_order_relaxed);
  Stream* stream = nullptr;
  try {
    stream = Stream::create(loop().native(), shared_from_this(), codec());
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "client {}: {}", target(), e.what());
    wakeReconnectTask();  // state stays Disconnected: the reconnect task tries again
    return;
  }
  setCurrent(stream);
  setState(ClientState::Connecting, fmt::format("connect attempt {} to {}", attempt, target()));
  sockaddr_storage addr{};
  const bool started =
      toSockaddr(options_.server, addr).ok() ? dial(*stream, addr) : resolve(*stream, attempt);
  // The timeout bounds the whole attempt: name resolution included.
  if (started) safely("arming the connect timeout", [&] { armConnectTimeout(attempt); });
}

bool ClientChannel::dial(Stream& stream, const sockaddr_storage& addr) noexcept {
  auto* req = new (std::nothrow) uv_connect_t{};
  NetError error(UV_ENOMEM);
  if (req != nullptr) {
    error = NetError(uv_tcp_connect(req, stream.tcp(), reinterpret_cast<const sockaddr*>(&addr),
                                    &ClientChannel::onConnect));
  }
  if (error.ok()) return true;
  delete req;
  closeStream(stream, reasonFromError(error, true, fmt::format("connect to {}", target())));
  return false;
}

// Not an IP literal: a host name, resolved afresh for every attempt (on libuv's thread pool, so
// the loop never blocks), so a changed DNS answer is picked up by the next reconnect.
struct ClientChannel::Resolve {
  uv_getaddrinfo_t req{};
  std::shared_ptr<ClientChannel> owner;  // alive until the callback, which always comes
  std::uint64_t attempt = 0;
};

bool ClientChannel::resolve(Stream& stream, std::uint64_t attempt) noexcept {
  NetError error(UV_ENOMEM);
  try {
    auto r = std::make_unique<Resolve>();
    r->owner = std::static_pointer_cast<ClientChannel>(shared_from_this());
    r->attempt = attempt;
    r->req.data = r.get();
    const addrinfo hints = tcpHints();
    const std::string port = std::to_string(options_.server.port);
    error = NetError(uv_getaddrinfo(loop().native(), &r->req, &ClientChannel::onResolved,
                                    options_.server.host.c_str(), port.c_str(), &hints));
    if (error.ok()) resolving_ = r.release();
  } catch (const std::bad_alloc&) {  // NOLINT(bugprone-empty-catch): error stays UV_ENOMEM
  }
  if (error.ok()) return true;
  closeStream(stream, reasonFromError(error, true, target()));
  return false;
}

void ClientChannel::onResolved(uv_getaddrinfo_t* req, int status, addrinfo* list) noexcept {
  std::unique_ptr<Resolve> r(static_cast<Resolve*>(req->data));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> answer(list, &uv_freeaddrinfo);
  ClientChannel& self = *r->owner;
  if (self.resolving_ == r.get()) self.resolving_ = nullptr;
  self.resolved(r->attempt, status, list);
}

void ClientChannel::resolved(std::uint64_t attempt, int status, const addrinfo* list) noexcept {
  Stream* stream = current();
  // Superseded: the attempt timed out, the client closed, or the loop is stopping.
  if (attempt != attempt_ || stream == nullptr || stream->isClosing()) return;
  if (status != 0 || list == nullptr) {
    closeStream(*stream,
                reasonFromError(NetError(status != 0 ? status : UV_EAI_NONAME), true, target()));
    return;
  }
  // Several addresses: each attempt takes the next one, so a dead address (or an IPv6 answer
  // for a server listening on IPv4 only) costs one attempt, not every attempt.
  std::size_t count = 0;
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) ++count;
  const addrinfo* pick = list;
  for (std::size_t skip = resolvedRound_++ % count; skip > 0; --skip) pick = pick->ai_next;
  sockaddr_storage addr{};
  std::memcpy(&addr, pick->ai_addr, std::min<std::size_t>(pick->ai_addrlen, sizeof(addr)));
  (void)dial(*stream, addr);
}

void ClientChannel::armConnectTimeout(std::uint64_t attempt) {
  std::lock_guard lock(mutex_);
  if (isClosed()) return;  // close() cancels under this lock: nothing may be armed after it
  std::weak_ptr<ChannelCore> weak = weak_from_this();
  connectTimeout_ = timer().newTimeout(
      [weak, attempt] {
        auto self = std::static_pointer_cast<ClientChannel>(weak.lock());
        if (self) self->loop().post([self, attempt] { self->connectTimedOut(attempt); });
      },
      options_.connectTimeout);
}

void ClientChannel::onConnect(uv_connect_t* req, int status) noexcept {
  Stream& stream = *Stream::of(req->handle);
  delete req;
  static_cast<ClientChannel&>(stream.owner()).connected(stream, status);
}

void ClientChannel::connected(Stream& stream, int status) noexcept {
  {
    std::lock_guard lock(mutex_);
    connectTimeout_.cancel();
  }
  if (stream.isClosing()) return;  // timed out or closed meanwhile: its reason is set
  if (status < 0) {
    closeStream(stream,
                reasonFromError(NetError(status), true, fmt::format("connect to {}", target())));
    return;
  }
  attach(&stream);  // Connected is announced from attached(); a failed attach stays Connecting
}

// Whoever hears "Connected" (the state callback, or a thread polling state()) may send at once,
// so it is announced once the channel accepts frames, and before onConnected, whose code may
// read state() (the registry's engines do).
void ClientChannel::attached() noexcept {
  connectStamp_ = lastRead();  // attach() stamped it; no read has run yet (this is the loop)
  setState(ClientState::Connected, fmt::format("connected to {}", target()));
}

void ClientChannel::connectTimedOut(std::uint64_t attempt) noexcept {
  if (attempt != attempt_ || state() != ClientState::Connecting || current() == nullptr) return;
  closeStream(*current(), CloseReason{CloseKind::ConnectTimeout, NetError(UV_ETIMEDOUT),
                                      fmt::format("no connection to {} within {}", target(),
                                                  core::human(options_.connectTimeout))});
}

// Reconnecting and closing

void ClientChannel::reconnect(std::string_view reason) {
  loop().post([self = std::static_pointer_cast<ClientChannel>(shared_from_this()),
               why = std::string(reason)] { self->reconnectNow(why); });
}

void ClientChannel::reconnectNow(const std::string& reason) noexcept {
  if (isClosed()) return;
  // An attempt in flight is left alone: its connect timeout bounds it.
  if (state() == ClientState::Connecting) return;
  if (Stream* stream = current()) {
    countReadIdle(reason);
    reconnectPending_ = true;  // connect again from streamClosed(), once the socket is gone
    closeStream(*stream, CloseReason{CloseKind::Reconnect, {}, reason});
    return;
  }
  connect();
}

// The reconnect task names a read-idle reconnect by the idleness it saw: "read idle 9s >=
// idleTimeout 9s", or with the φ detector "phi 8.4 >= 8 after read idle 2.3s"; its other reason is
// "disconnected". A peer that never answers within the idle timeout (the timeout too tight for
// it, or a peer that accepts and stays silent) makes every connection end that way: said once,
// at Warn, with the numbers to compare, as it is not the link failing.
void ClientChannel::countReadIdle(const std::string& reason) noexcept {
  if (reason.find("read idle") == std::string::npos) return;
  readIdleStreak_ = lastRead() == connectStamp_ ? readIdleStreak_ + 1 : 1;
  if (readIdleStreak_ != kReadIdleWarnAfter || !core::logEnabled(core::LogLevel::Warn)) return;
  tasks::HeartbeatOptions h = options_.heartbeat;
  h.seed = 1;  // resolved() then draws no random seed: only the idle timeout is wanted
  const std::chrono::nanoseconds idle = h.resolved().idleTimeout;
  core::log(core::LogLevel::Warn,
            "{}: {} read-idle reconnects in a row (idle timeout {}, heartbeat interval {}): the "
            "peer answers slower than the idle timeout?",
            logName(), readIdleStreak_, core::formatDurationExact(idle),
            core::formatDurationExact(h.interval));
}

// The socket is gone (or could not be made): the reconnect task counts its backoff from now,
// not from its next periodic check.
void ClientChannel::wakeReconnectTask() noexcept {
  std::lock_guard lock(mutex_);
  if (reconnectTask_) reconnectTask_->wake();
}

void ClientChannel::cancelTimers() noexcept {
  std::lock_guard lock(mutex_);
  if (heartbeatTask_) heartbeatTask_->cancel();
  if (reconnectTask_) reconnectTask_->cancel();
  connectTimeout_.cancel();
}

bool ClientChannel::closeForGood(std::string reason) {
  if (!markClosed()) return true;  // the first call's path sets closedDone_
  cancelTimers();
  auto self = std::static_pointer_cast<ClientChannel>(shared_from_this());
  CloseReason why{CloseKind::ClosedByOwner, {}, std::move(reason)};
  // Without a socket there is no onClosed: the state change names the same reason.
  std::string said = fmt::format("{}", why);
  const bool posted = loop().post([self, why, said]() mutable {
    if (!self->closeCurrent(std::move(why))) self->finishClosed(said);  // no socket: closed now
  });
  if (!posted) finishClosed(said);  // the loop is stopping: its shutdown closes the socket
  return posted;
}

void ClientChannel::finishClosed(std::string_view reason) noexcept {
  setState(ClientState::Closed, reason);
  std::lock_guard lock(mutex_);
  closedDone_ = true;
  closedCv_.notify_all();
}

void ClientChannel::waitClosed() {
  std::unique_lock lock(mutex_);
  closedCv_.wait(lock, [this] { return closedDone_; });
}

void ClientChannel::streamClosed(Stream& stream, const CloseReason& reason) noexcept {
  ChannelCore::streamClosed(stream, reason);
  if (resolving_ != nullptr) {  // its callback still comes (UV_ECANCELED) and frees it
    uv_cancel(reinterpret_cast<uv_req_t*>(&resolving_->req));
    resolving_ = nullptr;
  }
  {
    std::lock_guard lock(mutex_);
    connectTimeout_.cancel();
  }
  // A failed attempt names its number: "connect attempt 3 failed: refused: ...".
  const std::string why = state() == ClientState::Connecting
                              ? fmt::format("connect attempt {} failed: {}", attempt_, reason)
                              : fmt::format("{}", reason);
  if (isClosed()) {
    setState(ClientState::Closed, why);
    notifyClosed(reason);
    finishClosed(why);  // wakes close(): the handler has seen the close by then
    return;
  }
  setState(ClientState::Disconnected, why);
  notifyClosed(reason);
  if (reconnectPending_) {
    reconnectPending_ = false;
    connect();
  } else {
    wakeReconnectTask();
  }
}

}  // namespace detail

}  // namespace wheelbeat::net
