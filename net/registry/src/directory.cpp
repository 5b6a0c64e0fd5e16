// Directory (contract in directory.h; its Impl: directory_impl.h): the options' checks, the
// subscription, close() and the Directory's calls. The clients of each list: directory_clients.cpp.
#include "directory_impl.h"
#include "dubbo_url.h"
#include "service_url.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/core/option_error.h>
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

// The client options as a provider's client gets them, but for the endpoint.
net::ClientOptions probeClient(const DirectoryOptions& o) {
  net::ClientOptions probe = o.client;
  probe.server.port = 1;  // replaced per provider
  return probe;
}

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
  net::validate(probeClient(o));
}

void validate(const DirectoryOptions& o, nanoseconds tick) {
  validate(o);
  const nanoseconds least = tick > nanoseconds::max() / 2 ? nanoseconds::max() : tick * 2;
  if (o.minHeartbeat < least) {
    reject("minHeartbeat", seconds(o.minHeartbeat),
           fmt::format("at least 2 wheel ticks = {}; the wheel's tick is {}", seconds(least),
                       seconds(tick)));
  }
  try {
    net::validate(probeClient(o), tick);
  } catch (const core::OptionError& e) {
    throw e.within("DirectoryOptions", "client");
  }
}

// A backend notifies on its own thread (its loop, a ZooKeeper callback thread); the list is
// applied on the directory's loop, where its events and clients live. Posts run in order, so
// lists are applied in the order they came.
void Directory::Impl::notify(const std::string& /*service*/, const std::vector<std::string>& urls) {
  if (loop_.isLoopThread()) {
    follow(urls);
    return;
  }
  (void)loop_.post([weak = weak_from_this(), urls] {
    if (const auto self = weak.lock()) self->follow(urls);
  });
}

void Directory::Impl::follow(const std::vector<std::string>& urls) {
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

void Directory::Impl::start() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;  // closed before it started: nothing to follow
  }
  registry_.subscribe(service_, shared_from_this());
}

void Directory::Impl::close() {
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

bool Directory::Impl::acceptable(const std::string& url) {
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

Directory::Directory(net::EventLoop& loop, core::HashedWheelTimer& timer, Registry& registry,
                     std::string service, DirectoryOptions options, net::ChannelHandler handler,
                     DirectoryEvents events) {
  try {
    checkServiceName(service);
  } catch (const RegistryProtocolError& e) {
    throw std::invalid_argument(e.what());
  }
  validate(options, timer.tickDuration());
  const std::string user = "Directory " + service;
  impl_ = std::make_shared<Impl>(loop, timer, registry, std::move(service), std::move(options),
                                 std::move(handler), std::move(events));
  // The timer stopped under the directory: its clients close themselves, so it closes too.
  timerUse_ = timer.use(user, [weak = std::weak_ptr<Impl>(impl_)] {
    if (const auto impl = weak.lock()) impl->close();
  });
  loopUse_ = loop.use(user);
}

Directory::~Directory() { close(); }

void Directory::start() { impl_->start(); }
void Directory::close() {
  timerUse_.quiet();  // closed: a timer stopped from now on has nothing to tell it
  impl_->close();
}
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
