// ProviderRig: one dubbo::Provider driven without a socket, its answers caught by a
// LastFrameChannel; call() hands it one request frame. For the provider tests
// (provider_decode_test.cpp, provider_inplace_test.cpp). Thread: one at a time.
#pragma once

#include "last_frame_channel.h"

#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/channel.h>

#include <string>

namespace wbdubbo {

struct ProviderRig {
  explicit ProviderRig(wheelbeat::dubbo::BodyLimits limits = {}) : provider(limits) {
    handler = provider.channelHandler();
    handler.onConnected(channel);
  }
  ~ProviderRig() { handler.onClosed(channel, wheelbeat::net::CloseReason{}); }
  ProviderRig(const ProviderRig&) = delete;
  ProviderRig& operator=(const ProviderRig&) = delete;

  void call(const std::string& body, bool twoWay = true) {
    namespace net = wheelbeat::net;
    net::FrameView frame;
    frame.flags = net::flag::kRequest | (twoWay ? net::flag::kTwoWay : 0) | net::kHessian2;
    frame.id = 1;
    frame.body = body;
    provider.onFrame(channel, frame);
  }

  wheelbeat::dubbo::Provider provider;
  LastFrameChannel channel;
  wheelbeat::net::ChannelHandler handler;
};

}  // namespace wbdubbo
