// RegistryServer: the embedded registry node (the default registry, for the demo and for small
// deployments). A TcpServer speaking the embedded registry protocol
// (src/embedded/registry_protocol.h) over the exchange codec, with its state in a RegistryBook
// keyed by channel (one session per connection).
//
// Liveness: a provider's registrations live as long as its connection. A connection that ends
// (EOF, reset) drops its session at once; a silent one (frozen process, dead link) is closed by
// the server's close-idle task after heartbeat.closeTimeout (default: idle timeout = 3 ×
// heartbeat); either way its urls are removed and the subscribers of those services are
// notified. Providers re-register through failback (their Registry) when they reconnect.
//
// Threads: start(), stop(), port(), the queries: any thread (queries run on the loop via
// EventLoop::call). Everything else happens on the loop thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/options.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wheelbeat::registry {

class RegistryServer {
public:
  // `options.listen` is the registry's address (port 0 = ephemeral). Throws
  // std::invalid_argument for invalid options. The loop and the timer must outlive the server.
  RegistryServer(net::EventLoop& loop, core::HashedWheelTimer& timer, net::ServerOptions options);
  ~RegistryServer();
  RegistryServer(const RegistryServer&) = delete;
  RegistryServer& operator=(const RegistryServer&) = delete;

  // Listens; returns the bound port. Throws what TcpServer::listen() throws.
  std::uint16_t start();
  // Closes every session (no notifications are sent while stopping) and the listener.
  void stop();
  [[nodiscard]] std::uint16_t port() const noexcept;

  // The registered providers of `service` (sorted) and the connected sessions.
  [[nodiscard]] std::vector<std::string> providers(const std::string& service) const;
  [[nodiscard]] std::size_t sessions() const;

  struct State;

private:
  net::EventLoop& loop_;
  std::shared_ptr<State> state_;
};

}  // namespace wheelbeat::registry
