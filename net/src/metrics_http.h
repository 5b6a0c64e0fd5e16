// The metrics endpoint's insides: its listener (MetricsEndpoint::Core) and one HTTP connection
// (HttpConnection), parsed by Debian's http-parser. Private to net/. Loop thread only, except
// where a member says otherwise.
#pragma once

#include "loop_internal.h"

#include <wheelbeat/net/error.h>
#include <wheelbeat/net/metrics_endpoint.h>

#include <http_parser.h>
#include <uv.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

namespace wheelbeat::net {

namespace detail {
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor): see the definition below.
class HttpConnection;
}  // namespace detail

// Owns the listening socket and knows every open connection. Held by the public object, by
// every connection, and by itself while its listener is open, so it outlives their callbacks.
class MetricsEndpoint::Core final : public detail::LoopHandle,
                                    public std::enable_shared_from_this<MetricsEndpoint::Core> {
public:
  Core(uv_loop_t* loop, MetricsEndpointOptions options, std::function<std::string()> render);

  // uv_tcp_init / bind / listen; the libuv error if any (then the listener is closing).
  [[nodiscard]] NetError listen(const sockaddr_storage& addr) noexcept;
  // Closes the listener and every connection (idempotent).
  void close() noexcept;
  void closeForShutdown() noexcept override { close(); }

  // The answer to one complete request; the status is set in `status`.
  [[nodiscard]] std::string answer(http_parser& parser, std::string_view url, int& status);
  void connectionClosed(detail::HttpConnection* connection) noexcept;

  [[nodiscard]] const MetricsEndpointOptions& options() const noexcept { return options_; }
  [[nodiscard]] uv_loop_t* loop() const noexcept { return loop_; }

  std::atomic<std::uint16_t> port{0};      // any thread
  std::atomic<std::uint64_t> scrapes{0};   // any thread
  std::atomic<std::uint64_t> rejected{0};  // any thread

private:
  static void onConnection(uv_stream_t* listener, int status) noexcept;
  void accept() noexcept;
  void reject() noexcept;
  std::string scrape(bool head, int& status);

  uv_loop_t* loop_;
  MetricsEndpointOptions options_;
  std::function<std::string()> render_;
  uv_tcp_t tcp_{};
  bool listening_ = false;
  bool closed_ = false;
  std::shared_ptr<Core> self_;  // while the listener is open
  std::unordered_set<detail::HttpConnection*> connections_;
};

namespace detail {

// One accepted connection: a socket, a timer for the request deadline, a parser. Deletes itself
// once both handles have closed.
// The destructor is private on purpose (as LoopHandle's is protected): only its own close
// callback deletes it.
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor)
class HttpConnection final : public LoopHandle {
public:
  // Accepts the pending connection of `listener`; nullptr (nothing left open) if it cannot.
  static HttpConnection* accept(std::shared_ptr<MetricsEndpoint::Core> core,
                                uv_stream_t* listener) noexcept;
  void close() noexcept;  // idempotent
  void closeForShutdown() noexcept override { close(); }

private:
  explicit HttpConnection(std::shared_ptr<MetricsEndpoint::Core> core);
  ~HttpConnection() override = default;

  static void onAlloc(uv_handle_t* handle, std::size_t suggested, uv_buf_t* buf) noexcept;
  static void onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept;
  static void onTimeout(uv_timer_t* timer) noexcept;
  static void onClosed(uv_handle_t* handle) noexcept;
  static const http_parser_settings& settings() noexcept;

  void consume(const char* data, std::size_t size) noexcept;
  bool countHeaderBytes(std::size_t n) noexcept;  // false once over the limit
  int messageComplete() noexcept;
  void send(std::string response, bool thenClose) noexcept;
  void fail(int status) noexcept;  // answers `status` and closes
  void armDeadline() noexcept;

  std::shared_ptr<MetricsEndpoint::Core> core_;
  uv_tcp_t tcp_{};
  uv_timer_t timer_{};
  http_parser parser_{};
  std::string url_;
  std::size_t headerBytes_ = 0;
  int refusal_ = 0;  // the status a callback refused the request with (431, 413)
  bool closing_ = false;
  bool closeAfterWrite_ = false;
  int writesInFlight_ = 0;
  int openHandles_ = 0;
};

}  // namespace detail
}  // namespace wheelbeat::net
