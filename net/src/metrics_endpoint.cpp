// MetricsEndpoint: the public object, and its Core (the listener and the routing of requests).
#include "address.h"
#include "metrics_http.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/net/error.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace wheelbeat::net {
namespace {

[[noreturn]] void fail(std::string field, std::string value, std::string expected) {
  throw core::OptionError("MetricsEndpointOptions", std::move(field), std::move(value),
                          std::move(expected));
}

Endpoint checked(const MetricsEndpointOptions& o, const std::function<std::string()>& render) {
  validate(o);
  if (!render) throw std::invalid_argument("MetricsEndpoint::start: render is empty");
  return *parseEndpoint(o.listen);
}

// The path of a request target: "/metrics?x=1" -> "/metrics". An absolute-form target
// ("http://h/metrics") is parsed by http-parser too.
std::string_view pathOf(std::string_view url) {
  http_parser_url parsed{};
  http_parser_url_init(&parsed);
  if (http_parser_parse_url(url.data(), url.size(), 0, &parsed) != 0) return {};
  if ((parsed.field_set & (1U << UF_PATH)) == 0) return {};
  return url.substr(parsed.field_data[UF_PATH].off, parsed.field_data[UF_PATH].len);
}

}  // namespace

void validate(const MetricsEndpointOptions& o) {
  if (!parseEndpoint(o.listen)) {
    fail("listen", fmt::format("\"{}\"", o.listen),
         R"("host:port", IPv6 as "[::1]:9464", port 0..65535 (0 = any free port))");
  }
  if (o.maxHeaderBytes < 256) fail("maxHeaderBytes", std::to_string(o.maxHeaderBytes), ">= 256");
  if (o.requestTimeout <= std::chrono::milliseconds(0)) {
    fail("requestTimeout", fmt::format("{}", o.requestTimeout), "> 0");
  }
  if (o.maxConnections == 0) fail("maxConnections", "0", ">= 1");
}

// Core

MetricsEndpoint::Core::Core(uv_loop_t* loop, MetricsEndpointOptions options,
                            std::function<std::string()> render)
    : loop_(loop), options_(std::move(options)), render_(std::move(render)) {}

NetError MetricsEndpoint::Core::listen(const sockaddr_storage& addr) noexcept {
  if (int rc = uv_tcp_init(loop_, &tcp_); rc != 0) return NetError(rc);
  listening_ = true;
  tcp_.data = static_cast<LoopHandle*>(this);
  detail::registerHandle(loop_, this);
  self_ = shared_from_this();
  int rc = uv_tcp_bind(&tcp_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) rc = uv_listen(detail::asStream(&tcp_), 128, &Core::onConnection);
  if (rc != 0) {
    close();
    return NetError(rc);
  }
  port.store(detail::localOf(&tcp_).port, std::memory_order_release);
  return {};
}

void MetricsEndpoint::Core::close() noexcept {
  if (closed_) return;
  closed_ = true;
  // Copied first: a connection leaves the set from its close callback, never inside close().
  for (detail::HttpConnection* c : std::unordered_set(connections_)) c->close();
  if (!listening_) return;
  uv_close(detail::asHandle(&tcp_), [](uv_handle_t* h) {
    auto* self = static_cast<Core*>(static_cast<LoopHandle*>(h->data));
    detail::unregisterHandle(self->loop_, self);
    auto keep = std::move(self->self_);  // may be the last share: released when this returns
  });
}

void MetricsEndpoint::Core::onConnection(uv_stream_t* listener, int status) noexcept {
  auto* self = static_cast<Core*>(static_cast<LoopHandle*>(detail::asHandle(listener)->data));
  if (status < 0) {
    core::log(core::LogLevel::Warn, "metrics endpoint on port {}: accept: {}", self->port.load(),
              NetError(status));
    return;
  }
  self->accept();
}

void MetricsEndpoint::Core::accept() noexcept {
  if (closed_) return;
  if (connections_.size() >= options_.maxConnections) {
    reject();
    return;
  }
  try {
    connections_.reserve(connections_.size() + 1);  // the insert below then cannot throw
  } catch (...) {
    reject();
    return;
  }
  auto* c = detail::HttpConnection::accept(shared_from_this(), detail::asStream(&tcp_));
  if (c != nullptr) connections_.insert(c);
}

// Takes the pending connection and closes it at once; without the uv_accept libuv would stop
// watching the listener for good.
void MetricsEndpoint::Core::reject() noexcept {
  auto* tcp = new (std::nothrow) uv_tcp_t{};
  if (tcp == nullptr) return;
  uv_tcp_init(loop_, tcp);
  if (uv_accept(detail::asStream(&tcp_), detail::asStream(tcp)) == 0) {
    rejected.fetch_add(1, std::memory_order_relaxed);
  }
  uv_close(detail::asHandle(tcp), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
}

void MetricsEndpoint::Core::connectionClosed(detail::HttpConnection* connection) noexcept {
  connections_.erase(connection);
}

std::string MetricsEndpoint::Core::answer(http_parser& parser, std::string_view url, int& status) {
  if (pathOf(url) != "/metrics") {
    status = 404;
    return "not found: try /metrics\n";
  }
  const bool head = parser.method == HTTP_HEAD;
  if (parser.method != HTTP_GET && !head) {
    status = 405;
    return "only GET /metrics\n";
  }
  std::string text = render_();
  status = 200;
  if (!head) scrapes.fetch_add(1, std::memory_order_relaxed);
  return text;
}

// MetricsEndpoint

MetricsEndpoint::MetricsEndpoint(EventLoop& loop, std::shared_ptr<Core> core,
                                 const std::string& listen)
    : loop_(loop),
      loopUse_(loop.use(fmt::format("MetricsEndpoint {}", listen))),
      core_(std::move(core)) {}

std::unique_ptr<MetricsEndpoint> MetricsEndpoint::start(EventLoop& loop,
                                                        MetricsEndpointOptions options,
                                                        std::function<std::string()> render) {
  const Endpoint where = checked(options, render);
  sockaddr_storage addr{};
  const std::string context = fmt::format("metrics endpoint listen on {}", options.listen);
  if (NetError e = detail::resolveBlocking(where, addr)) throw NetException(e, context);
  const std::string listen = options.listen;
  auto core = std::make_shared<Core>(loop.native(), std::move(options), std::move(render));
  NetError error;
  if (!loop.call([&] { error = core->listen(addr); })) {
    throw std::runtime_error(fmt::format("{}: the event loop is stopped", context));
  }
  if (error) throw NetException(error, context);
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(loop, std::move(core), listen));
}

MetricsEndpoint::~MetricsEndpoint() {
  try {
    close();
  } catch (const std::exception& e) {
    core::log(core::LogLevel::Error, "metrics endpoint: close: {}", e.what());
  }
}

void MetricsEndpoint::close() {
  if (closed_) return;
  closed_ = true;
  loop_.call([core = core_] { core->close(); });  // false: the loop stopped and closed it already
}

std::uint16_t MetricsEndpoint::port() const noexcept {
  return core_->port.load(std::memory_order_acquire);
}

std::uint64_t MetricsEndpoint::scrapes() const noexcept {
  return core_->scrapes.load(std::memory_order_relaxed);
}

std::uint64_t MetricsEndpoint::rejected() const noexcept {
  return core_->rejected.load(std::memory_order_relaxed);
}

}  // namespace wheelbeat::net
