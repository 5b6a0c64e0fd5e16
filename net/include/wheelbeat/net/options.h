// Plain options of the net layer (config/ parses JSON into these structs). Defaults are Dubbo's
// where Dubbo has one (port 20880, connect timeout 3 s, payload 8 MiB). The registry's options are
// in <wheelbeat/registry/options.h>.
#pragma once

#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace wheelbeat::net {

struct ChannelMetrics;  // channel_metrics.h

// A TCP endpoint: an IPv4/IPv6 literal or a host name, and a port.
struct Endpoint {
  std::string host = "127.0.0.1";  // non-empty
  std::uint16_t port = 20880;      // Dubbo's default; 0 = any free port (servers only)

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// "host:port" -> Endpoint; IPv6 literals in brackets ("[::1]:9464", brackets removed), as in URLs,
// so the last colon is always the port's. The host is non-empty, without whitespace, '[', ']' or
// '/'; the port is 0..65535 in decimal. nullopt for anything else. Any thread.
[[nodiscard]] std::optional<Endpoint> parseEndpoint(std::string_view text);

// Frame limits of the exchange codec (see codec.h).
struct CodecOptions {
  // Largest body accepted or sent, in bytes (Dubbo's `payload`). 1 .. 2^31 - 1 (the header's
  // 4-byte length is signed in Dubbo).
  std::size_t maxBody = std::size_t{8} << 20;
};

// One event loop's limits (EventLoop's constructor).
struct LoopOptions {
  // Bytes of split frames (a frame whose body is still arriving) that all channels of the loop
  // may buffer at once. A channel whose buffer would grow beyond it is closed with
  // CloseKind::Resource "partial-frame budget: ..."; up to 16 KiB per channel are never charged
  // (PartialFrameBudget::kFreePartialBytes). 0 = unlimited. Default 32 MiB: four largest frames
  // (8 MiB, Dubbo's payload) arriving at once.
  std::size_t maxPartialBytes = std::size_t{32} << 20;
  // Loops of an EventLoopGroup built from these options (a single EventLoop ignores it):
  // 0 = std::thread::hardware_concurrency() (at least 1), else 1 .. kMaxIoThreads.
  std::size_t ioThreads = 0;
};

// Upper bound of LoopOptions::ioThreads: a thread and a libuv loop each; more than this is a typo.
inline constexpr std::size_t kMaxIoThreads = 1024;

// One channel's outbound limit: bytes queued but not yet written by the kernel. A send beyond it
// is refused (back-pressure reported to the caller), never buffered without bound.
// >= CodecOptions::maxBody + 16, so one largest frame always fits an empty queue.
inline constexpr std::size_t kDefaultMaxSendQueueBytes = std::size_t{16} << 20;

struct ServerOptions {
  Endpoint listen{"0.0.0.0", 20880};
  int backlog = 511;  // listen(2) backlog, 1 .. 65535
  // Connections open at once; one beyond it is accepted and closed at once (TcpServer::rejected()
  // counts it). 0 = unlimited (then RLIMIT_NOFILE is the bound). Dubbo: `accepts`, default 0.
  std::size_t maxConnections = 0;
  CodecOptions codec{};
  // Bytes queued on a channel but not yet written (see kDefaultMaxSendQueueBytes).
  std::size_t maxSendQueue = kDefaultMaxSendQueueBytes;
  // TcpServer::shutdown()'s wait for requests in flight, >= 0. Dubbo: `shutdown.wait`, 10 s.
  std::chrono::nanoseconds shutdownGrace = std::chrono::seconds(10);
  // The server's close-idle task uses heartbeat.closeTimeout (after resolved()).
  tasks::HeartbeatOptions heartbeat{};
  // Where its channels count (channel_metrics.h); null = processChannelMetrics(). Not parsed
  // from JSON (config/): set by code.
  std::shared_ptr<ChannelMetrics> metrics{};
  // Observe the close-idle tasks of its channels (task_listener.h); each may be null and may be
  // shared with other servers and clients. Not parsed from JSON (config/): set by code.
  std::shared_ptr<tasks::TaskListener> taskListener{};
  std::shared_ptr<tasks::TaskMetrics> taskMetrics{};
};

struct ClientOptions {
  Endpoint server{"127.0.0.1", 20880};  // port 1 .. 65535
  // A connect attempt that has not completed by then fails with "timeout". > 0. Dubbo: 3 s.
  std::chrono::nanoseconds connectTimeout = std::chrono::seconds(3);
  CodecOptions codec{};
  // Bytes queued on a channel but not yet written (see kDefaultMaxSendQueueBytes).
  std::size_t maxSendQueue = kDefaultMaxSendQueueBytes;
  // Heartbeat and reconnect tasks (heartbeat, idleTimeout, reconnect, seed).
  tasks::HeartbeatOptions heartbeat{};
  // Where its channel counts (channel_metrics.h); null = processChannelMetrics(). Not parsed
  // from JSON (config/): set by code.
  std::shared_ptr<ChannelMetrics> metrics{};
  // Observe its heartbeat and reconnect tasks (task_listener.h); each may be null and may be
  // shared with other clients and servers. Not parsed from JSON (config/): set by code.
  std::shared_ptr<tasks::TaskListener> taskListener{};
  std::shared_ptr<tasks::TaskMetrics> taskMetrics{};
};

// Each throws std::invalid_argument naming the first bad field, its value and the expectation,
// e.g. "ClientOptions.server.port = 0 (expected: 1 .. 65535)"; nested options are checked too
// (with their path, e.g. "ServerOptions.heartbeat.idleTimeout = ..."). Thread: any.
void validate(const CodecOptions& options);
void validate(const ServerOptions& options);
void validate(const ClientOptions& options);
// validate(options), then its heartbeat against the wheel of tick `tick` that runs its tasks
// (tasks::validate(HeartbeatOptions, tick)): "ClientOptions.heartbeat.interval = 50ms (expected:
// at least 2 wheel ticks = 200ms; the wheel's tick is 100ms)". TcpServer / TcpClient check this
// with their timer's tickDuration(). Thread: any.
void validate(const ServerOptions& options, std::chrono::nanoseconds tick);
void validate(const ClientOptions& options, std::chrono::nanoseconds tick);

}  // namespace wheelbeat::net
