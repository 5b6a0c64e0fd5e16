// LastFrameChannel: a net::Channel whose send() keeps the last frame sent (status and body, copied
// into one reused string, as a transport's write buffer would) and counts them; everything else
// answers "connected, idle" (IdleChannel). For a dubbo::Provider driven without a socket: the
// provider tests and the bench tool wheelbeat_dubbo_path (tests/bench/dubbo_path.cpp). Thread: one
// at a time.
#pragma once

#include "../net/idle_channel.h"

#include <wheelbeat/net/channel.h>

#include <any>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace wbdubbo {

class LastFrameChannel final : public wbnet::IdleChannel {
public:
  wheelbeat::net::SendResult send(std::uint8_t, std::uint8_t s, std::uint64_t,
                                  std::string_view b) override {
    status = s;
    body.assign(b);
    ++sent;
    return wheelbeat::net::SendResult::Queued;
  }

  std::uint8_t status = 0;  // of the last frame sent
  std::string body;         // of the last frame sent
  std::uint64_t sent = 0;   // frames sent
};

}  // namespace wbdubbo
