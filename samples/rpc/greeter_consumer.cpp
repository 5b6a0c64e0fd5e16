// The consumer side of the greeter (see greeter.h): a cluster::ServiceClient decides where each
// call goes and dubbo::invoke makes the Dubbo call; this file only reads the answer, and keeps the
// figures a status display wants (the answers per provider, the registry's list, half-open links).
#include "greeter.h"

#include <wheelbeat/dubbo/consumer.h>
#include <wheelbeat/registry/backend.h>
#include <wheelbeat/tasks/task_listener.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>

namespace cluster = wheelbeat::cluster;
namespace dubbo = wheelbeat::dubbo;
namespace hessian = wheelbeat::hessian;
namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tasks = wheelbeat::tasks;
using SteadyClock = std::chrono::steady_clock;

namespace samples::rpc {

namespace {

// Counts the reconnects the provider links' reconnect tasks forced on a silent (half-open) link;
// a reconnect after a plain disconnect is not one. Wheel thread.
class HalfOpenCounter final : public tasks::TaskListener {
public:
  void onReconnect(tasks::Channel&, std::string_view reason, std::int64_t,
                   std::chrono::nanoseconds) override {
    if (reason != "disconnected") ++count;
  }
  std::atomic<std::uint64_t> count{0};
};

// The registry's latest list of the greeter's providers (notify: loop thread).
class ListFollower final : public registry::NotifyListener {
public:
  void notify(const std::string&, const std::vector<std::string>& providers) override {
    const std::lock_guard lock(mutex);
    urls = providers;
    ++notifications;
  }
  mutable std::mutex mutex;
  std::vector<std::string> urls;
  std::uint64_t notifications = 0;
};

// What one provider's answers were, as this consumer saw them.
struct Figures {
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  std::optional<SteadyClock::time_point> lastOk;
};

Reply replyOf(const dubbo::Outcome& o) {
  Reply r{.ok = false,
          .greeting = {},
          .provider = o.provider,
          .error = o.error,
          .message = o.message,
          .rtt = o.latency,
          .attempts = o.attempts,
          .hedgeWon = o.hedgeWon};
  if (o.kind == dubbo::OutcomeKind::Exception) {
    r.error = "exception";
    r.message = fmt::format("{}: {}", o.exceptionClass, o.message);
  } else if (o.kind == dubbo::OutcomeKind::Value) {
    if (o.value.type() == hessian::Type::String) {
      r.ok = true;
      r.greeting = o.value.asString();
    } else {  // also a failsafe's empty success: it carries no greeting
      r.error = o.message.empty() ? "bad-response" : o.message;
    }
  }
  return r;
}

}  // namespace

struct GreeterConsumer::State {
  State(net::EventLoop& l, wheelbeat::core::HashedWheelTimer& t, GreeterOptions o)
      : loop(l), timer(t), options(std::move(o)) {
    if (options.cluster.directory.client.taskListener) {
      throw std::invalid_argument(
          "GreeterOptions.cluster.directory.client.taskListener is set (expected: null; the "
          "consumer observes the provider links with its own)");
    }
    options.cluster.directory.client.taskListener = halfOpens;
    cluster::validate(options.cluster);
  }

  std::shared_ptr<cluster::ServiceClient> clientRef() const {
    const std::lock_guard lock(mutex);
    return client;
  }
  void count(const Reply& r) {
    if (r.provider.empty()) return;
    const std::lock_guard lock(mutex);
    Figures& f = figures[r.provider];
    if (r.ok) {
      ++f.ok;
      f.lastOk = SteadyClock::now();
    } else {
      ++f.failed;
    }
  }

  net::EventLoop& loop;
  wheelbeat::core::HashedWheelTimer& timer;
  GreeterOptions options;
  const std::shared_ptr<HalfOpenCounter> halfOpens = std::make_shared<HalfOpenCounter>();
  const std::shared_ptr<ListFollower> follower = std::make_shared<ListFollower>();
  mutable std::mutex mutex;  // guards what follows
  std::shared_ptr<cluster::ServiceClient> client;
  registry::Registry* registry = nullptr;
  std::map<std::string, Figures> figures;
  bool closed = false;
};

GreeterConsumer::GreeterConsumer(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 GreeterOptions options)
    : state_(std::make_shared<State>(loop, timer, std::move(options))) {}

GreeterConsumer::~GreeterConsumer() { close(); }

void GreeterConsumer::subscribe(registry::Registry& registry) {
  const std::lock_guard lock(state_->mutex);
  if (state_->client || state_->closed) {
    throw std::logic_error("GreeterConsumer::subscribe: already subscribed or closed");
  }
  state_->client = std::make_shared<cluster::ServiceClient>(
      state_->loop, state_->timer, registry, std::string(kGreeterService), state_->options.cluster);
  state_->registry = &registry;
  registry.subscribe(std::string(kGreeterService), state_->follower);
  state_->client->start();
}

void GreeterConsumer::sayHello(const std::string& name, Done done) {
  const auto client = state_->clientRef();
  if (!client) throw std::logic_error("GreeterConsumer::sayHello before subscribe()");
  dubbo::Call call{.interface = std::string(kGreeterService),
                   .method = std::string(kSayHello),
                   .descriptor = std::string(kSayHelloDescriptor),
                   .args = {hessian::Value::string(name)}};
  dubbo::invoke(
      *client, call,
      [weak = std::weak_ptr<State>(state_), done = std::move(done)](const dubbo::Outcome& outcome) {
        const Reply reply = replyOf(outcome);
        if (const auto s = weak.lock()) s->count(reply);
        if (done) done(reply);
      });
}

std::vector<std::string> GreeterConsumer::knownProviders() const {
  const std::lock_guard lock(state_->follower->mutex);
  return state_->follower->urls;
}

std::uint64_t GreeterConsumer::notifications() const {
  const std::lock_guard lock(state_->follower->mutex);
  return state_->follower->notifications;
}

std::uint64_t GreeterConsumer::halfOpens() const noexcept {
  return state_->halfOpens->count.load();
}

std::vector<ProviderView> GreeterConsumer::providers() const {
  const std::vector<std::string> known = knownProviders();
  const auto now = SteadyClock::now();
  const std::lock_guard lock(state_->mutex);
  std::map<std::string, ProviderView> views;
  for (const auto& url : known) views[url] = ProviderView{.url = url, .listed = true};
  for (const auto& [url, f] : state_->figures) {
    ProviderView& v = views[url];
    v.url = url;
    v.ok = f.ok;
    v.failed = f.failed;
    if (f.lastOk) v.lastOk = now - *f.lastOk;
  }
  std::vector<ProviderView> out;
  for (auto& [url, v] : views) out.push_back(std::move(v));
  return out;
}

std::size_t GreeterConsumer::listed() const {
  const auto client = state_->clientRef();
  return client ? client->providers() : 0;
}

std::size_t GreeterConsumer::available() const {
  const auto client = state_->clientRef();
  return client ? client->available() : 0;
}

cluster::ServiceClient::Stats GreeterConsumer::stats() const {
  const auto client = state_->clientRef();
  return client ? client->stats() : cluster::ServiceClient::Stats{};
}

void GreeterConsumer::writeMetrics(wheelbeat::core::MetricsWriter& out) const {
  if (const auto client = state_->clientRef()) client->writeMetrics(out);
}

void GreeterConsumer::close() {
  std::shared_ptr<cluster::ServiceClient> client;
  registry::Registry* registry = nullptr;
  {
    const std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
    state_->closed = true;
    client = state_->client;
    registry = state_->registry;
  }
  if (!client) return;
  client->close();
  try {
    registry->unsubscribe(std::string(kGreeterService), state_->follower);
  } catch (const std::logic_error&) {
    // The registry was closed first: its subscriptions are gone with it.
  }
}

}  // namespace samples::rpc
