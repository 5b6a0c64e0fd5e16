// The consumer side of the greeter (see greeter.h): provider links, choice, calls, failback.
#include "greeter.h"

#include <wheelbeat/net/channel.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tasks = wheelbeat::tasks;
using SteadyClock = std::chrono::steady_clock;

namespace samples::rpc {

namespace {

// One provider connection. Suspect since a moment on the timer's clock (0 = trusted): a read
// after that moment proves the provider alive again.
struct Link {
  std::string url;
  std::unique_ptr<net::TcpClient> client;
  std::atomic<std::int64_t> suspectSince{0};
  std::atomic<bool> afterHalfOpen{false};
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> halfOpens{0};

  bool usable() {
    if (client->state() != net::ClientState::Connected) return false;
    std::int64_t since = suspectSince.load();
    if (since == 0) return true;
    if (client->channel().lastRead().count() <= since) return false;
    suspectSince.compare_exchange_strong(since, 0);  // it answered since: trust it again
    return true;
  }
};

// What the successful (or last) attempt of one sayHello left for its final callback.
struct Outcome {
  std::string greeting;
  std::string provider;
  std::chrono::nanoseconds rtt{0};
};

}  // namespace

struct GreeterConsumer::State : std::enable_shared_from_this<State> {
  State(net::EventLoop& l, wheelbeat::core::HashedWheelTimer& t, GreeterOptions o,
        std::shared_ptr<tasks::TaskMetrics> m)
      : loop(l),
        timer(t),
        options(std::move(o)),
        metrics(std::move(m)),
        invoker(t, options.failback) {}

  std::shared_ptr<Link> makeLink(const std::string& url, const net::Endpoint& endpoint);
  std::shared_ptr<Link> find(const std::string& url) const {
    const std::lock_guard lock(mutex);
    const auto it = links.find(url);
    return it == links.end() ? nullptr : it->second;
  }
  std::optional<std::string> select(const std::string& avoid);
  void attempt(const std::shared_ptr<Link>& link, const std::string& body,
               const std::shared_ptr<Outcome>& outcome, tasks::Completion done);

  net::EventLoop& loop;
  wheelbeat::core::HashedWheelTimer& timer;
  const GreeterOptions options;
  const std::shared_ptr<tasks::TaskMetrics> metrics;
  tasks::FailbackInvoker invoker;
  std::atomic<std::uint64_t> roundRobin{0};
  std::atomic<std::uint64_t> halfOpens{0};
  std::mutex syncMutex;      // one sync() at a time
  mutable std::mutex mutex;  // guards everything below
  std::map<std::string, std::shared_ptr<Link>> links;
  std::vector<std::string> latest;  // the registry's last list
  bool dirty = false;
  bool closed = false;
  std::uint64_t notifications = 0;
};

namespace {

// The registry's notifications (loop thread): only remembered here; sync() acts on them off the
// loop, because closing a connection waits for the loop.
class ProviderListener final : public tasks::NotifyListener {
public:
  explicit ProviderListener(std::weak_ptr<GreeterConsumer::State> state)
      : state_(std::move(state)) {}
  void notify(const std::string&, const std::vector<std::string>& providers) override {
    const auto s = state_.lock();
    if (!s) return;
    const std::lock_guard lock(s->mutex);
    s->latest = providers;
    s->dirty = true;
    ++s->notifications;
  }

private:
  std::weak_ptr<GreeterConsumer::State> state_;
};

}  // namespace

std::shared_ptr<Link> GreeterConsumer::State::makeLink(const std::string& url,
                                                       const net::Endpoint& endpoint) {
  auto link = std::make_shared<Link>();
  link->url = url;
  std::weak_ptr<Link> weak = link;
  net::ChannelHandler h;
  h.onClosed = [weak, t = &timer, total = &halfOpens](net::Channel&, const net::CloseReason& why) {
    const auto l = weak.lock();
    if (!l || why.kind != net::CloseKind::Reconnect) return;
    ++*total;
    ++l->halfOpens;  // the reconnect task found it read-idle: half-open (or frozen)
    l->afterHalfOpen = true;
    l->suspectSince = t->now().count();
  };
  h.onConnected = [weak, t = &timer](net::Channel&) {
    const auto l = weak.lock();
    // A frozen peer's kernel still completes the handshake: keep distrusting it until it speaks.
    if (l && l->afterHalfOpen.exchange(false)) l->suspectSince = t->now().count();
  };
  net::ClientOptions o = options.client;
  o.server = endpoint;
  link->client = std::make_unique<net::TcpClient>(loop, timer, std::move(o), std::move(h), nullptr,
                                                  nullptr, metrics);
  link->client->start();
  return link;
}

std::optional<std::string> GreeterConsumer::State::select(const std::string& avoid) {
  std::vector<std::shared_ptr<Link>> all;
  {
    const std::lock_guard lock(mutex);
    for (const auto& [url, link] : links) all.push_back(link);
  }
  std::vector<std::string> candidates;
  for (const auto& link : all) {
    if (link->usable()) candidates.push_back(link->url);
  }
  return tasks::pickEndpoint(candidates, avoid, roundRobin++);
}

void GreeterConsumer::State::attempt(const std::shared_ptr<Link>& link, const std::string& body,
                                     const std::shared_ptr<Outcome>& outcome,
                                     tasks::Completion done) {
  const auto sentAt = SteadyClock::now();
  auto shared = std::make_shared<tasks::Completion>(std::move(done));
  outcome->provider = link->url;
  std::weak_ptr<Link> weak = link;
  const auto onResponse = [weak, outcome, shared, sentAt, t = &timer](const net::CallResult& r) {
    const auto l = weak.lock();
    std::optional<std::string> greeting;
    if (r.status == net::CallStatus::Ok && r.frameStatus == net::kStatusOk) {
      greeting = decodeString(r.body);
    }
    if (greeting) {
      if (l) ++l->ok;
      outcome->greeting = std::move(*greeting);
      outcome->rtt = SteadyClock::now() - sentAt;
      (*shared)(tasks::CallResult::success());
      return;
    }
    if (l) ++l->failed;
    if (l && r.status == net::CallStatus::Timeout) l->suspectSince = t->now().count();
    const char* error = r.status == net::CallStatus::Timeout  ? "timeout"
                        : r.status == net::CallStatus::Closed ? "disconnected"
                                                              : "rejected";
    (*shared)(
        tasks::CallResult::failure(error, r.status == net::CallStatus::Ok ? r.body : r.error));
  };
  const net::RequestResult sent =
      link->client->channel().request(body, options.callTimeout, onResponse, kStringSerialization);
  if (sent.sent != net::SendResult::Queued) {  // onResponse was dropped: report here
    ++link->failed;
    (*shared)(tasks::CallResult::failure(std::string(net::sendResultName(sent.sent)),
                                         fmt::format("request to {} not sent", link->url)));
  }
}

GreeterConsumer::GreeterConsumer(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 GreeterOptions options,
                                 std::shared_ptr<tasks::TaskMetrics> metrics)
    : state_(std::make_shared<State>(loop, timer, std::move(options), std::move(metrics))) {}

GreeterConsumer::~GreeterConsumer() { close(); }

void GreeterConsumer::subscribe(registry::Registry& registry) {
  registry.subscribe(std::string(kGreeterService), std::make_shared<ProviderListener>(state_));
}

void GreeterConsumer::sync() {
  const std::lock_guard syncLock(state_->syncMutex);
  std::set<std::string> wanted;
  std::vector<std::shared_ptr<Link>> removed;
  {
    const std::lock_guard lock(state_->mutex);
    if (!state_->dirty || state_->closed) return;
    state_->dirty = false;
    wanted.insert(state_->latest.begin(), state_->latest.end());
    for (auto it = state_->links.begin(); it != state_->links.end();) {
      if (wanted.erase(it->first) != 0) {
        ++it;  // still listed: keep the connection
      } else {
        removed.push_back(it->second);
        it = state_->links.erase(it);
      }
    }
  }
  for (const auto& link : removed) link->client->close("provider left the registry");
  for (const auto& url : wanted) {  // what is left: providers new to us
    const auto endpoint = endpointOfUrl(url);
    if (!endpoint) continue;  // not an address we can dial: ignored, as Dubbo ignores bad urls
    auto link = state_->makeLink(url, *endpoint);
    const std::lock_guard lock(state_->mutex);
    state_->links.emplace(url, std::move(link));
  }
}

void GreeterConsumer::sayHello(const std::string& name, Done done) {
  sync();
  const std::weak_ptr<State> weak = state_;
  const std::string body = encodeString(name);
  auto outcome = std::make_shared<Outcome>();
  auto select = [weak](const std::string& avoid) -> std::optional<std::string> {
    const auto s = weak.lock();
    return s ? s->select(avoid) : std::nullopt;
  };
  auto call = [weak, body, outcome](const std::string& url, tasks::Completion attemptDone) {
    const auto s = weak.lock();
    const auto link = s ? s->find(url) : nullptr;
    if (!link) {
      attemptDone(tasks::CallResult::failure("no-endpoint", url + " is gone"));
      return;
    }
    s->attempt(link, body, outcome, std::move(attemptDone));
  };
  auto finish = [outcome, done = std::move(done)](const tasks::CallResult& r) {
    if (!done) return;
    done(Reply{r.ok, outcome->greeting, outcome->provider,
               r.ok ? std::string() : fmt::format("{}: {}", r.error, r.message), outcome->rtt});
  };
  state_->invoker.invoke("sayHello", std::move(select), std::move(call), std::move(finish));
}

std::vector<std::string> GreeterConsumer::knownProviders() const {
  const std::lock_guard lock(state_->mutex);
  return state_->latest;
}

std::uint64_t GreeterConsumer::halfOpens() const noexcept { return state_->halfOpens.load(); }

std::uint64_t GreeterConsumer::notifications() const {
  const std::lock_guard lock(state_->mutex);
  return state_->notifications;
}

std::vector<ProviderView> GreeterConsumer::providers() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<ProviderView> out;
  for (const auto& [url, l] : state_->links) {
    out.push_back({url, l->client->state(), l->usable(), l->ok.load(), l->failed.load(),
                   l->halfOpens.load()});
  }
  return out;
}

std::int64_t GreeterConsumer::pendingRetries() const { return state_->invoker.pendingRetries(); }

void GreeterConsumer::close() {
  (void)state_->invoker.stop();
  std::map<std::string, std::shared_ptr<Link>> links;
  {
    const std::lock_guard lock(state_->mutex);
    state_->closed = true;
    links.swap(state_->links);
  }
  for (const auto& [url, link] : links) link->client->close("consumer closed");
}

}  // namespace samples::rpc
