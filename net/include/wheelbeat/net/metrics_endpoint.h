// MetricsEndpoint: the Prometheus scrape endpoint, an HTTP/1.1 server on a shared EventLoop.
//
// Requests
//   `GET /metrics` (a query string is ignored) answers 200 with `render()`'s text and
//   `Content-Type: text/plain; version=0.0.4; charset=utf-8` (Prometheus' text format 0.0.4);
//   `HEAD /metrics` the same headers without the body. Any other path is 404; another method on
//   /metrics is 405. Keep-alive is honoured (Prometheus keeps its scrape connection open).
//   Requests are parsed by Debian's http-parser (nodejs/http-parser 2.9): no hand-written HTTP.
//
// Hostile peers (each closes that connection only; the endpoint and the loop go on)
//   - bytes that are not HTTP: 400, then closed;
//   - a request line plus headers beyond maxHeaderBytes, or any request body: 431 / 413, closed;
//   - a request not complete within requestTimeout of the connection's accept or of the previous
//     response (slowloris, an idle keep-alive connection): closed;
//   - more than maxConnections connections at once: the new one is accepted and closed at once;
//   - a peer that sends requests but never reads the answers: closed once more than
//     kMaxUnsentBytes of answers wait in its send queue.
//   So a connection holds at most maxHeaderBytes of request and kMaxUnsentBytes of answers.
//
// Threads
//   start(), close(), the destructor: any thread (close() on the loop thread runs inline).
//   port(), scrapes(), rejected(): any thread. `render` runs on the loop thread, once per GET
//   scrape, never after close() returned; an exception it throws answers 500 (logged, Warn).
#pragma once

#include <wheelbeat/net/event_loop.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace wheelbeat::net {

struct MetricsEndpointOptions {
  // "host:port"; IPv6 in brackets ("[::1]:9464"); port 0 = any free port (see port()). A host
  // name is resolved by the calling thread (blocking), IP literals are not resolved at all.
  // Default: loopback, any free port (port() tells which); a scraped process names its port.
  std::string listen = "127.0.0.1:0";
  // Request line + headers of one request, in bytes; more closes the connection (431). >= 256.
  std::size_t maxHeaderBytes = 8192;
  // See "Hostile peers". > 0.
  std::chrono::milliseconds requestTimeout{5000};
  // Connections open at once; beyond, a new one is accepted and closed at once. >= 1.
  std::size_t maxConnections = 64;
};

// Throws core::OptionError naming the first bad member, its value and the expectation (the
// rules in the comments above); MetricsEndpoint::start() checks the same. Thread: any.
void validate(const MetricsEndpointOptions& options);

class MetricsEndpoint {
public:
  // Answers queued for one connection beyond which it is closed (a peer that never reads).
  static constexpr std::size_t kMaxUnsentBytes = std::size_t{4} << 20;

  // Listens on `loop` and serves `render`. Throws std::invalid_argument naming the option, its
  // value and what is expected (e.g. `MetricsEndpointOptions.listen: "9464" (expected: ...)`),
  // NetException when the address cannot be resolved or bound ("metrics endpoint listen on
  // 127.0.0.1:9464: EADDRINUSE (address already in use)"), std::runtime_error if the loop is
  // stopped. Nothing is left open when it throws.
  static std::unique_ptr<MetricsEndpoint> start(EventLoop& loop, MetricsEndpointOptions options,
                                                std::function<std::string()> render);

  ~MetricsEndpoint();  // close()
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The bound port (the chosen one when listen asked for port 0).
  [[nodiscard]] std::uint16_t port() const noexcept;
  // GET /metrics answered with 200 so far, and connections refused beyond maxConnections.
  [[nodiscard]] std::uint64_t scrapes() const noexcept;
  [[nodiscard]] std::uint64_t rejected() const noexcept;

  // Stops listening and closes every connection; `render` is not called after it returns.
  // The loop must outlive the endpoint (as for TcpServer): destroying the loop first ends the
  // process with a message naming "MetricsEndpoint HOST:PORT" (core/users.h). Idempotent; a no-op
  // once the loop stopped (EventLoop::stop() closed everything already).
  void close();

  class Core;

private:
  MetricsEndpoint(EventLoop& loop, std::shared_ptr<Core> core, const std::string& listen);
  EventLoop& loop_;
  core::Users::Use loopUse_;
  std::shared_ptr<Core> core_;  // kept after close(): port() and the counters stay readable
  bool closed_ = false;
};

}  // namespace wheelbeat::net
