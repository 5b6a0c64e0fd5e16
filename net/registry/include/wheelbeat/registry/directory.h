// Directory: the consumer's side of membership. It subscribes to one service and keeps exactly one
// TcpClient per provider in the current list:
//   - a provider that appears is connected at once (its client starts when the list arrives);
//   - a provider that leaves has its client closed within that notification: its reconnect task
//     ends with it, so no attempt is made to a provider the registry no longer lists (Dubbo's
//     oldest complaint: consumers reconnecting for ever to providers that left). Calls still in
//     flight on it (Channel::pendingRequests()) may finish first: it is no longer picked nor
//     listed, and closes once they are answered or after `leaveDrain` (a provider shutting
//     down gracefully answers them: see registry/shutdown.h);
//   - a provider url's `heartbeat` parameter (ms) sets that client's heartbeat interval (Dubbo
//     does this: providers advertise their own), clamped to [minHeartbeat, maxHeartbeat].
//
// Empty-list protection (Dubbo's `empty protection`, on by default): a notification that would
// remove every provider while the registry link is down, or within `protectionWindow` after it
// came back (the providers may not have re-registered yet after a registry restart), is held
// back: the clients stay, the hold is counted (Stats::emptyListsHeld), and the list is applied as
// soon as the registry is healthy again (checked every second, and at every later notification).
//
//   registry::Directory directory(loop, timer, *registry, "org.example.Greeter", options);
//   directory.start();                          // subscribes
//   if (auto client = directory.pick()) client->channel().request(...);
//   directory.close();                          // unsubscribes, closes every client
//
// Threads: every member function, any thread; close() (and the destructor) off the loop thread
// wait until the directory is closed and its last events ran. Events and the handler run on the
// loop thread. A client closed on the loop thread (a provider that left) finishes closing in a
// later loop iteration: its onClosed event comes then, after the handler's onClosed of that close.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/tasks/task_listener.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::registry {

struct DirectoryOptions {
  // Every provider's client: heartbeat, reconnect backoff, connect timeout, limits, and
  // client.taskListener / taskMetrics, which observe every provider client's heartbeat and
  // reconnect tasks (may be null; shared by all). `server` is replaced by the provider's address,
  // heartbeat.interval by its `heartbeat` parameter.
  net::ClientOptions client{};
  bool emptyProtection = true;
  // How long calls in flight to a provider that left may still finish before its client closes
  // (checked every 10 ms). 0 = close at once (they fail as Closed). >= 0.
  std::chrono::nanoseconds leaveDrain = std::chrono::seconds(5);
  // How long after the registry link came back an empty list is still distrusted. Usually the
  // registry's session (RegistryOptions::session): providers re-register within it. >= 0.
  std::chrono::nanoseconds protectionWindow = std::chrono::seconds(60);
  // Bounds of a provider's advertised heartbeat. 0 < minHeartbeat <= maxHeartbeat.
  std::chrono::nanoseconds minHeartbeat = std::chrono::seconds(1);
  std::chrono::nanoseconds maxHeartbeat = std::chrono::minutes(5);
  // Keeps only the providers this consumer may call (e.g. Dubbo's version and group match); null
  // = every provider. Called on the loop thread; must not throw (a throw counts as "no").
  std::function<bool(std::string_view url)> accept;
};

// Throws std::invalid_argument naming the field, e.g.
// "DirectoryOptions.minHeartbeat = 0s (expected: > 0)". Thread: any.
void validate(const DirectoryOptions& options);
// validate(options), then against the wheel of tick `tick` that runs the clients' tasks:
// minHeartbeat (the shortest interval a provider's clients may get) and the client's heartbeat
// periods at least 2 ticks ("DirectoryOptions.minHeartbeat = 0.1s (expected: at least 2 wheel
// ticks = 0.2s; the wheel's tick is 0.1s)"). The Directory checks this with its timer's
// tickDuration(), so a bad option fails at construction, not when the first provider comes.
void validate(const DirectoryOptions& options, std::chrono::nanoseconds tick);

struct DirectoryEvents {
  // The list the directory now follows (sorted provider urls), after each applied change.
  std::function<void(const std::vector<std::string>& urls)> onList = {};
  // A provider's client is connected / closed for good (it left the list, or close()).
  std::function<void(const std::string& url, net::Channel& channel)> onConnected = {};
  std::function<void(const std::string& url, const net::CloseReason& why)> onClosed = {};
  // An empty list was held back (see the file comment), with the number of providers kept.
  std::function<void(std::size_t kept)> onEmptyHeld = {};
  // Every close of a provider's connection (after the handler's onClosed): a client that still
  // follows its provider then reconnects; the last one (left the list, close()) also gets
  // onClosed. E.g. CloseKind::Reconnect: its reconnect task found the link half-open.
  std::function<void(const std::string& url, net::Channel& channel, const net::CloseReason& why)>
      onDisconnected = {};
};

class Directory {
public:
  // `registry`, `loop` and `timer` must outlive the directory (the loop and the timer end the
  // process naming "Directory <service>" otherwise, core/users.h; the timer stopped first closes
  // it). `handler` serves every provider's channel (its onConnected / onClosed run before the
  // directory's events). Throws std::invalid_argument for an invalid service name or options.
  Directory(net::EventLoop& loop, core::HashedWheelTimer& timer, Registry& registry,
            std::string service, DirectoryOptions options, net::ChannelHandler handler = {},
            DirectoryEvents events = {});
  ~Directory();  // close()
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;

  // Subscribes (through the registry's failback: a registry that is down now is retried).
  void start();
  // Unsubscribes and closes every client; no event after it returns (off the loop thread).
  // Idempotent.
  void close();

  struct Provider {
    std::string url;
    net::Endpoint endpoint;
    net::ClientState state = net::ClientState::Disconnected;
    std::chrono::nanoseconds heartbeat{0};  // the interval its client uses
  };
  // The providers followed now, sorted by url.
  [[nodiscard]] std::vector<Provider> providers() const;
  // The next connected provider's client, round robin; null when none is connected. The client
  // stays valid while the caller holds it, even if the provider leaves meanwhile (then closed).
  [[nodiscard]] std::shared_ptr<net::TcpClient> pick();
  // The client of the provider `url` in whatever state it is; null when `url` is not followed.
  // Same lifetime rule as pick(). For callers that choose among providers themselves.
  [[nodiscard]] std::shared_ptr<net::TcpClient> client(const std::string& url) const;

  struct Stats {
    std::uint64_t notifications = 0;   // lists received from the registry
    std::uint64_t listsApplied = 0;    // of which changed the providers followed
    std::uint64_t emptyListsHeld = 0;  // empty lists held back (protection)
    std::uint64_t clientsOpened = 0;
    std::uint64_t clientsClosed = 0;  // providers that left, and close()
    std::uint64_t rejected = 0;       // urls refused: not accepted, or not host:port shaped
  };
  [[nodiscard]] Stats stats() const;
  // Writes wheelbeat_directory_* (core/metrics.h): providers followed, stats().notifications and
  // stats().emptyListsHeld. Any thread.
  void writeMetrics(core::MetricsWriter& out) const;

  class Impl;

private:
  std::shared_ptr<Impl> impl_;
  core::Users::Use timerUse_;  // the timer must outlive this directory (core/users.h)
  core::Users::Use loopUse_;   // and so must the loop
};

}  // namespace wheelbeat::registry
