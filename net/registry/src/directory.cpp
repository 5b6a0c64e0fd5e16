// Directory (contract in directory.h): a NotifyListener that turns each provider list into one
// TcpClient per provider. Lists arrive on the loop thread, so clients are opened and closed there;
// the map is also read by pick() / providers() from any thread, hence the mutex. The mutex is
// never held while a client is started or closed (their callbacks may come back into us).
#include "dubbo_url.h"
#include "service_url.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/registry/directory.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

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
  net::ClientOptions probe = o.client;
  probe.server.port = 1;  // replaced per provider
  net::validate(probe);
}

class Directory::Impl final : public tasks::NotifyListener,
                              public std::enable_shared_from_this<Impl> {
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
    }
    for (const auto& url : urls) {
      if (acceptable(url)) accepted.push_back(url);
    }
    std::sort(accepted.begin(), accepted.end());
    offer(std::move(accepted));
  }

  void start() { registry_.subscribe(service_, shared_from_this()); }

  // Off the loop thread the clients' close() waits for each; on it, they close in the background.
  void close() {
    std::map<std::string, Entry> clients;
    {
      std::lock_guard lock(mutex_);
      if (std::exchange(closed_, true)) return;
      clients.swap(clients_);
      recheck_.cancel();
    }
    try {
      registry_.unsubscribe(service_, shared_from_this());
    } catch (const std::exception& e) {  // the registry closed first: nothing to withdraw
      core::log(core::LogLevel::Debug, "wheelbeat: directory {}: unsubscribe: {}", service_,
                e.what());
    }
    for (auto& [url, entry] : clients) shut(url, entry, "directory closed");
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

  Stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

private:
  struct Entry {
    std::shared_ptr<net::TcpClient> client;
    Provider provider;
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
  void offer(std::vector<std::string> urls) {
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

  void recheck() {
    {
      std::lock_guard lock(mutex_);
      if (closed_ || !held_) return;
    }
    offer({});
  }

  void apply(const std::vector<std::string>& urls) {
    std::vector<std::pair<std::string, Entry>> leaving;
    std::vector<std::string> joining;
    {
      std::lock_guard lock(mutex_);
      for (auto it = clients_.begin(); it != clients_.end();) {
        if (std::binary_search(urls.begin(), urls.end(), it->first)) {
          ++it;
        } else {
          leaving.emplace_back(it->first, std::move(it->second));
          it = clients_.erase(it);
        }
      }
      for (const auto& url : urls) {
        if (clients_.count(url) == 0) joining.push_back(url);
      }
      if (!leaving.empty() || !joining.empty()) ++stats_.listsApplied;
    }
    for (auto& [url, entry] : leaving) shut(url, entry, "provider left the registry");
    for (const auto& url : joining) open(url);
    if ((!leaving.empty() || !joining.empty()) && events_.onList) events_.onList(urls);
  }

  void open(const std::string& url) {
    const dubbo::ParsedUrl parsed = dubbo::parseUrl(url);
    net::ClientOptions options = options_.client;
    options.server = net::Endpoint{parsed.url.host, parsed.url.port};
    options.heartbeat.heartbeat = advertisedHeartbeat(parsed.url);
    if (options.heartbeat.idleTimeout != nanoseconds(0) &&
        options.heartbeat.idleTimeout < 2 * options.heartbeat.heartbeat) {
      options.heartbeat.idleTimeout = nanoseconds(0);  // 3 × the provider's interval
    }
    Entry entry{nullptr, Provider{url, options.server, net::ClientState::Disconnected,
                                  options.heartbeat.heartbeat}};
    try {
      entry.client = std::make_shared<net::TcpClient>(loop_, timer_, options, wrap(url));
      entry.client->start();
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "wheelbeat: directory {}: provider {}: {}", service_, url,
                e.what());
      std::lock_guard lock(mutex_);
      ++stats_.rejected;
      return;
    }
    std::lock_guard lock(mutex_);
    ++stats_.clientsOpened;
    clients_.emplace(url, std::move(entry));
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
    if (ms <= 0) return options_.client.heartbeat.heartbeat;
    return std::clamp<nanoseconds>(std::chrono::milliseconds(ms), options_.minHeartbeat,
                                   options_.maxHeartbeat);
  }

  // The application's handler, then the directory's events.
  net::ChannelHandler wrap(const std::string& url) {
    net::ChannelHandler h = handler_;
    std::weak_ptr<Impl> weak = weak_from_this();
    h.onConnected = [weak, url, inner = handler_.onConnected](net::Channel& ch) {
      if (inner) inner(ch);
      if (auto self = weak.lock(); self && self->events_.onConnected) {
        self->events_.onConnected(url, ch);
      }
    };
    return h;
  }

  void shut(const std::string& url, Entry& entry, std::string_view why) {
    entry.client->close(why);
    {
      std::lock_guard lock(mutex_);
      ++stats_.clientsClosed;
    }
    if (events_.onClosed) {
      events_.onClosed(url, net::CloseReason{net::CloseKind::ClosedByOwner, {}, std::string(why)});
    }
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
  std::size_t next_ = 0;  // round robin position
  bool held_ = false;     // an empty list is held back
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
Directory::Stats Directory::stats() const { return impl_->stats(); }

}  // namespace wheelbeat::registry
