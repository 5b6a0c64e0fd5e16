// Directory::Impl (directory.h's Directory, behind its pimpl): the class, shared by directory.cpp
// (the subscription, close(), the Directory's calls) and directory_clients.cpp (each list turned
// into clients: opened, retired, drained, shut). Private to the registry layer.
//
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
#pragma once

#include "dubbo_url.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::registry {

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

  // Any thread: the list is followed on the loop thread (follow()).
  void notify(const std::string& /*service*/, const std::vector<std::string>& urls) override;
  void follow(const std::vector<std::string>& urls);
  void start();

  // Off the loop thread the clients' close() waits for each, then the posted onClosed events are
  // drained; on it, the clients close in the background and their events follow.
  void close();
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

  bool acceptable(const std::string& url);

  // A new list (loop thread): applied, or held back by the empty-list protection.
  void offer(const std::vector<std::string>& urls);
  bool holdBack(const std::vector<std::string>& urls);

  // While an empty list is held: once a second, whether the registry is healthy enough now.
  void armRecheck();

  // The held list is the empty one (a non-empty list is never held). Still distrusted: look again
  // in a second, without counting it again (Stats::emptyListsHeld counts lists received).
  void recheck();
  void apply(const std::vector<std::string>& urls);
  void open(const std::string& url);

  // The provider's own interval (its url's `heartbeat`, ms), clamped; else the configured one.
  std::chrono::nanoseconds advertisedHeartbeat(const dubbo::DubboUrl& url) const;

  // The application's handler, then the directory's events.
  net::ChannelHandler wrap(const std::string& url);

  // Reports the client's final close (see the file comment): posted when it reaches Closed, so
  // it runs after the handler's onClosed of that close. `why` is set before close() is called.
  net::TcpClient::StateCallback onStateChange(const std::string& url,
                                              const std::shared_ptr<std::string>& why);

  // A provider that left: closed now, or once its calls in flight are answered (leaveDrain).
  void retire(const std::string& url, Entry entry, std::string_view why);
  void awaitDrain(const std::shared_ptr<net::TcpClient>& client, std::chrono::nanoseconds deadline);
  void drained(const std::shared_ptr<net::TcpClient>& client);
  void shut(const std::string& /*url*/, Entry& entry, std::string_view why);
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

}  // namespace wheelbeat::registry
