// The metrics endpoint on loopback: routing, keep-alive, and hostile peers each closing their own
// connection only (garbage, oversized headers, a body, a slowloris, too many connections).
#include "support.h"

#include <wheelbeat/net/metrics_endpoint.h>

#include <charconv>

namespace wbnet {
namespace {

struct Answer {
  int status = 0;
  std::string headers;  // the status line and headers, CRLF-separated
  std::string body;
};

// Reads one HTTP answer (headers, then Content-Length bytes); status 0 if none came.
Answer readAnswer(RawSocket& peer, bool head = false) {
  Answer a;
  while (!a.headers.ends_with("\r\n\r\n")) {
    const std::string c = peer.recvExactly(1);
    if (c.empty()) return {};
    a.headers += c;
  }
  std::from_chars(a.headers.data() + 9, a.headers.data() + 12, a.status);  // "HTTP/1.1 200"
  const auto at = a.headers.find("Content-Length: ");
  std::size_t length = 0;
  if (at != std::string::npos) {
    std::from_chars(a.headers.data() + at + 16, a.headers.data() + a.headers.size(), length);
  }
  if (!head) a.body = peer.recvExactly(length);
  return a;
}

std::string get(std::string_view path, std::string_view extra = "") {
  return fmt::format("GET {} HTTP/1.1\r\nHost: localhost\r\n{}\r\n", path, extra);
}

struct Served {
  Env env;
  std::atomic<int> renders{0};
  std::atomic<bool> renderedOnLoop{true};
  std::unique_ptr<MetricsEndpoint> endpoint;

  explicit Served(MetricsEndpointOptions o = {}) {
    if (o.listen.empty()) o.listen = "127.0.0.1:0";
    endpoint = MetricsEndpoint::start(env.loop, o, [this] {
      if (!env.loop.isLoopThread()) renderedOnLoop = false;
      return fmt::format("# TYPE wheelbeat_x_total counter\nwheelbeat_x_total {}\n", ++renders);
    });
  }
  ~Served() { endpoint->close(); }

  // A fresh connection answered with 200: the endpoint still serves.
  [[nodiscard]] bool serves() {
    RawSocket peer;
    return peer.connect(endpoint->port()) && peer.sendAll(get("/metrics")) &&
           readAnswer(peer).status == 200;
  }
};

}  // namespace

TEST_SUITE("metrics-endpoint") {
TEST_CASE("GET /metrics answers the rendered text in Prometheus' format 0.0.4") {
  Served e;
  REQUIRE(e.endpoint->port() != 0);
  RawSocket peer;
  REQUIRE(peer.connect(e.endpoint->port()));
  REQUIRE(peer.sendAll(get("/metrics?ts=1")));
  const Answer a = readAnswer(peer);
  CHECK(a.status == 200);
  CHECK(a.headers.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
        std::string::npos);
  CHECK(a.body == "# TYPE wheelbeat_x_total counter\nwheelbeat_x_total 1\n");
  CHECK(e.renders == 1);
  CHECK(e.renderedOnLoop);
  CHECK(e.endpoint->scrapes() == 1);
}

TEST_CASE("keep-alive: three scrapes on one connection, each rendered anew") {
  Served e;
  RawSocket peer;
  REQUIRE(peer.connect(e.endpoint->port()));
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(peer.sendAll(get("/metrics")));
    CHECK(readAnswer(peer).body ==
          fmt::format("# TYPE wheelbeat_x_total counter\nwheelbeat_x_total {}\n", i));
  }
  CHECK(e.endpoint->scrapes() == 3);
}

TEST_CASE("pipelined requests in one write are answered in order") {
  Served e;
  RawSocket peer;
  REQUIRE(peer.connect(e.endpoint->port()));
  REQUIRE(peer.sendAll(get("/metrics") + get("/other") + get("/metrics")));
  CHECK(readAnswer(peer).status == 200);
  CHECK(readAnswer(peer).status == 404);
  CHECK(readAnswer(peer).body.ends_with("wheelbeat_x_total 2\n"));
}

TEST_CASE("other paths are 404, other methods 405, HEAD has no body, Connection close closes") {
  Served e;
  RawSocket peer;
  REQUIRE(peer.connect(e.endpoint->port()));
  REQUIRE(peer.sendAll(get("/")));
  CHECK(readAnswer(peer).status == 404);
  REQUIRE(peer.sendAll("DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(readAnswer(peer).status == 405);
  REQUIRE(peer.sendAll("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  const Answer head = readAnswer(peer, true);
  CHECK(head.status == 200);
  CHECK(head.headers.find("Content-Length: ") != std::string::npos);
  CHECK(e.endpoint->scrapes() == 0);  // HEAD renders (for the length) but is no scrape
  REQUIRE(peer.sendAll(get("/metrics", "Connection: close\r\n")));
  const Answer last = readAnswer(peer);
  CHECK(last.status == 200);
  CHECK(last.headers.find("Connection: close\r\n") != std::string::npos);
  CHECK(peer.waitPeerClosed());
  CHECK(e.endpoint->scrapes() == 1);
}

TEST_CASE("garbage is answered 400 and closes that connection only") {
  Served e;
  RawSocket idle;
  REQUIRE(idle.connect(e.endpoint->port()));
  RawSocket bad;
  REQUIRE(bad.connect(e.endpoint->port()));
  REQUIRE(bad.sendAll(std::string("\xDA\xBB\xC2\x00garbage\r\n\r\n", 15)));
  CHECK(readAnswer(bad).status == 400);
  CHECK(bad.waitPeerClosed());
  CHECK(e.serves());
  REQUIRE(idle.sendAll(get("/metrics")));  // the other connection was left alone
  CHECK(readAnswer(idle).status == 200);
}

TEST_CASE("headers beyond maxHeaderBytes are answered 431 and closed, whatever follows") {
  Served e(MetricsEndpointOptions{.maxHeaderBytes = 1024});
  RawSocket big;
  REQUIRE(big.connect(e.endpoint->port()));
  // 2 KiB of header lines in one write (one read for the endpoint: nothing is left unread when
  // it closes, so the kernel ends with FIN, not RST, and the answer can be read).
  std::string request = "GET /metrics HTTP/1.1\r\n";
  while (request.size() < 2048) request += "X-Filler: aaaaaaaaaaaaaaaa\r\n";
  REQUIRE(big.sendAll(request));
  CHECK(readAnswer(big).status == 431);
  CHECK(big.waitPeerClosed());
  CHECK(e.renders == 0);
  CHECK(e.serves());
}

TEST_CASE("a request with a body is answered 413 and closed") {
  Served e;
  RawSocket peer;
  REQUIRE(peer.connect(e.endpoint->port()));
  REQUIRE(peer.sendAll("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  CHECK(readAnswer(peer).status == 413);
  CHECK(peer.waitPeerClosed());
  CHECK(e.serves());
}

TEST_CASE("a slowloris is closed after requestTimeout - a complete scrape is not") {
  Served e(MetricsEndpointOptions{.requestTimeout = std::chrono::milliseconds(300)});
  RawSocket slow;
  // Before connect(): the endpoint's clock starts when it accepts, which may come before
  // connect() returns here.
  const auto t0 = Clock::now();
  REQUIRE(slow.connect(e.endpoint->port()));
  REQUIRE(slow.sendAll("GET /metrics HTTP/1.1\r\nHost: x\r\n"));  // never finished
  REQUIRE(slow.waitPeerClosed(5s));
  CHECK(Clock::now() - t0 >= 300ms);  // never early
  CHECK(e.renders == 0);
  CHECK(e.serves());
}

TEST_CASE("beyond maxConnections a new connection is accepted and closed at once") {
  Served e(MetricsEndpointOptions{.maxConnections = 2});
  RawSocket a;
  RawSocket b;
  RawSocket c;
  REQUIRE(a.connect(e.endpoint->port()));
  REQUIRE(b.connect(e.endpoint->port()));
  REQUIRE(a.sendAll(get("/metrics")));  // both accepted by the endpoint before the third
  REQUIRE(b.sendAll(get("/metrics")));
  REQUIRE(readAnswer(a).status == 200);
  REQUIRE(readAnswer(b).status == 200);
  REQUIRE(c.connect(e.endpoint->port()));
  CHECK(c.waitPeerClosed());
  CHECK(e.endpoint->rejected() == 1);
  a.close();
  CHECK(waitFor([&] { return e.serves(); }));  // a slot freed once `a`'s close was seen
}

TEST_CASE("a render that throws answers 500 - the next scrape is served") {
  Env env;
  std::atomic<int> calls{0};
  auto endpoint = MetricsEndpoint::start(env.loop, {.listen = "127.0.0.1:0"}, [&] {
    if (++calls == 1) throw std::runtime_error("collector broke");
    return std::string("ok 1\n");
  });
  RawSocket peer;
  REQUIRE(peer.connect(endpoint->port()));
  REQUIRE(peer.sendAll(get("/metrics")));
  CHECK(readAnswer(peer).status == 500);
  REQUIRE(peer.sendAll(get("/metrics")));
  CHECK(readAnswer(peer).body == "ok 1\n");
  endpoint->close();
}

TEST_CASE("close() stops listening and closes open connections - render is not called after") {
  Served e;
  RawSocket open;
  REQUIRE(open.connect(e.endpoint->port()));
  const std::uint16_t port = e.endpoint->port();
  e.endpoint->close();
  e.endpoint->close();  // idempotent
  CHECK(open.waitPeerClosed());
  RawSocket late;
  CHECK_FALSE(late.connect(port));
  CHECK(e.renders == 0);
  CHECK(e.endpoint->port() == port);  // still readable after close
}

TEST_CASE("bad options name the option, its value and what is expected") {
  Env env;
  auto render = [] { return std::string(); };
  CHECK_THROWS_WITH_AS(MetricsEndpoint::start(env.loop, {.listen = "9464"}, render),
                       "MetricsEndpointOptions.listen = \"9464\" (expected: \"host:port\", IPv6 "
                       "as \"[::1]:9464\", port 0..65535 (0 = any free port))",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      MetricsEndpoint::start(env.loop, {.listen = "127.0.0.1:0", .maxHeaderBytes = 10}, render),
      "MetricsEndpointOptions.maxHeaderBytes = 10 (expected: >= 256)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      MetricsEndpoint::start(env.loop, {.listen = "127.0.0.1:0", .maxConnections = 0}, render),
      "MetricsEndpointOptions.maxConnections = 0 (expected: >= 1)", std::invalid_argument);
  CHECK_THROWS_AS(MetricsEndpoint::start(env.loop, {.listen = "127.0.0.1:0"}, nullptr),
                  std::invalid_argument);
  auto first = MetricsEndpoint::start(env.loop, {.listen = "127.0.0.1:0"}, render);
  const std::string taken = fmt::format("127.0.0.1:{}", first->port());
  CHECK_THROWS_WITH_AS(MetricsEndpoint::start(env.loop, {.listen = taken}, render),
                       fmt::format("metrics endpoint listen on {}: EADDRINUSE (address already "
                                   "in use)",
                                   taken)
                           .c_str(),
                       NetException);
  first->close();
}

TEST_CASE("parseEndpoint reads host:port and bracketed IPv6, and refuses the rest") {
  CHECK(parseEndpoint("127.0.0.1:9464") == wheelbeat::net::Endpoint{"127.0.0.1", 9464});
  CHECK(parseEndpoint("[::1]:0") == wheelbeat::net::Endpoint{"::1", 0});
  CHECK(parseEndpoint("localhost:65535") == wheelbeat::net::Endpoint{"localhost", 65535});
  for (std::string_view bad : {"", "9464", ":9464", "h:", "h:65536", "::1:80", "[1.2.3.4]:80",
                               "h :80", "h:8x", "[::1:80", "h/x:80"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseEndpoint(bad).has_value());
  }
}
}  // TEST_SUITE("metrics-endpoint")

}  // namespace wbnet
