// Graceful shutdown of a provider, in Dubbo's order:
//   1. unregister its urls: consumers learn from the registry that it leaves (and their
//      directories close their links when that notification arrives);
//   2. TcpServer::shutdown(grace): stop accepting, Dubbo's READONLY event on every channel (a
//      consumer that got it sends no new call there, even before the registry's notification),
//      keep answering what arrives, close once no request is unanswered or `grace` has passed.
//
//   // on SIGTERM:
//   auto report = registry::shutdownProvider(*registry, {url}, server, 10s);
//   registry->close();
//
// Thread: any but the loop's (it waits for the registry and for the server).
#pragma once

#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry.h>

#include <chrono>
#include <string>
#include <vector>

namespace wheelbeat::registry {

// Waits for the registry to confirm each unregistration for at most `unregisterWait` (a registry
// that is down keeps the withdrawal in its failback and the shutdown goes on: consumers still
// get READONLY). Then shuts the server down with `grace` (>= 0, std::invalid_argument).
net::ShutdownReport shutdownProvider(
    Registry& registry, const std::vector<std::string>& urls, net::TcpServer& server,
    std::chrono::nanoseconds grace,
    std::chrono::nanoseconds unregisterWait = std::chrono::seconds(3));

}  // namespace wheelbeat::registry
