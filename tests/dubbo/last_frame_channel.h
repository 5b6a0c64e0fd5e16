// LastFrameChannel: a net::Channel whose send() keeps the last frame sent (status and body, copied
// into one reused string, as a transport's write buffer would) and counts them; everything else
// answers "connected, idle". For a dubbo::Provider driven without a socket: the provider tests and
// the bench tool wheelbeat_dubbo_path (tests/bench/dubbo_path.cpp). Thread: one at a time.
#pragma once

#include <wheelbeat/net/channel.h>

#include <any>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace wbdubbo {

class LastFrameChannel final : public wheelbeat::net::Channel {
public:
  wheelbeat::net::SendResult send(std::uint8_t, std::uint8_t s, std::uint64_t,
                                  std::string_view b) override {
    status = s;
    body.assign(b);
    ++sent;
    return wheelbeat::net::SendResult::Queued;
  }
  wheelbeat::net::RequestResult request(std::string_view, std::chrono::nanoseconds,
                                        wheelbeat::net::ResponseCallback, std::uint8_t) override {
    return {};
  }
  std::uint64_t id() const noexcept override { return 1; }
  const wheelbeat::net::Endpoint& remote() const noexcept override { return endpoint_; }
  std::any& attachment() noexcept override { return attachment_; }
  std::chrono::nanoseconds lastHeartbeatRtt() const noexcept override { return {}; }
  std::size_t queuedBytes() const noexcept override { return 0; }
  std::uint64_t heartbeatsAnswered() const noexcept override { return 0; }
  bool isReadOnly() const noexcept override { return false; }
  std::int64_t unanswered() const noexcept override { return 0; }
  std::size_t pendingRequests() const noexcept override { return 0; }
  std::chrono::nanoseconds lastHeartbeatSendWait() const noexcept override { return {}; }
  std::chrono::nanoseconds lastRead() const noexcept override { return {}; }
  std::chrono::nanoseconds lastWrite() const noexcept override { return {}; }
  bool isConnected() const noexcept override { return true; }
  bool isClosed() const noexcept override { return false; }
  void sendHeartbeat() override {}
  void reconnect(std::string_view) override {}
  void close(std::string_view) override {}

  std::uint8_t status = 0;  // of the last frame sent
  std::string body;         // of the last frame sent
  std::uint64_t sent = 0;   // frames sent

private:
  wheelbeat::net::Endpoint endpoint_{};
  std::any attachment_;
};

}  // namespace wbdubbo
