// EmbeddedEngine: the engine of the embedded registry (RegistryServer, registry_server.h), the
// default. A TcpClient to the registry node (heartbeats, reconnect with backoff) carries the
// embedded registry protocol (one line of text per exchange frame); the node notifies each
// subscriber with the full provider list of its service after each change and after each
// subscribe. A provider's registrations live as long as its connection (see registry_server.h).
//
//   auto registry = registry::makeRegistry(loop, timer, setup);  // setup.registry.kind Embedded
//   auto* embedded = dynamic_cast<registry::EmbeddedEngine*>(&registry->engine());
//   embedded->connection().channel().lastHeartbeatRtt();
//
// Connection: connected = the TCP connect done (the first attempt is bounded by
// ClientOptions::connectTimeout); reconnects follow client.heartbeat's backoff; a call is bounded
// by RegistrySetup::requestTimeout ("timeout"); a request the node refuses fails "rejected".
//
// Threads: as Engine (engine.h); state() and connection(): any thread.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/registry/engine.h>
#include <wheelbeat/registry/options.h>

#include <memory>

namespace wheelbeat::registry {

class EmbeddedEngine : public Engine {
public:
  [[nodiscard]] virtual net::ClientState state() const noexcept = 0;
  // The connection to the registry node (heartbeat RTT, connect attempts).
  [[nodiscard]] virtual net::TcpClient& connection() noexcept = 0;
};

// Connects to `setup.registry.address` with `setup.client`'s heartbeat, reconnect and limits
// (client.server is ignored). Throws std::invalid_argument for an invalid setup
// (validate(RegistrySetup)) or a kind other than Embedded. The loop and the timer must outlive
// the engine.
[[nodiscard]] std::unique_ptr<EmbeddedEngine> makeEmbeddedEngine(net::EventLoop& loop,
                                                                 core::HashedWheelTimer& timer,
                                                                 const RegistrySetup& setup);

}  // namespace wheelbeat::registry
