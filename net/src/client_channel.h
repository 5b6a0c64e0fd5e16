// ClientChannel: the stable channel of a TcpClient. It implements tasks::Channel for the
// client's HeartbeatTimerTask and ReconnectTimerTask and swaps its Stream on every (re)connect,
// so the tasks' weak_ptr stays valid across reconnects. Private to net/.
#pragma once

#include "channel_core.h"

#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace wheelbeat::net::detail {

class ClientChannel final : public ChannelCore {
public:
  ClientChannel(const ChannelConfig& config, ClientOptions options,
                TcpClient::StateCallback onState);

  // Any thread, once: creates and starts the tasks, posts the first connect.
  void start(const std::shared_ptr<tasks::TaskListener>& listener,
             const std::shared_ptr<tasks::TaskMetrics>& metrics);
  // Any thread, never blocks. Returns true if the loop will finish the close (wait with
  // waitClosed()), false if the loop is gone (then the state is Closed already).
  bool closeForGood(std::string reason);
  void waitClosed();

  // tasks::Channel (wheel thread): post to the loop and return.
  void reconnect(std::string_view reason) override;
  void close(std::string_view reason) override { closeForGood(std::string(reason)); }

  void streamClosed(Stream& stream, const CloseReason& reason) noexcept override;
  [[nodiscard]] std::string logName() const override { return "client " + target(); }
  // Loop: Connected -> ReadOnly.
  void readOnlyReceived() noexcept override;
  void attached() noexcept override;
  // An attempt is in flight: name resolution or TCP connect (any thread).
  [[nodiscard]] bool isConnecting() const noexcept override {
    return state() == ClientState::Connecting;
  }

  [[nodiscard]] ClientState state() const noexcept {
    return state_.load(std::memory_order_acquire);
  }
  [[nodiscard]] Connectivity connectivity() const noexcept {
    return connectivity_.load(std::memory_order_acquire);
  }
  // Before start() only: false (nothing set) after it.
  bool setConnectivityCallback(TcpClient::ConnectivityCallback callback);
  [[nodiscard]] std::uint64_t attempts() const noexcept {
    return attempts_.load(std::memory_order_relaxed);
  }

private:
  struct Resolve;
  static void onConnect(uv_connect_t* req, int status) noexcept;
  static void onResolved(uv_getaddrinfo_t* req, int status, addrinfo* list) noexcept;
  void connect() noexcept;  // loop
  // Loop. Each returns false after closing `stream` with the reason it could not go on.
  bool dial(Stream& stream, const sockaddr_storage& addr) noexcept;
  bool resolve(Stream& stream, std::uint64_t attempt) noexcept;
  void resolved(std::uint64_t attempt, int status, const addrinfo* list) noexcept;  // loop
  void connected(Stream& stream, int status) noexcept;                              // loop
  void connectTimedOut(std::uint64_t attempt) noexcept;                             // loop
  void reconnectNow(const std::string& reason) noexcept;                            // loop
  void countReadIdle(const std::string& reason) noexcept;                           // loop
  void armConnectTimeout(std::uint64_t attempt);
  void cancelTimers() noexcept;
  void wakeReconnectTask() noexcept;
  // Loop (and closeForGood() once the loop is gone). `reason` says why, for the connectivity
  // callback and the debug log.
  void setState(ClientState next, std::string_view reason) noexcept;
  void finishClosed(std::string_view reason) noexcept;
  [[nodiscard]] std::string target() const;

  const ClientOptions options_;
  const TcpClient::StateCallback onState_;
  std::atomic<ClientState> state_{ClientState::Disconnected};
  std::atomic<Connectivity> connectivity_{Connectivity::Idle};
  TcpClient::ConnectivityCallback onConnectivity_;  // set before start(), then read-only
  std::atomic<std::uint64_t> attempts_{0};

  std::mutex mutex_;  // guards the task pointers, connectTimeout_, started_, closedDone_
  std::shared_ptr<tasks::HeartbeatTimerTask> heartbeatTask_;
  std::shared_ptr<tasks::ReconnectTimerTask> reconnectTask_;
  core::Timeout connectTimeout_;
  bool started_ = false;
  bool closedDone_ = false;
  std::condition_variable closedCv_;

  // Loop thread only.
  std::uint64_t attempt_ = 0;
  bool reconnectPending_ = false;
  Resolve* resolving_ = nullptr;     // the name resolution in flight, if any
  std::uint64_t resolvedRound_ = 0;  // which address of a resolved list the next attempt takes
  // Read-idle reconnects in a row with no read on the connections between them: at
  // kReadIdleWarnAfter one Warn says the peer may answer slower than the idle timeout.
  // connectStamp_ is lastRead() as the connect stamped it: a read moves lastRead() past it.
  static constexpr std::uint64_t kReadIdleWarnAfter = 3;
  std::uint64_t readIdleStreak_ = 0;
  std::chrono::nanoseconds connectStamp_{0};
};

}  // namespace wheelbeat::net::detail
