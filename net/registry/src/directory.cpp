// Directory (contract in directory.h): a NotifyListener that turns each provider list into one
// TcpClient per provider. Lists arrive on the loop thread, so clients are opened and closed there;
// the map is also read by pick() / providers() from any thread, hence the mutex. The mutex is
// never held while a client is started or closed (their callbacks may come back into us).
//
// A client closed on the loop thread only begins closing (TcpClient::close()), and its handler's
// onClosed comes in a later loop iteration. The directory's onClosed event must follow it
// (directory.h), so it is posted from the client's state callback when the client reaches Closed:
// that callback runs just before the handler's onClosed, and the post runs after it. close() off
// the loop thread drains those posts before it returns.
#include "dubbo_url.h"
#include "service_url.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/registry/directory.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace wheelbeat::registry {

using std::chrono::nanoseconds;

namespace {

[[noreturn]] void reject(std::string_view field, std::string_view value,
                         std::string_view expected) {
  throw std::invalid_argument(
      fmt::format("DirectoryOptions.{} = {} (expected: {})", field, value, expected));
}

std::string seconds(nanoseconds d) { return fmt::format("{}", std::chrono::duration<double>(d)); }

}  // namespace

void validate(const DirectoryOptions& o) {
  if (o.minHeartbeat <= nanoseconds(0)) reject("minHeartbeat", seconds(o.minHeartbeat), "> 0");
  if (o.maxHeartbeat < o.minHeartbeat) {
    reject("maxHeartbeat", seconds(o.maxHeartbeat),
           fmt::format(">= minHeartbeat = {}", seconds(o.minHeartbeat)));
  }
  if (o.protectionWindow < nanoseconds(0)) {
    reject("protectionWindow", seconds(o.protectionWindow), ">= 0");
  }
  if (o.leaveDrain < nanoseconds(0)) reject("leaveDrain", seconds(o.leaveDrain), ">= 0");
  net::ClientOptions probe = o.client;
  probe.server.port = 1;  // replaced per provider
  net::validate(probe);
}

class Directory::Impl final : public NotifyListener, public std::enable_shared_from_this<Impl> {
public:
  Impl(net::EventLoop& loop, core::HashedWheelTimer& timer, Registry& registry, std::string service,
       DirectoryOptions options, net::ChannelHandler handler, DirectoryEvents events)
      : loop_(loop),
        timer_(timer),
        registry_(registry),
        service_(std::move(service)),
        options_(std::move(options)),
        handler_(std::move(handler)),
        events_(std::move(events)) {}

  void notify(const std::string& /*service*/, const std::vector<std::string>& urls) override {
    std::vector<std::string> accepted;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      ++stats_.notifications;
      held_ = false;  // a fresh list replaces the one held back (offer() may hold it again)
    }
    for (const auto& url : urls) {
      if (acceptable(url)) accepted.push_back(url);
    }
    std::sort(accepted.begin(), accepted.end());
    offer(accepted);
  }

  void start() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;  // closed before it started: nothing to follow
    }
    registry_.subscribe(service_, shared_from_this());
  }

  // Off the loop thread the clients' close() waits for each, then the posted onClosed events are
  // drained; on it, the clients close in the background and their events follow.
  void close() {
    std::map<std::string, Entry> clients;
    std::vector<Leaving> draining;
    {
      std::lock_guard lock(mutex_);
      if (std::exchange(closed_, true)) return;
      clients.swap(clients_);
      draining.swap(draining_);
      recheck_.cancel();
    }
    try {
      registry_.unsubscribe(service_, shared_from_this());
    } catch (const std::exception& e) {  // the registry closed first: nothing to withdraw
      core::log(core::LogLevel::Debug, "directory {}: unsubscribe: {}", service_, e.what());
    }
    for (auto& [url, entry] : clients) shut(url, entry, "directory closed");
    for (auto& d : draining) shut(d.url, d.entry, "directory closed");
    if (!loop_.isLoopThread()) {
      // Every event posted before this point runs before call() returns (posts run in order). A
      // loop already stopped ran (or dropped) them: nothing to wait for.
      try {
        loop_.call([] {});
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the loop is stopping
      }
    }
  }

  std::vector<Provider> providers() const {
    std::lock_guard lock(mutex_);
    std::vector<Provider> out;
    for (const auto& [url, entry] : clients_) {
      Provider p = entry.provider;
      p.state = entry.client->state();
      out.push_back(std::move(p));
    }
    return out;
  }

  std::shared_ptr<net::TcpClient> pick() {
    std::lock_guard lock(mutex_);
    if (clients_.empty()) return nullptr;
    auto it = clients_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(next_ % clients_.size()));
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (it == clients_.end()) it = clients_.begin();
      ++next_;
      if (it->second.client->state() == net::ClientState::Connected) return it->second.client;
      ++it;
    }
    return nullptr;
  }

  std::shared_ptr<net::TcpClient> client(const std::string& url) const {
    std::lock_guard lock(mutex_);
    const auto it = clients_.find(url);
    return it == clients_.end() ? nullptr : it->second.client;
  }

  Stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

private:
  struct Entry {
    std::shared_ptr<net::TcpClient> client;
    Provider provider;
    std::shared_ptr<std::string> why;  // the reason it was closed for, read by its last event
  };

  bool acceptable(const std::string& url) {
    bool ok = false;
    try {
      ok = !options_.accept || options_.accept(url);
    } catch (...) {  // NOLINT(bugprone-empty-catch): documented as "no"
    }
    if (ok && !dubbo::parseUrl(url).ok) ok = false;
    if (!ok) {
      std::lock_guard lock(mutex_);
      ++stats_.rejected;
    }
    return ok;
  }

  // A new list (loop thread): applied, or held back by the empty-list protection.
  void offer(const std::vector<std::string>& urls) {
    if (holdBack(urls)) {
      std::size_t kept = 0;
      {
        std::lock_guard lock(mutex_);
        ++stats_.emptyListsHeld;
        kept = clients_.size();
        held_ = true;
      }
      if (events_.onEmptyHeld) events_.onEmptyHeld(kept);
      armRecheck();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      held_ = false;
    }
    apply(urls);
  }

  bool holdBack(const std::vector<std::string>& urls) {
    if (!options_.emptyProtection || !urls.empty()) return false;
    {
      std::lock_guard lock(mutex_);
      if (clients_.empty()) return false;  // nothing to protect
    }
    const auto since = registry_.healthySince();
    return !since || timer_.now() - *since < options_.protectionWindow;
  }

  // While an empty list is held: once a second, whether the registry is healthy enough now.
  void armRecheck() {
    std::weak_ptr<Impl> weak = weak_from_this();
    std::lock_guard lock(mutex_);
    if (closed_) return;
    recheck_.cancel();
    recheck_ = timer_.newTimeout(
        [weak, &loop = loop_] {
          loop.post([weak] {
            if (auto self = weak.lock()) self->recheck();
          });
        },
        std::chrono::seconds(1));
  }

  // The held list is the empty one (a non-empty list is never held). Still distrusted: look again
  // in a second, without counting it again (Stats::emptyListsHeld counts lists received).
  void recheck() {
    {
      std::lock_guard lock(mutex_);
      if (closed_ || !held_) return;
    }
    if (holdBack({})) {
      armRecheck();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      held_ = false;
    }
    apply({});
  }

  void apply(const std::vector<std::string>& urls) {
    std::vector<std::pair<std::string, Entry>> leaving;
    std::vector<std::string> joining;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;  // close() took the clients: a list racing with it opens nothing
      for (auto it = clients_.begin(); it != clients_.end();) {
        if (std::binary_search(urls.begin(), urls.end(), it->first)) {
          ++it;
        } else {
          leaving.emplace_back(it->first, std::move(it->second));
          it = clients_.erase(it);
        }
      }
      for (const auto& url : urls) {
        if (!clients_.contains(url)) joining.push_back(url);
      }
      if (!leaving.empty() || !joining.empty()) ++stats_.listsApplied;
    }
    for (auto& [url, entry] : leaving) retire(url, std::move(entry), "provider left the registry");
    for (const auto& url : joining) open(url);
    if ((!leaving.empty() || !joining.empty()) && events_.onList) events_.onList(urls);
  }

  void open(const std::string& url) {
    const dubbo::ParsedUrl parsed = dubbo::parseUrl(url);
    net::ClientOptions options = options_.client;
    options.server = net::Endpoint{parsed.url.host, parsed.url.port};
    options.heartbeat.interval = advertisedHeartbeat(parsed.url);
    if (options.heartbeat.idleTimeout != nanoseconds(0) &&
        options.heartbeat.idleTimeout < 2 * options.heartbeat.interval) {
      options.heartbeat.idleTimeout = nanoseconds(0);  // 3 × the provider's interval
    }
    Entry entry{
        nullptr,
        Provider{url, options.server, net::ClientState::Disconnected, options.heartbeat.interval},
        std::make_shared<std::string>()};
    try {
      entry.client = std::make_shared<net::TcpClient>(loop_, timer_, options, wrap(url),
                                                      onStateChange(url, entry.why));
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "directory {}: provider {}: {}", service_, url, e.what());
      std::lock_guard lock(mutex_);
      ++stats_.rejected;
      return;
    }
    {
      // In the map before it starts: its first events find it (providers(), pick()).
      std::lock_guard lock(mutex_);
      if (closed_) return;  // close() ran meanwhile: never started, nothing to report
      ++stats_.clientsOpened;
      clients_.emplace(url, entry);
    }
    entry.client->start();
  }

  // The provider's own interval (its url's `heartbeat`, ms), clamped; else the configured one.
  nanoseconds advertisedHeartbeat(const dubbo::DubboUrl& url) const {
    const std::string text = url.param("heartbeat");
    std::int64_t ms = 0;
    try {
      ms = text.empty() ? 0 : std::stoll(text);
    } catch (const std::exception&) {
      ms = 0;
    }
    if (ms <= 0) return options_.client.heartbeat.interval;
    return std::clamp<nanoseconds>(std::chrono::milliseconds(ms), options_.minHeartbeat,
                                   options_.maxHeartbeat);
  }

  // The application's handler, then the directory's events.
  net::ChannelHandler wrap(const std::string& url) {
    net::ChannelHandler h = handler_;
    std::weak_ptr<Impl> weak = weak_from_this();
    h.onConnected = [weak, url, inner = handler_.onConnected](net::Channel& ch) {
      if (inner) inner(ch);
      auto self = weak.lock();
      if (!self || !self->events_.onConnected) return;
      {
        std::lock_guard lock(self->mutex_);
        if (self->closed_) return;
      }
      self->events_.onConnected(url, ch);
    };
    h.onClosed = [weak, url, inner = handler_.onClosed](net::Channel& ch,
                                                        const net::CloseReason& why) {
      if (inner) inner(ch, why);
      auto self = weak.lock();
      if (!self || !self->events_.onDisconnected) return;
      self->events_.onDisconnected(url, ch, why);
    };
    return h;
  }

  // Reports the client's final close (see the file comment): posted when it reaches Closed, so
  // it runs after the handler's onClosed of that close. `why` is set before close() is called.
  net::TcpClient::StateCallback onStateChange(const std::string& url,
                                              const std::shared_ptr<std::string>& why) {
    std::weak_ptr<Impl> weak = weak_from_this();
    return [weak, url, why, &loop = loop_](net::ClientState, net::ClientState to) {
      if (to != net::ClientState::Closed) return;
      auto report = [weak, url, why] {
        auto self = weak.lock();
        // A client never shut (dropped unstarted by a racing close()) was never reported open.
        if (!self || !self->events_.onClosed || why->empty()) return;
        self->events_.onClosed(url, net::CloseReason{net::CloseKind::ClosedByOwner, {}, *why});
      };
      if (!loop.post(report)) report();  // the loop is stopping: now, on this thread
    };
  }

  // A provider that left: closed now, or once its calls in flight are answered (leaveDrain).
  void retire(const std::string& url, Entry entry, std::string_view why) {
    if (options_.leaveDrain <= nanoseconds(0) || entry.client->channel().pendingRequests() == 0) {
      shut(url, entry, why);
      return;
    }
    const auto client = entry.client;
    {
      std::lock_guard lock(mutex_);
      draining_.push_back(Leaving{url, std::move(entry), std::string(why)});
    }
    awaitDrain(client, timer_.now() + options_.leaveDrain);
  }

  void awaitDrain(const std::shared_ptr<net::TcpClient>& client, nanoseconds deadline) {
    std::weak_ptr<Impl> weak = weak_from_this();
    try {
      timer_.newTimeout(
          [weak, client, deadline] {
            auto self = weak.lock();
            if (!self) return;
            if (client->channel().pendingRequests() > 0 && self->timer_.now() < deadline) {
              self->awaitDrain(client, deadline);
              return;
            }
            self->loop_.post([weak, client] {
              if (auto s = weak.lock()) s->drained(client);
            });
          },
          std::chrono::milliseconds(10));
    } catch (const std::exception&) {  // the wheel stopped: nothing will wait, close now
      drained(client);
    }
  }

  void drained(const std::shared_ptr<net::TcpClient>& client) {
    std::optional<Leaving> done;
    {
      std::lock_guard lock(mutex_);
      const auto it = std::find_if(draining_.begin(), draining_.end(),
                                   [&](const Leaving& l) { return l.entry.client == client; });
      if (it == draining_.end()) return;  // close() took it
      done = std::move(*it);
      draining_.erase(it);
    }
    shut(done->url, done->entry, done->why);
  }

  void shut(const std::string& /*url*/, Entry& entry, std::string_view why) {
    *entry.why = std::string(why);
    {
      std::lock_guard lock(mutex_);
      ++stats_.clientsClosed;
    }
    entry.client->close(why);
  }

  net::EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  Registry& registry_;
  const std::string service_;
  const DirectoryOptions options_;
  const net::ChannelHandler handler_;
  const DirectoryEvents events_;

  mutable std::mutex mutex_;  // guards everything below
  std::map<std::string, Entry> clients_;
  struct Leaving {
    std::string url;
    Entry entry;
    std::string why;
  };
  std::vector<Leaving> draining_;  // left the list, calls in flight (leaveDrain)
  std::size_t next_ = 0;           // round robin position
  bool held_ = false;              // an empty list is held back
  bool closed_ = false;
  core::Timeout recheck_;
  Stats stats_;
};

Directory::Directory(net::EventLoop& loop, core::HashedWheelTimer& timer, Registry& registry,
                     std::string service, DirectoryOptions options, net::ChannelHandler handler,
                     DirectoryEvents events) {
  try {
    checkServiceName(service);
  } catch (const RegistryProtocolError& e) {
    throw std::invalid_argument(e.what());
  }
  validate(options);
  impl_ = std::make_shared<Impl>(loop, timer, registry, std::move(service), std::move(options),
                                 std::move(handler), std::move(events));
}

Directory::~Directory() { close(); }

void Directory::start() { impl_->start(); }
void Directory::close() { impl_->close(); }
std::vector<Directory::Provider> Directory::providers() const { return impl_->providers(); }
std::shared_ptr<net::TcpClient> Directory::pick() { return impl_->pick(); }
std::shared_ptr<net::TcpClient> Directory::client(const std::string& url) const {
  return impl_->client(url);
}
Directory::Stats Directory::stats() const { return impl_->stats(); }

void Directory::writeMetrics(core::MetricsWriter& out) const {
  const Stats s = stats();
  out.gauge("wheelbeat_directory_providers", static_cast<double>(providers().size()));
  out.counter("wheelbeat_directory_notifications_total", static_cast<double>(s.notifications));
  out.counter("wheelbeat_directory_empty_protections_total", static_cast<double>(s.emptyListsHeld));
}

}  // namespace wheelbeat::registry
