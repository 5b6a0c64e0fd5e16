// ServerCore (one loop's share of a server: the listener, if that loop accepts, and the channels
// living on that loop) and ServerChannel (one accepted connection, watched by a CloseTimerTask).
// A server on one EventLoop has one ServerCore; a server on an EventLoopGroup has one per loop,
// the first of which accepts and hands connections round robin to the others (tcp_server.h says
// why). Private to net/; TcpServer is the public face.
#pragma once

#include "channel_core.h"

#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace wheelbeat::net::detail {

class ServerCore;

// What every ServerCore of one server shares.
struct ServerShared {
  // Channels open (or being handed to their loop) over every core: the count maxConnections
  // bounds, reserved before a connection is taken so no two loops can both pass the limit.
  std::atomic<std::size_t> open{0};
};

// A descriptor owned by whoever holds this (a connection travelling to its loop); closed unless
// released, so a refused post or a stopping loop never leaks it.
class OwnedFd {
public:
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  ~OwnedFd();
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  void release() noexcept { fd_ = -1; }

private:
  int fd_;
};

class ServerChannel final : public ChannelCore {
public:
  ServerChannel(const ChannelConfig& config, std::shared_ptr<ServerCore> server);

  // Loop: attaches the accepted stream and starts the close-idle task.
  void start(Stream* stream, const tasks::HeartbeatOptions& heartbeat,
             const std::shared_ptr<tasks::TaskListener>& listener,
             const std::shared_ptr<tasks::TaskMetrics>& metrics) noexcept;
  // Any thread, never blocks: closes this connection for good with `kind`.
  void closeWith(CloseKind kind, std::string reason);
  // Loop: the same, at once (TcpServer::stop()).
  void shutdown(CloseReason why) noexcept;

  // tasks::Channel: a server cannot dial back, so reconnect() closes too.
  void reconnect(std::string_view reason) override;
  void close(std::string_view reason) override;

  void streamClosed(Stream& stream, const CloseReason& reason) noexcept override;

protected:
  void unansweredChanged(std::int64_t delta) noexcept override;

private:
  // What the CloseTimerTask sees: the same channel, except that its close() is an idle close.
  // A member reached through an aliasing shared_ptr: no allocation of its own.
  class IdleView final : public tasks::Channel {
  public:
    explicit IdleView(ServerChannel& parent) : parent_(parent) {}
    std::chrono::nanoseconds lastRead() const noexcept override { return parent_.lastRead(); }
    std::chrono::nanoseconds lastWrite() const noexcept override { return parent_.lastWrite(); }
    bool isConnected() const noexcept override { return parent_.isConnected(); }
    bool isClosed() const noexcept override { return parent_.isClosed(); }
    bool hasUnreadInput() const noexcept override { return parent_.hasUnreadInput(); }
    std::string logName() const override { return parent_.logName(); }
    void sendHeartbeat() override { parent_.sendHeartbeat(); }
    void reconnect(std::string_view reason) override { close(reason); }
    void close(std::string_view reason) override {
      parent_.closeWith(CloseKind::Idle, std::string(reason));
    }

  private:
    ServerChannel& parent_;
  };

  std::shared_ptr<ServerCore> server_;
  std::shared_ptr<tasks::CloseTimerTask> closeTask_;  // loop
  IdleView idleView_{*this};
};

class ServerCore final : public LoopHandle, public std::enable_shared_from_this<ServerCore> {
public:
  ServerCore(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
             std::shared_ptr<const ChannelHandler> handler,
             std::shared_ptr<tasks::TaskListener> listener,
             std::shared_ptr<tasks::TaskMetrics> metrics, std::shared_ptr<ServerShared> shared);

  // Before listen(), on any thread: the cores of the other loops, which this (accepting) core
  // hands every connection but each (size + 1)-th to, round robin.
  void setPeers(std::vector<std::shared_ptr<ServerCore>> peers) { peers_ = std::move(peers); }

  // Loop. The outcome travels to the caller's thread as values (no exception crosses threads).
  struct ListenOutcome {
    std::uint16_t port = 0;
    NetError error{};  // with `where`: throw NetException
    std::string where;
    std::string misuse;  // non-empty: throw std::logic_error
  };
  ListenOutcome listen(const sockaddr_storage& addr) noexcept;
  [[nodiscard]] const Endpoint& endpoint() const noexcept { return options_.listen; }
  [[nodiscard]] const ServerOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::string where() const;  // "listen on HOST:PORT"

  void stop() noexcept;  // loop: begins; done() once everything is closed
  // Loop: stops accepting, READONLY on every channel, stop() once drained or after `grace`.
  void shutdown(std::chrono::nanoseconds grace, ShutdownReport& report) noexcept;
  void unansweredDelta(std::int64_t delta) noexcept;  // any thread
  // A shutdown lasts at least this (or its grace, if shorter): calls sent before a client read
  // READONLY are still on the wire.
  static constexpr std::chrono::milliseconds kQuiet{100};
  void quietOver() noexcept;  // loop
  void closeForShutdown() noexcept override { stop(); }
  void channelClosed(ServerChannel* channel) noexcept;  // loop
  void waitStopped();                                   // any thread but the loop's

  // Channels open over every core of the server (ServerShared::open). Any thread.
  [[nodiscard]] std::size_t openEverywhere() const noexcept {
    return shared_->open.load(std::memory_order_acquire);
  }

  std::atomic<std::uint16_t> port{0};
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> rejected{0};
  std::atomic<std::int64_t> unanswered{0};  // over this core's channels
  std::atomic<std::int64_t> abandoned{0};   // unanswered when a shutdown's grace ran out

private:
  static void onConnection(uv_stream_t* listener, int status) noexcept;
  static void onListenerClosed(uv_handle_t* handle) noexcept;
  void accept() noexcept;
  [[nodiscard]] bool reserve() noexcept;  // a slot under maxConnections (any thread)
  void release() noexcept;                // gives a reserved slot back (any thread)
  void acceptHere() noexcept;
  void handOver(ServerCore& peer) noexcept;
  void adopt(OwnedFd& fd) noexcept;  // loop: a connection the accepting core handed over
  [[nodiscard]] ChannelConfig channelConfig() const;
  void announce(const std::shared_ptr<ServerChannel>& channel, Stream* stream);
  void reject() noexcept;
  void closeListener() noexcept;
  void checkStopped() noexcept;
  [[nodiscard]] ChannelMetrics& channelMetrics() const noexcept {
    return options_.metrics ? *options_.metrics : *processChannelMetrics();
  }

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const ServerOptions options_;
  const tasks::HeartbeatOptions heartbeat_;  // resolved
  const std::shared_ptr<const ChannelHandler> handler_;
  const std::shared_ptr<tasks::TaskListener> listener_;
  const std::shared_ptr<tasks::TaskMetrics> metrics_;
  const std::shared_ptr<ServerShared> shared_;
  std::vector<std::shared_ptr<ServerCore>> peers_;  // set before listen(), then loop thread only
  std::size_t nextPeer_ = 0;                        // loop: round robin over self + peers_

  // Loop thread only.
  uv_tcp_t tcp_{};
  bool listenerOpen_ = false;
  bool listened_ = false;
  bool stopping_ = false;
  bool listenerClosing_ = false;      // uv_close called; listenerOpen_ until its callback
  core::Timeout graceTimeout_;        // a shutdown's deadline
  core::Timeout quietTimeout_;        // a shutdown's shortest drain (kQuiet)
  bool quiet_ = false;                // the quiet period is over
  std::shared_ptr<ServerCore> self_;  // keeps the listener's memory alive until its close cb
  std::unordered_map<ServerChannel*, std::shared_ptr<ServerChannel>> channels_;

  std::atomic<bool> draining_{false};
  std::mutex doneMutex_;
  std::condition_variable doneCv_;
  bool done_ = false;
};

}  // namespace wheelbeat::net::detail
