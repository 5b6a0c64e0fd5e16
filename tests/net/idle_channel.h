// IdleChannel: a net::Channel that answers "connected, idle" to everything and sends nothing
// (send() reports Queued, request() NotConnected). A base for the test doubles that stand for a
// channel without a socket: the channel stage tests' handler argument (channel_fakes.h) and the
// Dubbo provider tests' LastFrameChannel. Thread: one at a time.
#pragma once

#include <wheelbeat/net/channel.h>

#include <any>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace wbnet {

class IdleChannel : public wheelbeat::net::Channel {
public:
  explicit IdleChannel(std::uint64_t id = 1) : id_(id) {}

  wheelbeat::net::SendResult send(std::uint8_t, std::uint8_t, std::uint64_t,
                                  std::string_view) override {
    return wheelbeat::net::SendResult::Queued;
  }
  wheelbeat::net::RequestResult request(std::string_view, std::chrono::nanoseconds,
                                        wheelbeat::net::ResponseCallback, std::uint8_t) override {
    return {wheelbeat::net::SendResult::NotConnected, 0};
  }
  std::uint64_t id() const noexcept override { return id_; }
  const wheelbeat::net::Endpoint& remote() const noexcept override { return remote_; }
  std::any& attachment() noexcept override { return attachment_; }
  std::chrono::nanoseconds lastRead() const noexcept override { return {}; }
  std::chrono::nanoseconds lastWrite() const noexcept override { return {}; }
  std::chrono::nanoseconds lastHeartbeatRtt() const noexcept override { return {}; }
  std::chrono::nanoseconds lastHeartbeatSendWait() const noexcept override { return {}; }
  std::size_t queuedBytes() const noexcept override { return 0; }
  std::uint64_t heartbeatsAnswered() const noexcept override { return 0; }
  bool isReadOnly() const noexcept override { return false; }
  std::int64_t unanswered() const noexcept override { return 0; }
  std::size_t pendingRequests() const noexcept override { return 0; }
  bool isConnected() const noexcept override { return true; }
  bool isClosed() const noexcept override { return false; }
  void sendHeartbeat() override {}
  void reconnect(std::string_view) override {}
  void close(std::string_view) override {}

private:
  std::uint64_t id_;
  wheelbeat::net::Endpoint remote_{};
  std::any attachment_;
};

}  // namespace wbnet
