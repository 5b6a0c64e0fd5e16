// Directory::Impl (directory_impl.h): each provider list turned into clients — held back by the
// empty-list protection or applied; a joining provider's client opened (its advertised heartbeat,
// the handler wrapped with the directory's events), a leaving one retired, drained, shut.
#include "directory_impl.h"
#include "dubbo_url.h"

#include <wheelbeat/core/log.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::registry {

using std::chrono::nanoseconds;

void Directory::Impl::offer(const std::vector<std::string>& urls) {
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

bool Directory::Impl::holdBack(const std::vector<std::string>& urls) {
  if (!options_.emptyProtection || !urls.empty()) return false;
  {
    std::lock_guard lock(mutex_);
    if (clients_.empty()) return false;  // nothing to protect
  }
  const auto since = registry_.healthySince();
  return !since || timer_.now() - *since < options_.protectionWindow;
}

void Directory::Impl::armRecheck() {
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

void Directory::Impl::recheck() {
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

void Directory::Impl::apply(const std::vector<std::string>& urls) {
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

void Directory::Impl::open(const std::string& url) {
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

nanoseconds Directory::Impl::advertisedHeartbeat(const dubbo::DubboUrl& url) const {
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

net::ChannelHandler Directory::Impl::wrap(const std::string& url) {
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

net::TcpClient::StateCallback Directory::Impl::onStateChange(
    const std::string& url, const std::shared_ptr<std::string>& why) {
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

void Directory::Impl::retire(const std::string& url, Entry entry, std::string_view why) {
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

void Directory::Impl::awaitDrain(const std::shared_ptr<net::TcpClient>& client,
                                 nanoseconds deadline) {
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

void Directory::Impl::drained(const std::shared_ptr<net::TcpClient>& client) {
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

void Directory::Impl::shut(const std::string& /*url*/, Entry& entry, std::string_view why) {
  *entry.why = std::string(why);
  {
    std::lock_guard lock(mutex_);
    ++stats_.clientsClosed;
  }
  entry.client->close(why);
}

}  // namespace wheelbeat::registry
