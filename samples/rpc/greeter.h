// Greeter: a tiny RPC service ("sayHello": a name in, a greeting out) built on wheelbeat's
// channels, the way a real RPC framework plugs in: its own serialization id in the exchange
// header, its own body format, the registry to find providers, Channel::request() to correlate
// responses by id with a timeout, and tasks::FailbackInvoker to retry failed calls on another
// provider in the background.
//
//   Provider                                    Consumer
//   GreeterProvider p(loop, timer, server);     GreeterConsumer c(loop, timer, options);
//   p.start(*registry);  // listen + register    c.subscribe(*registry);
//                                               c.sayHello("Ada", [](const Reply& r) {...});
//
// The "serialization" (id kStringSerialization): a body is one string, a 4-byte big-endian
// length and then the bytes. A provider answers status 20 (OK) with the greeting, or 40 (bad
// request) with the reason when a body does not decode.
//
// Provider choice: round robin over the providers the registry lists whose connection is
// usable: Connected, and not suspect. A connection becomes suspect when a call on it timed out
// or when its reconnect task found it half-open; it is trusted again once something was read
// from it after that (a heartbeat answer, a response). A frozen provider's kernel still accepts
// connections, so "Connected" alone would send calls into the void.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/shutdown.h>
#include <wheelbeat/tasks/failback_invoker.h>
#include <wheelbeat/tasks/task_listener.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samples::rpc {

inline constexpr std::uint8_t kStringSerialization = 29;  // ours: Dubbo uses 2..21, registry 30
inline constexpr std::string_view kGreeterService = "greeter";

// The serialization: 4-byte big-endian length, then the bytes. decodeString() returns nullopt
// when the length does not match the body.
[[nodiscard]] std::string encodeString(std::string_view text);
[[nodiscard]] std::optional<std::string> decodeString(std::string_view body);

// "wheelbeat://127.0.0.1:20880/greeter" and back (nullopt when it is not host:port shaped).
[[nodiscard]] std::string providerUrl(const wheelbeat::net::Endpoint& endpoint);
[[nodiscard]] std::optional<wheelbeat::net::Endpoint> endpointOfUrl(std::string_view url);

class GreeterProvider {
public:
  // `advertiseHost`: the address consumers should dial (the url's host).
  GreeterProvider(wheelbeat::net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                  wheelbeat::net::ServerOptions options, std::string advertiseHost = "127.0.0.1");
  ~GreeterProvider();
  GreeterProvider(const GreeterProvider&) = delete;
  GreeterProvider& operator=(const GreeterProvider&) = delete;

  // Listens, then registers the provider url (failback keeps it registered across registry
  // outages). Returns the url. Not from the loop thread.
  std::string start(wheelbeat::registry::Registry& registry);
  // Stops serving at once (the registry drops the url with this process's registry session).
  void stop();
  // Graceful: unregisters the url, then TcpServer::shutdown(grace) (READONLY to every consumer,
  // calls in flight answered, then closed). Not from the loop thread.
  wheelbeat::net::ShutdownReport shutdown(wheelbeat::registry::Registry& registry,
                                          std::chrono::nanoseconds grace);
  // Each call waits this long (on the wheel) before it is answered: a service's work, for
  // demonstrations and tests of graceful shutdown. >= 0 (std::invalid_argument); any thread.
  void setServiceTime(std::chrono::nanoseconds d);

  [[nodiscard]] std::uint64_t served() const noexcept;
  // Heartbeat requests answered, summed over this provider's connections (updated on traffic).
  [[nodiscard]] std::uint64_t heartbeatsAnswered() const;

  struct Stats;

private:
  std::shared_ptr<Stats> stats_;
  std::unique_ptr<wheelbeat::net::TcpServer> server_;
  std::string advertiseHost_;
  std::string url_;  // set by start()
};

struct GreeterOptions {
  // The provider links: one client per provider the registry lists (heartbeat, reconnect,
  // connect timeout in `directory.client`), opened and closed as providers come and go, an empty
  // list held back while the registry is not trusted (see registry/directory.h).
  wheelbeat::registry::DirectoryOptions directory{};
  wheelbeat::tasks::FailbackOptions failback{};  // invocationRetry, maxPendingRetries
  std::chrono::nanoseconds callTimeout = std::chrono::seconds(1);
};

// The final outcome of one sayHello (after failback retries, if any).
struct Reply {
  bool ok = false;
  std::string greeting;             // ok: the provider's answer
  std::string provider;             // the url that answered (ok) or failed last
  std::string error;                // !ok: "timeout: no response within 1s", "no-endpoint: ..."
  std::chrono::nanoseconds rtt{0};  // ok: round trip of the successful attempt
};

// One provider connection as the consumer sees it (for status displays).
struct ProviderView {
  std::string url;
  wheelbeat::net::ClientState state = wheelbeat::net::ClientState::Disconnected;
  bool usable = false;
  std::uint64_t ok = 0;         // attempts answered OK on this provider
  std::uint64_t failed = 0;     // attempts that failed on it (timeout, closed, not sent)
  std::uint64_t halfOpens = 0;  // reconnects its ReconnectTimerTask forced (read idle)
};

class GreeterConsumer {
public:
  using Done = std::function<void(const Reply&)>;

  // `options.directory.client.taskMetrics` (may be null) observes the heartbeat and reconnect tasks
  // of every provider link. Throws std::invalid_argument for invalid directory options.
  GreeterConsumer(wheelbeat::net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                  GreeterOptions options);
  ~GreeterConsumer();  // close()
  GreeterConsumer(const GreeterConsumer&) = delete;
  GreeterConsumer& operator=(const GreeterConsumer&) = delete;

  // Follows the providers of "greeter": a registry::Directory connects to each provider as its
  // notification arrives and closes the link of one that left within that notification. Once;
  // `registry` must outlive close(). Throws std::logic_error when called twice. Any thread.
  void subscribe(wheelbeat::registry::Registry& registry);
  // Calls a provider; a failure is retried in the background (FailbackOptions::invocationRetry)
  // on another provider when there is one. `done` runs once, on the loop or the wheel thread.
  // Any thread.
  void sayHello(const std::string& name, Done done);

  [[nodiscard]] std::vector<std::string> knownProviders() const;  // the providers followed
  [[nodiscard]] std::uint64_t notifications() const;              // provider lists received so far
  // Half-open links found (forced reconnects on read idle), over every link, also removed ones.
  [[nodiscard]] std::uint64_t halfOpens() const noexcept;
  [[nodiscard]] std::vector<ProviderView> providers() const;  // the connections, by url
  [[nodiscard]] std::int64_t pendingRetries() const;
  // Its directory's metrics (wheelbeat_directory_*, core/metrics.h); nothing before subscribe().
  // Any thread.
  void writeMetrics(wheelbeat::core::MetricsWriter& out) const;
  // Cancels waiting retries (their `done` is not called), unsubscribes and closes every
  // connection. Not from the loop thread (it waits for the connections to close). Idempotent.
  void close();

  struct State;

private:
  std::shared_ptr<State> state_;
};

}  // namespace samples::rpc
