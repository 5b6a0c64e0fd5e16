#include <wheelbeat/core/log.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/registry_client.h>
#include <wheelbeat/net/registry_protocol.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

namespace wheelbeat::net {

// The RegistryBackend over one TcpClient. Requests go out with Channel::request(); notify frames
// come in through onFrame and reach the listeners of their service.
class RegistryClient::Backend final : public tasks::RegistryBackend,
                                      public std::enable_shared_from_this<Backend> {
public:
  Backend(std::chrono::nanoseconds timeout) : timeout_(timeout) {}

  void doRegister(const std::string& url, tasks::Completion done) override {
    send({RegistryCommand::Register, url, {}}, std::move(done));
  }
  void doUnregister(const std::string& url, tasks::Completion done) override {
    send({RegistryCommand::Unregister, url, {}}, std::move(done));
  }
  void doSubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> l,
                   tasks::Completion done) override {
    {
      std::lock_guard lock(mutex_);
      listeners_[service].insert(std::move(l));
    }
    send({RegistryCommand::Subscribe, service, {}}, std::move(done));
  }
  void doUnsubscribe(const std::string& service, std::shared_ptr<tasks::NotifyListener> l,
                     tasks::Completion done) override {
    {
      std::lock_guard lock(mutex_);
      if (auto it = listeners_.find(service); it != listeners_.end()) {
        it->second.erase(l);
        if (it->second.empty()) listeners_.erase(it);
      }
    }
    send({RegistryCommand::Unsubscribe, service, {}}, std::move(done));
  }

  void onFrame(const FrameView& frame);
  void onAttemptOver(bool connected);
  void waitFirstAttempt(std::chrono::nanoseconds bound);

  std::optional<TcpClient> client;
  std::function<void()> onReconnected;  // set once, before start()

private:
  void send(const RegistryMessage& message, tasks::Completion done);

  const std::chrono::nanoseconds timeout_;
  std::mutex mutex_;
  std::condition_variable attempted_;
  bool firstAttemptOver_ = false;
  bool everConnected_ = false;
  std::map<std::string, std::set<std::shared_ptr<tasks::NotifyListener>>> listeners_;
};

void RegistryClient::Backend::send(const RegistryMessage& message, tasks::Completion done) {
  const std::string body = encodeRegistryMessage(message);
  auto shared = std::make_shared<tasks::Completion>(std::move(done));
  const RequestResult r = client->channel().request(
      body, timeout_,
      [shared](const CallResult& result) {
        if (result.status != CallStatus::Ok) {
          (*shared)(tasks::CallResult::failure(
              result.status == CallStatus::Timeout ? "timeout" : "disconnected", result.error));
        } else if (result.frameStatus != kStatusOk) {
          (*shared)(tasks::CallResult::failure("rejected", result.body));
        } else {
          (*shared)(tasks::CallResult::success());
        }
      },
      kRegistrySerialization);
  if (r.sent != SendResult::Queued) {
    (*shared)(tasks::CallResult::failure(
        r.sent == SendResult::NotConnected ? "disconnected" : std::string(sendResultName(r.sent)),
        fmt::format("registry request not sent: {}", sendResultName(r.sent))));
  }
}

void RegistryClient::Backend::onFrame(const FrameView& frame) {
  if (frame.serialization() != kRegistrySerialization || !frame.isRequest()) return;
  RegistryMessage m;
  try {
    m = decodeRegistryMessage(frame.body);
  } catch (const RegistryProtocolError& e) {
    core::log(core::LogLevel::Warn, "registry client: dropped a bad notify: {}", e.what());
    return;
  }
  if (m.command != RegistryCommand::Notify) return;
  std::vector<std::shared_ptr<tasks::NotifyListener>> targets;
  {
    std::lock_guard lock(mutex_);
    if (auto it = listeners_.find(m.subject); it != listeners_.end()) {
      for (const auto& l : it->second) targets.push_back(l);
    }
  }
  for (const auto& l : targets) l->notify(m.subject, m.providers);
}

// From the handler (after the state change, once the channel can send): the first attempt is
// over when it connected or failed; every connect after the first one recovers the registry's
// view of this client.
void RegistryClient::Backend::onAttemptOver(bool connected) {
  bool recover = false;
  {
    std::lock_guard lock(mutex_);
    firstAttemptOver_ = true;
    if (connected) {
      recover = everConnected_;
      everConnected_ = true;
    }
  }
  attempted_.notify_all();
  if (recover && onReconnected) onReconnected();
}

void RegistryClient::Backend::waitFirstAttempt(std::chrono::nanoseconds bound) {
  std::unique_lock lock(mutex_);
  attempted_.wait_for(lock, bound, [this] { return firstAttemptOver_; });
}

RegistryClient::RegistryClient(EventLoop& loop, core::HashedWheelTimer& timer,
                               RegistryOptions registry, ClientOptions client,
                               tasks::FailbackOptions failback,
                               std::chrono::nanoseconds requestTimeout,
                               std::shared_ptr<tasks::FailbackListener> listener,
                               std::shared_ptr<tasks::FailbackMetrics> metrics)
    : connectTimeout_(client.connectTimeout), backend_(std::make_shared<Backend>(requestTimeout)) {
  validate(registry);
  if (requestTimeout <= std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(fmt::format("RegistryClient: requestTimeout = {}ns (expected: > 0)",
                                            requestTimeout.count()));
  }
  if (registry.kind != RegistryKind::Embedded) {
    throw std::invalid_argument(
        "RegistryClient: RegistryOptions.kind = redis (expected: embedded)");
  }
  client.server = registry.address;
  std::weak_ptr<Backend> weak = backend_;
  ChannelHandler handler;
  handler.onFrame = [weak](Channel&, const FrameView& f) {
    if (auto b = weak.lock()) b->onFrame(f);
  };
  handler.onConnected = [weak](Channel&) {
    if (auto b = weak.lock()) b->onAttemptOver(true);
  };
  handler.onClosed = [weak](Channel&, const CloseReason&) {
    if (auto b = weak.lock()) b->onAttemptOver(false);
  };
  backend_->client.emplace(loop, timer, std::move(client), std::move(handler));
  failback_ = std::make_unique<tasks::FailbackRegistry>(timer, backend_, std::move(failback),
                                                        std::move(listener), std::move(metrics));
  backend_->onReconnected = [f = failback_.get()] { f->recover(); };
}

RegistryClient::RegistryClient(EventLoop& loop, core::HashedWheelTimer& timer, RegistrySetup s)
    : RegistryClient(loop, timer, std::move(s.registry), std::move(s.client), std::move(s.failback),
                     s.requestTimeout, std::move(s.listener), std::move(s.metrics)) {}

RegistryClient::~RegistryClient() { close(); }

void RegistryClient::start() {
  backend_->client->start();
  // The connect timeout bounds the attempt; the margin covers the wheel's tick and the loop.
  backend_->waitFirstAttempt(connectTimeout_ + std::chrono::seconds(1));
}

void RegistryClient::close() {
  failback_->stop();
  backend_->client->close();
}

tasks::FailbackRegistry& RegistryClient::failback() noexcept { return *failback_; }
ClientState RegistryClient::state() const noexcept { return backend_->client->state(); }
bool RegistryClient::isConnected() const noexcept { return state() == ClientState::Connected; }
TcpClient& RegistryClient::connection() noexcept { return *backend_->client; }

}  // namespace wheelbeat::net
