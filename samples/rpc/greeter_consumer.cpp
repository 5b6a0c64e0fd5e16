// The consumer side of the greeter (see greeter.h): a registry::Directory keeps one client per
// listed provider; this file adds what an RPC caller needs on top of it: which links to trust
// (suspect after a timeout or a half-open link), provider choice, calls and failback.
#include "greeter.h"

#include <wheelbeat/net/channel.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>

namespace net = wheelbeat::net;
namespace registry = wheelbeat::registry;
namespace tasks = wheelbeat::tasks;
using SteadyClock = std::chrono::steady_clock;

namespace samples::rpc {

namespace {

// What the consumer remembers about one provider link, beside its client (the directory's).
// Suspect since a moment on the timer's clock (0 = trusted): a read after that moment proves the
// provider alive again.
struct Link {
  std::atomic<std::int64_t> suspectSince{0};
  std::atomic<bool> afterHalfOpen{false};
  std::atomic<std::uint64_t> ok{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> halfOpens{0};

  bool usable(net::TcpClient& client) {
    if (client.state() != net::ClientState::Connected) return false;
    std::int64_t since = suspectSince.load();
    if (since == 0) return true;
    if (client.channel().lastRead().count() <= since) return false;
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
  State(net::EventLoop& l, wheelbeat::core::HashedWheelTimer& t, GreeterOptions o)
      : loop(l), timer(t), options(std::move(o)), invoker(t, options.failback) {
    registry::validate(options.directory);
  }

  // The link record of `url`, made on first use (an event may come before the list).
  std::shared_ptr<Link> link(const std::string& url) {
    const std::lock_guard lock(mutex);
    auto& l = links[url];
    if (!l) l = std::make_shared<Link>();
    return l;
  }
  registry::DirectoryEvents events();
  std::optional<std::string> select(const std::string& avoid);
  void attempt(const std::shared_ptr<Link>& link, net::TcpClient& client, const std::string& url,
               const std::string& body, const std::shared_ptr<Outcome>& outcome,
               tasks::Completion done);

  net::EventLoop& loop;
  wheelbeat::core::HashedWheelTimer& timer;
  const GreeterOptions options;
  tasks::FailbackInvoker invoker;
  std::atomic<std::uint64_t> roundRobin{0};
  std::atomic<std::uint64_t> halfOpens{0};
  // Set once by subscribe(), before any call can use it; reset by close() only after every
  // pending retry was cancelled. Read through directoryRef() under the mutex.
  std::shared_ptr<registry::Directory> directory;
  mutable std::mutex mutex;  // guards `directory`, `links` and `closed`
  std::map<std::string, std::shared_ptr<Link>> links;
  bool closed = false;

  std::shared_ptr<registry::Directory> directoryRef() const {
    const std::lock_guard lock(mutex);
    return directory;
  }
};

// Events of the directory (loop thread): the links follow its list; a connection its reconnect
// task dropped as half-open (read idle) makes that provider suspect, also across the reconnect
// (a frozen peer's kernel still completes the handshake): trusted again once it speaks.
registry::DirectoryEvents GreeterConsumer::State::events() {
  std::weak_ptr<State> weak = weak_from_this();
  registry::DirectoryEvents e;
  e.onList = [weak](const std::vector<std::string>& urls) {
    const auto s = weak.lock();
    if (!s) return;
    const std::lock_guard lock(s->mutex);
    std::erase_if(s->links, [&](const auto& entry) {
      return !std::binary_search(urls.begin(), urls.end(), entry.first);
    });
  };
  e.onDisconnected = [weak](const std::string& url, net::Channel&, const net::CloseReason& why) {
    const auto s = weak.lock();
    if (!s || why.kind != net::CloseKind::Reconnect) return;
    const auto l = s->link(url);
    ++s->halfOpens;
    ++l->halfOpens;
    l->afterHalfOpen = true;
    l->suspectSince = s->timer.now().count();
  };
  e.onConnected = [weak](const std::string& url, net::Channel&) {
    const auto s = weak.lock();
    if (!s) return;
    const auto l = s->link(url);
    if (l->afterHalfOpen.exchange(false)) l->suspectSince = s->timer.now().count();
  };
  return e;
}

std::optional<std::string> GreeterConsumer::State::select(const std::string& avoid) {
  const auto dir = directoryRef();
  if (!dir) return std::nullopt;
  std::vector<std::string> candidates;
  for (const auto& p : dir->providers()) {
    if (p.state != net::ClientState::Connected) continue;
    const auto client = dir->client(p.url);
    if (client && link(p.url)->usable(*client)) candidates.push_back(p.url);
  }
  return tasks::pickEndpoint(candidates, avoid, roundRobin++);
}

void GreeterConsumer::State::attempt(const std::shared_ptr<Link>& link, net::TcpClient& client,
                                     const std::string& url, const std::string& body,
                                     const std::shared_ptr<Outcome>& outcome,
                                     tasks::Completion done) {
  const auto sentAt = SteadyClock::now();
  auto shared = std::make_shared<tasks::Completion>(std::move(done));
  outcome->provider = url;
  const auto onResponse = [link, outcome, shared, sentAt, t = &timer](const net::CallResult& r) {
    std::optional<std::string> greeting;
    if (r.status == net::CallStatus::Ok && r.frameStatus == net::kStatusOk) {
      greeting = decodeString(r.body);
    }
    if (greeting) {
      ++link->ok;
      outcome->greeting = std::move(*greeting);
      outcome->rtt = SteadyClock::now() - sentAt;
      (*shared)(tasks::CallResult::success());
      return;
    }
    ++link->failed;
    if (r.status == net::CallStatus::Timeout) link->suspectSince = t->now().count();
    const char* error = r.status == net::CallStatus::Timeout  ? "timeout"
                        : r.status == net::CallStatus::Closed ? "disconnected"
                                                              : "rejected";
    (*shared)(
        tasks::CallResult::failure(error, r.status == net::CallStatus::Ok ? r.body : r.error));
  };
  const net::RequestResult sent =
      client.channel().request(body, options.callTimeout, onResponse, kStringSerialization);
  if (sent.sent != net::SendResult::Queued) {  // onResponse was dropped: report here
    ++link->failed;
    (*shared)(tasks::CallResult::failure(std::string(net::sendResultName(sent.sent)),
                                         fmt::format("request to {} not sent", url)));
  }
}

GreeterConsumer::GreeterConsumer(net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                                 GreeterOptions options)
    : state_(std::make_shared<State>(loop, timer, std::move(options))) {}

GreeterConsumer::~GreeterConsumer() { close(); }

void GreeterConsumer::subscribe(registry::Registry& registry) {
  {
    const std::lock_guard lock(state_->mutex);
    if (state_->directory || state_->closed) {
      throw std::logic_error("GreeterConsumer::subscribe: already subscribed or closed");
    }
  }
  auto directory = std::make_shared<registry::Directory>(
      state_->loop, state_->timer, registry, std::string(kGreeterService),
      state_->options.directory, net::ChannelHandler{}, state_->events());
  {
    const std::lock_guard lock(state_->mutex);
    state_->directory = directory;
  }
  directory->start();
}

void GreeterConsumer::sayHello(const std::string& name, Done done) {
  const std::weak_ptr<State> weak = state_;
  const std::string body = encodeString(name);
  auto outcome = std::make_shared<Outcome>();
  auto select = [weak](const std::string& avoid) -> std::optional<std::string> {
    const auto s = weak.lock();
    return s ? s->select(avoid) : std::nullopt;
  };
  auto call = [weak, body, outcome](const std::string& url, tasks::Completion attemptDone) {
    const auto s = weak.lock();
    const auto dir = s ? s->directoryRef() : nullptr;
    const auto client = dir ? dir->client(url) : nullptr;
    if (!client) {
      attemptDone(tasks::CallResult::failure("no-endpoint", url + " is gone"));
      return;
    }
    s->attempt(s->link(url), *client, url, body, outcome, std::move(attemptDone));
  };
  auto finish = [outcome, done = std::move(done)](const tasks::CallResult& r) {
    if (!done) return;
    done(Reply{r.ok, outcome->greeting, outcome->provider,
               r.ok ? std::string() : fmt::format("{}: {}", r.error, r.message), outcome->rtt});
  };
  state_->invoker.invoke("sayHello", std::move(select), std::move(call), std::move(finish));
}

std::vector<std::string> GreeterConsumer::knownProviders() const {
  std::vector<std::string> urls;
  if (const auto dir = state_->directoryRef()) {
    for (const auto& p : dir->providers()) urls.push_back(p.url);
  }
  return urls;
}

std::uint64_t GreeterConsumer::halfOpens() const noexcept { return state_->halfOpens.load(); }

std::uint64_t GreeterConsumer::notifications() const {
  const auto dir = state_->directoryRef();
  return dir ? dir->stats().notifications : 0;
}

void GreeterConsumer::writeMetrics(wheelbeat::core::MetricsWriter& out) const {
  if (const auto dir = state_->directoryRef()) dir->writeMetrics(out);
}

std::vector<ProviderView> GreeterConsumer::providers() const {
  std::vector<ProviderView> out;
  const auto dir = state_->directoryRef();
  if (!dir) return out;
  for (const auto& p : dir->providers()) {
    const auto client = dir->client(p.url);
    const auto l = state_->link(p.url);
    out.push_back({p.url, p.state, client && l->usable(*client), l->ok.load(), l->failed.load(),
                   l->halfOpens.load()});
  }
  return out;
}

std::int64_t GreeterConsumer::pendingRetries() const { return state_->invoker.pendingRetries(); }

void GreeterConsumer::close() {
  (void)state_->invoker.stop();
  std::shared_ptr<registry::Directory> directory;
  {
    const std::lock_guard lock(state_->mutex);
    state_->closed = true;
    directory = state_->directory;
  }
  if (directory) directory->close();
}

}  // namespace samples::rpc
