// Greeter: a tiny Dubbo service ("sayHello": a name in, a greeting out) built on wheelbeat's
// channels and its Dubbo room: hessian2 bodies served by dubbo::Provider, the registry to find
// providers, and cluster::ServiceClient to call them (provider choice, failover, outlier
// ejection, hedging: all the library's), through dubbo::invoke.
//
//   Provider                                    Consumer
//   GreeterProvider p(loop, timer, server);     GreeterConsumer c(loop, timer, options);
//   p.start(*registry);  // listen + register    c.subscribe(*registry);
//                                               c.sayHello("Ada", [](const Reply& r) {...});
//
// The service: interface kGreeterService, method `String sayHello(String)` (and Dubbo's `$echo`),
// so Java and Node Dubbo consumers call it as they call a Java provider. A call that cannot be
// served gets Dubbo's answers (dubbo/provider.h): status 40 for an unknown method or a body that
// does not decode.
#pragma once

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/metrics.h>
#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/shutdown.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samples::rpc {

// The Dubbo interface (also the registry's service name and the request's path) and its method.
inline constexpr std::string_view kGreeterService = "org.wheelbeat.samples.Greeter";
inline constexpr std::string_view kSayHello = "sayHello";
inline constexpr std::string_view kSayHelloDescriptor = "Ljava/lang/String;";

// The endpoint of a provider url ("dubbo://127.0.0.1:20880/org...Greeter?..." -> 127.0.0.1:20880);
// nullopt when it is not host:port shaped.
[[nodiscard]] std::optional<wheelbeat::net::Endpoint> endpointOfUrl(std::string_view url);

class GreeterProvider {
public:
  // `advertiseHost`: the address consumers should dial (the url's host).
  GreeterProvider(wheelbeat::net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                  wheelbeat::net::ServerOptions options, std::string advertiseHost = "127.0.0.1");
  ~GreeterProvider();
  GreeterProvider(const GreeterProvider&) = delete;
  GreeterProvider& operator=(const GreeterProvider&) = delete;

  // Listens, then registers the provider url (Dubbo's form: dubbo://HOST:PORT/INTERFACE?...
  // methods=sayHello; failback keeps it registered across registry outages). Returns the url.
  // Not from the loop thread.
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
  std::unique_ptr<wheelbeat::dubbo::Provider> provider_;  // outlives server_ (its handler's user)
  std::unique_ptr<wheelbeat::net::TcpServer> server_;
  std::string advertiseHost_;
  std::chrono::nanoseconds heartbeat_{0};  // the server's interval, advertised in the url
  std::string url_;                        // set by start()
};

struct GreeterOptions {
  // Everything about where a call goes: the cluster mode, retries, the balancer, outlier
  // ejection, hedging, the retry budget, the call's deadline and the provider links
  // (`cluster.directory.client`: heartbeat, reconnect, connect timeout; its `taskMetrics` may be
  // set, its `taskListener` must stay null: the consumer counts half-open links with its own).
  wheelbeat::cluster::ClusterOptions cluster{};
};

// The outcome of one sayHello, as the cluster client decided it.
struct Reply {
  bool ok = false;
  std::string greeting;  // ok: the provider's answer
  std::string provider;  // the url whose answer decided (may be empty when none did)
  // !ok: the shared error name ("timeout", "no-endpoint", "disconnected", "rejected", ...),
  // "exception" when the provider threw (`message` says what), or "bad-response" when the
  // answer was not a string.
  std::string error;
  std::string message;              // !ok: the provider's or the transport's words, if any
  std::chrono::nanoseconds rtt{0};  // the whole call, every attempt included
  std::uint32_t attempts = 0;
  bool hedgeWon = false;
};

// What this consumer saw of one provider (for status displays): the answers that decided its
// calls. The cluster client's own view of a provider (connected, ejected, suspect) is not public;
// `lastOk` tells whether the provider is being answered from now.
struct ProviderView {
  std::string url;
  bool listed = false;                  // in the registry's latest list
  std::uint64_t ok = 0;                 // calls it answered with a greeting
  std::uint64_t failed = 0;             // calls whose last failing attempt was on it
  std::chrono::nanoseconds lastOk{-1};  // since its last greeting; -1: none yet
};

class GreeterConsumer {
public:
  using Done = std::function<void(const Reply&)>;

  // Throws std::invalid_argument for invalid cluster options (the field named) or a
  // taskListener in them.
  GreeterConsumer(wheelbeat::net::EventLoop& loop, wheelbeat::core::HashedWheelTimer& timer,
                  GreeterOptions options);
  ~GreeterConsumer();  // close()
  GreeterConsumer(const GreeterConsumer&) = delete;
  GreeterConsumer& operator=(const GreeterConsumer&) = delete;

  // Starts a cluster::ServiceClient for kGreeterService on `registry`, and follows the registry's
  // list (for knownProviders()). Once; `registry` must outlive close(). Throws std::logic_error
  // when called twice or after close(). Not from the loop thread.
  void subscribe(wheelbeat::registry::Registry& registry);
  // One Dubbo call of sayHello(name); the cluster client chooses the provider and retries / hedges
  // as configured. `done` runs once, on the loop thread. Throws std::logic_error before subscribe()
  // or after close(), hessian::EncodeError when `name` is not valid UTF-8 (a Java String's
  // content). Any thread.
  void sayHello(const std::string& name, Done done);

  [[nodiscard]] std::vector<std::string> knownProviders() const;  // the registry's latest list
  [[nodiscard]] std::uint64_t notifications() const;              // provider lists received so far
  // Half-open links found (reconnects forced on read idle), over every provider link.
  [[nodiscard]] std::uint64_t halfOpens() const noexcept;
  // Every provider listed now or that answered once, by url. Any thread.
  [[nodiscard]] std::vector<ProviderView> providers() const;
  // The cluster client's providers listed now and, of them, available (connected, neither
  // ejected nor suspect); its figures (calls, attempts by kind, ejections). Zero before
  // subscribe(). Not from the loop thread (they ask the loop).
  [[nodiscard]] std::size_t listed() const;
  [[nodiscard]] std::size_t available() const;
  [[nodiscard]] wheelbeat::cluster::ServiceClient::Stats stats() const;
  // wheelbeat_cluster_* (core/metrics.h); nothing before subscribe(). Any thread.
  void writeMetrics(wheelbeat::core::MetricsWriter& out) const;
  // Ends calls still running ("disconnected"), unsubscribes and closes every provider link.
  // Not from the loop thread. Idempotent.
  void close();

  struct State;

private:
  std::shared_ptr<State> state_;
};

}  // namespace samples::rpc
