// One HTTP connection of the metrics endpoint (see metrics_endpoint.h for the rules it enforces).
#include "metrics_http.h"

#include <wheelbeat/core/log.h>

#include <fmt/format.h>

#include <new>
#include <utility>

namespace wheelbeat::net::detail {
namespace {

// One write: the request and the bytes it points at, freed in the write callback.
struct WriteRequest {
  uv_write_t req{};
  std::string bytes;
  HttpConnection* connection = nullptr;
};

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    default: return "Internal Server Error";
  }
}

// A whole answer; `body` is left out for HEAD (its length still announced).
std::string response(int status, std::string_view body, bool keepAlive, bool head) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n{}", status,
      reasonPhrase(status),
      status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8",
      body.size(), keepAlive ? "" : "Connection: close\r\n", head ? "" : body);
}

HttpConnection* of(http_parser* parser) { return static_cast<HttpConnection*>(parser->data); }

}  // namespace

HttpConnection::HttpConnection(std::shared_ptr<MetricsEndpoint::Core> core)
    : core_(std::move(core)) {}

HttpConnection* HttpConnection::accept(std::shared_ptr<MetricsEndpoint::Core> core,
                                       uv_stream_t* listener) noexcept {
  auto* c = new (std::nothrow) HttpConnection(std::move(core));
  if (c == nullptr) return nullptr;
  uv_loop_t* loop = c->core_->loop();
  uv_tcp_init(loop, &c->tcp_);  // cannot fail on a running loop (no socket is created yet)
  uv_timer_init(loop, &c->timer_);
  c->tcp_.data = static_cast<LoopHandle*>(c);
  c->timer_.data = static_cast<LoopHandle*>(c);
  c->openHandles_ = 2;
  registerHandle(loop, c);
  http_parser_init(&c->parser_, HTTP_REQUEST);
  c->parser_.data = c;
  if (uv_accept(listener, asStream(&c->tcp_)) != 0 ||
      uv_read_start(asStream(&c->tcp_), &onAlloc, &onRead) != 0) {
    c->close();
    return nullptr;
  }
  c->armDeadline();
  return c;
}

void HttpConnection::close() noexcept {
  if (closing_) return;
  closing_ = true;
  uv_close(asHandle(&tcp_), &onClosed);
  uv_close(asHandle(&timer_), &onClosed);
}

void HttpConnection::onClosed(uv_handle_t* handle) noexcept {
  auto* self = static_cast<HttpConnection*>(static_cast<LoopHandle*>(handle->data));
  if (--self->openHandles_ != 0) return;
  unregisterHandle(self->core_->loop(), self);
  self->core_->connectionClosed(self);
  delete self;  // drops its share of the core last
}

void HttpConnection::armDeadline() noexcept {
  const auto ms = static_cast<std::uint64_t>(core_->options().requestTimeout.count());
  uv_timer_start(&timer_, &onTimeout, ms, 0);
}

void HttpConnection::onTimeout(uv_timer_t* timer) noexcept {
  static_cast<HttpConnection*>(static_cast<LoopHandle*>(timer->data))->close();
}

// Every read lands in the loop's shared buffer: the parser copies what it keeps (the URL).
void HttpConnection::onAlloc(uv_handle_t* handle, std::size_t /*suggested*/,
                             uv_buf_t* buf) noexcept {
  buf->base = readBuffer(handle->loop);
  buf->len = kReadBufferSize;
}

void HttpConnection::onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) noexcept {
  auto* self = static_cast<HttpConnection*>(static_cast<LoopHandle*>(asHandle(stream)->data));
  if (nread < 0) {
    self->close();  // EOF, reset: nothing to answer
  } else if (nread > 0) {
    self->consume(buf->base, static_cast<std::size_t>(nread));
  }
}

void HttpConnection::consume(const char* data, std::size_t size) noexcept {
  if (closeAfterWrite_ || closing_) return;  // an error answer is on its way: ignore the rest
  http_parser_execute(&parser_, &settings(), data, size);
  if (closing_ || closeAfterWrite_) return;
  if (HTTP_PARSER_ERRNO(&parser_) != HPE_OK) {
    fail(refusal_ != 0 ? refusal_ : 400);
  } else if (parser_.upgrade != 0) {
    fail(400);  // no protocol upgrade here
  }
}

bool HttpConnection::countHeaderBytes(std::size_t n) noexcept {
  headerBytes_ += n;
  if (headerBytes_ <= core_->options().maxHeaderBytes) return true;
  refusal_ = 431;
  return false;
}

const http_parser_settings& HttpConnection::settings() noexcept {
  static const http_parser_settings s = [] {
    http_parser_settings x{};
    x.on_message_begin = [](http_parser* p) {
      of(p)->url_.clear();
      of(p)->headerBytes_ = 0;
      return 0;
    };
    x.on_url = [](http_parser* p, const char* at, std::size_t n) {
      if (!of(p)->countHeaderBytes(n)) return 1;
      of(p)->url_.append(at, n);
      return 0;
    };
    x.on_header_field = [](http_parser* p, const char*, std::size_t n) {
      return of(p)->countHeaderBytes(n) ? 0 : 1;
    };
    x.on_header_value = x.on_header_field;
    x.on_body = [](http_parser* p, const char*, std::size_t) {
      of(p)->refusal_ = 413;  // a scrape has no body: nothing to buffer
      return 1;
    };
    x.on_message_complete = [](http_parser* p) { return of(p)->messageComplete(); };
    return x;
  }();
  return s;
}

int HttpConnection::messageComplete() noexcept {
  const bool keepAlive = http_should_keep_alive(&parser_) != 0;
  try {
    int status = 500;
    std::string body;
    try {
      body = core_->answer(parser_, url_, status);
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "metrics endpoint: render failed: {}", e.what());
      status = 500;
      body = "render failed\n";
    }
    send(response(status, body, keepAlive, parser_.method == HTTP_HEAD), !keepAlive);
  } catch (...) {  // no memory for the answer (or render threw a non-exception): just close
    close();
  }
  if (!closeAfterWrite_ && !closing_) armDeadline();  // the next request has its own deadline
  return closeAfterWrite_ || closing_ ? 1 : 0;        // stop parsing what follows a last answer
}

void HttpConnection::fail(int status) noexcept {
  try {
    send(response(status, fmt::format("{} {}\n", status, reasonPhrase(status)), false, false),
         true);
  } catch (...) {  // no memory for the answer: just close
    close();
  }
}

void HttpConnection::send(std::string response, bool thenClose) noexcept {
  if (closing_) return;
  if (thenClose) {
    closeAfterWrite_ = true;
    uv_read_stop(asStream(&tcp_));
  }
  if (uv_stream_get_write_queue_size(asStream(&tcp_)) > MetricsEndpoint::kMaxUnsentBytes) {
    close();  // the peer asks but never reads
    return;
  }
  auto* w = new (std::nothrow) WriteRequest{};
  if (w == nullptr) {
    close();
    return;
  }
  w->bytes = std::move(response);
  w->connection = this;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  w->req.data = w;
  const int rc = uv_write(&w->req, asStream(&tcp_), &buf, 1, [](uv_write_t* req, int status) {
    auto* done = static_cast<WriteRequest*>(req->data);
    HttpConnection* c = done->connection;
    delete done;
    --c->writesInFlight_;
    if (status < 0 || (c->closeAfterWrite_ && c->writesInFlight_ == 0)) c->close();
  });
  if (rc != 0) {
    delete w;
    close();
    return;
  }
  ++writesInFlight_;
}

}  // namespace wheelbeat::net::detail
