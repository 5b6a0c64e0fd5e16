// The embedded engine: the RegistryBackend calls over one TcpClient to a RegistryServer.
// Requests go out with Channel::request(); notify frames come in through onFrame and reach the
// listeners of their service.
#include "registry_protocol.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/registry/embedded_engine.h>

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace wheelbeat::registry {

namespace {

// What comes in from the connection: notify frames for the listeners, connection events for
// the Registry. Shared with the client's handler through a weak_ptr: the engine may be destroyed
// on the loop thread (its last owner a completion), while the client is still closing.
struct Inbound {
  std::mutex mutex;
  std::shared_ptr<EngineEvents> events;  // from start() until close()
  std::map<std::string, std::set<std::shared_ptr<NotifyListener>>> listeners;

  void onFrame(const net::FrameView& frame);
  // From the handler, after the state change (the channel can send by then).
  void onAttemptOver(bool connected);
};

void Inbound::onFrame(const net::FrameView& frame) {
  if (frame.serialization() != kRegistrySerialization || !frame.isRequest()) return;
  RegistryMessage m;
  try {
    m = decodeRegistryMessage(frame.body);
  } catch (const RegistryProtocolError& e) {
    core::log(core::LogLevel::Warn, "registry client: dropped a bad notify: {}", e.what());
    return;
  }
  if (m.command != RegistryCommand::Notify) return;
  std::vector<std::shared_ptr<NotifyListener>> targets;
  {
    std::lock_guard lock(mutex);
    if (auto it = listeners.find(m.subject); it != listeners.end()) {
      for (const auto& l : it->second) targets.push_back(l);
    }
  }
  for (const auto& l : targets) l->notify(m.subject, m.providers);
}

void Inbound::onAttemptOver(bool connected) {
  std::shared_ptr<EngineEvents> e;
  {
    std::lock_guard lock(mutex);
    e = events;
  }
  if (!e) return;
  if (connected) {
    e->connected();
  } else {
    e->disconnected();
  }
}

class EmbeddedEngineImpl final : public EmbeddedEngine {
public:
  EmbeddedEngineImpl(net::EventLoop& loop, core::HashedWheelTimer& timer,
                     const RegistrySetup& setup);

  void doRegister(const std::string& url, tasks::Completion done) override {
    send({RegistryCommand::Register, url, {}}, std::move(done));
  }
  void doUnregister(const std::string& url, tasks::Completion done) override {
    send({RegistryCommand::Unregister, url, {}}, std::move(done));
  }
  void doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> l,
                   tasks::Completion done) override {
    {
      std::lock_guard lock(inbound_->mutex);
      inbound_->listeners[service].insert(std::move(l));
    }
    send({RegistryCommand::Subscribe, service, {}}, std::move(done));
  }
  void doUnsubscribe(const std::string& service, std::shared_ptr<NotifyListener> l,
                     tasks::Completion done) override {
    {
      std::lock_guard lock(inbound_->mutex);
      auto& listeners = inbound_->listeners;
      if (auto it = listeners.find(service); it != listeners.end()) {
        it->second.erase(l);
        if (it->second.empty()) listeners.erase(it);
      }
    }
    send({RegistryCommand::Unsubscribe, service, {}}, std::move(done));
  }

  void start(std::shared_ptr<EngineEvents> events) override {
    {
      std::lock_guard lock(inbound_->mutex);
      inbound_->events = std::move(events);
    }
    client_->start();
  }
  void close() override {
    client_->close();
    std::lock_guard lock(inbound_->mutex);
    inbound_->events.reset();
  }
  bool isConnected() const noexcept override { return state() == net::ClientState::Connected; }
  net::ClientState state() const noexcept override { return client_->state(); }
  net::TcpClient& connection() noexcept override { return *client_; }

private:
  void send(const RegistryMessage& message, tasks::Completion done);

  const std::chrono::nanoseconds timeout_;
  std::shared_ptr<Inbound> inbound_ = std::make_shared<Inbound>();
  std::optional<net::TcpClient> client_;
};

net::ChannelHandler handlerOf(const std::shared_ptr<Inbound>& inbound) {
  std::weak_ptr<Inbound> weak = inbound;
  net::ChannelHandler handler;
  handler.onFrame = [weak](net::Channel&, const net::FrameView& f) {
    if (auto in = weak.lock()) in->onFrame(f);
  };
  handler.onConnected = [weak](net::Channel&) {
    if (auto in = weak.lock()) in->onAttemptOver(true);
  };
  handler.onClosed = [weak](net::Channel&, const net::CloseReason&) {
    if (auto in = weak.lock()) in->onAttemptOver(false);
  };
  return handler;
}

net::ClientOptions clientOf(const RegistrySetup& setup) {
  validate(setup);
  if (setup.registry.kind != RegistryKind::Embedded) {
    throw std::invalid_argument(
        fmt::format("EmbeddedEngine: RegistryOptions.kind = {} (expected: embedded)",
                    registryKindName(setup.registry.kind)));
  }
  net::ClientOptions client = setup.client;
  client.server = setup.registry.address;
  return client;
}

EmbeddedEngineImpl::EmbeddedEngineImpl(net::EventLoop& loop, core::HashedWheelTimer& timer,
                                       const RegistrySetup& setup)
    : timeout_(setup.requestTimeout) {
  client_.emplace(loop, timer, clientOf(setup), handlerOf(inbound_));
}

void EmbeddedEngineImpl::send(const RegistryMessage& message, tasks::Completion done) {
  const std::string body = encodeRegistryMessage(message);
  auto shared = std::make_shared<tasks::Completion>(std::move(done));
  const net::RequestResult r = client_->channel().request(
      body, timeout_,
      [shared](const net::CallResult& result) {
        if (result.status != net::CallStatus::Ok) {
          (*shared)(tasks::CallResult::failure(
              result.status == net::CallStatus::Timeout ? "timeout" : "disconnected",
              result.error));
        } else if (result.frameStatus != net::kStatusOk) {
          (*shared)(tasks::CallResult::failure("rejected", result.body));
        } else {
          (*shared)(tasks::CallResult::success());
        }
      },
      kRegistrySerialization);
  if (r.sent != net::SendResult::Queued) {
    (*shared)(tasks::CallResult::failure(
        r.sent == net::SendResult::NotConnected ? "disconnected"
                                                : std::string(net::sendResultName(r.sent)),
        fmt::format("registry request not sent: {}", net::sendResultName(r.sent))));
  }
}

}  // namespace

std::unique_ptr<EmbeddedEngine> makeEmbeddedEngine(net::EventLoop& loop,
                                                   core::HashedWheelTimer& timer,
                                                   const RegistrySetup& setup) {
  return std::make_unique<EmbeddedEngineImpl>(loop, timer, setup);
}

}  // namespace wheelbeat::registry
