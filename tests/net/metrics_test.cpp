// net::ChannelMetrics on loopback: frames and bytes in / out counted exactly for N requests, a
// heartbeat's RTT recorded once and its answer counted by the peer, protocol errors by kind
// (bad magic, truncated at EOF), READONLY received, channels by state, accepted connections,
// and the catalogue's label sets matching the net enums. Heartbeats are 1 min apart here unless
// a test sends one, so no frame is counted that the test did not cause.
#include "support.h"

#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/net.h>

#include <doctest/doctest.h>

namespace {

using namespace wbnet;
using wheelbeat::core::MetricsWriter;

constexpr std::uint64_t kFrame = kHeaderSize;  // header bytes of every frame

ServerOptions quietServer(const std::shared_ptr<ChannelMetrics>& metrics) {
  ServerOptions o = serverOptions();
  o.heartbeat.interval = 1min;
  o.heartbeat.closeTimeout = 5min;
  o.metrics = metrics;
  return o;
}

ClientOptions quietClient(std::uint16_t port, const std::shared_ptr<ChannelMetrics>& metrics) {
  ClientOptions o = clientOptions(port);
  o.heartbeat.interval = 1min;
  o.metrics = metrics;
  return o;
}

ChannelHandler echo() {
  return ChannelHandler{.onFrame = [](Channel& ch, const FrameView& f) {
    if (f.isRequest() && f.isTwoWay()) (void)ch.reply(f, f.body);
  }};
}

std::uint64_t load(const std::atomic<std::uint64_t>& a) { return a.load(); }

std::string textOf(const ChannelMetrics& m) {
  MetricsWriter out;
  writeMetrics(m, out);
  return out.prometheusText();
}

bool hasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_SUITE("net") {

TEST_CASE("metrics: N requests count frames and bytes in and out exactly on both sides") {
  Env env;
  auto serverMetrics = std::make_shared<ChannelMetrics>();
  auto clientMetrics = std::make_shared<ChannelMetrics>();
  TcpServer server(env.loop, env.timer, quietServer(serverMetrics), echo());
  const auto port = server.listen();
  TcpClient client(env.loop, env.timer, quietClient(port, clientMetrics));
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 5s));
  REQUIRE(waitFor([&] { return serverMetrics->channels(ClientState::Connected) == 1; }, 5s));
  CHECK(clientMetrics->channels(ClientState::Connected) == 1);
  CHECK(clientMetrics->channels(ClientState::Disconnected) == 0);
  CHECK(load(serverMetrics->accepted) == 1);

  constexpr std::uint64_t kRequests = 20;
  const std::string body = "hello";  // 5 bytes: 21 per frame
  std::atomic<std::uint64_t> ok{0};
  for (std::uint64_t i = 0; i < kRequests; ++i) {
    REQUIRE(client.channel()
                .request(body, 5s,
                         [&](const CallResult& r) {
                           if (r.status == CallStatus::Ok) ++ok;
                         })
                .sent == SendResult::Queued);
  }
  REQUIRE(waitFor([&] { return ok.load() == kRequests; }, 10s));
  const std::uint64_t bytes = kRequests * (kFrame + body.size());
  // The server counts its written bytes right after write(2) returned: wait for that too.
  REQUIRE(waitFor([&] { return load(serverMetrics->bytesOut) == bytes; }, 5s));
  CHECK(load(clientMetrics->framesOut) == kRequests);
  CHECK(load(clientMetrics->bytesOut) == bytes);
  CHECK(load(serverMetrics->framesIn) == kRequests);
  CHECK(load(serverMetrics->bytesIn) == bytes);
  CHECK(load(serverMetrics->framesOut) == kRequests);
  CHECK(load(clientMetrics->framesIn) == kRequests);
  CHECK(load(clientMetrics->bytesIn) == bytes);
  const std::string text = textOf(*serverMetrics);
  CHECK(hasLine(text, "wheelbeat_channel_frames_in_total 20"));
  CHECK(hasLine(text, "wheelbeat_channel_bytes_out_total 420"));
  CHECK(hasLine(text, "wheelbeat_channels{state=\"connected\"} 1"));
  CHECK(hasLine(text, "wheelbeat_server_accepted_total 1"));

  client.close();
  CHECK(clientMetrics->channels(ClientState::Connected) == 0);
  CHECK(clientMetrics->channels(ClientState::Disconnected) == 0);  // closed: not counted
  CHECK(waitFor([&] { return serverMetrics->channels(ClientState::Connected) == 0; }, 5s));
  server.stop();
}

TEST_CASE("metrics: a heartbeat records one RTT and the peer counts one answer") {
  Env env;
  auto serverMetrics = std::make_shared<ChannelMetrics>();
  auto clientMetrics = std::make_shared<ChannelMetrics>();
  TcpServer server(env.loop, env.timer, quietServer(serverMetrics), echo());
  const auto port = server.listen();
  TcpClient client(env.loop, env.timer, quietClient(port, clientMetrics));
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 5s));

  client.channel().sendHeartbeat();
  REQUIRE(waitFor([&] { return clientMetrics->heartbeatRtt.snapshot().count == 1; }, 5s));
  const auto rtt = clientMetrics->heartbeatRtt.snapshot();
  CHECK(rtt.sum == client.channel().lastHeartbeatRtt());
  CHECK(load(serverMetrics->heartbeatsAnswered) == 1);
  CHECK(load(clientMetrics->heartbeatsAnswered) == 0);
  CHECK(load(clientMetrics->framesOut) == 1);
  CHECK(load(clientMetrics->bytesOut) == kFrame + 1);
  CHECK(load(clientMetrics->framesIn) == 1);
  CHECK(load(serverMetrics->framesIn) == 1);
  CHECK(serverMetrics->heartbeatRtt.snapshot().count == 0);
  MetricsWriter out;
  writeMetrics(*clientMetrics, out);
  CHECK(hasLine(out.prometheusText(), "wheelbeat_channel_heartbeat_rtt_seconds_count 1"));
  client.close();
  server.stop();
}

TEST_CASE("metrics: a bad-magic peer and a truncated frame count one protocol error each") {
  Env env;
  auto metrics = std::make_shared<ChannelMetrics>();
  TcpServer server(env.loop, env.timer, quietServer(metrics), echo());
  const auto port = server.listen();
  {
    RawSocket peer;
    REQUIRE(peer.connect(port));
    REQUIRE(peer.sendAll("GET /metrics HTTP/1.1\r\n\r\n"));
    CHECK(peer.waitPeerClosed(5s));
  }
  REQUIRE(waitFor([&] { return metrics->decodeErrors(DecodeError::BadMagic) == 1; }, 5s));
  {
    RawSocket peer;
    REQUIRE(peer.connect(port));
    REQUIRE(peer.sendAll(std::string("\xDA\xBB\xC2\x00", 4)));  // a header cut short, then EOF
  }
  REQUIRE(waitFor([&] { return metrics->decodeErrors(DecodeError::TruncatedAtEof) == 1; }, 5s));
  CHECK(metrics->decodeErrors(DecodeError::BodyTooLarge) == 0);
  CHECK(metrics->decodeErrors(DecodeError::BudgetExceeded) == 0);
  CHECK(metrics->decodeErrors(DecodeError::OutOfMemory) == 0);
  CHECK(load(metrics->framesIn) == 0);
  CHECK(load(metrics->accepted) == 2);
  const std::string text = textOf(*metrics);
  CHECK(hasLine(text, "wheelbeat_channel_protocol_errors_total{kind=\"bad-magic\"} 1"));
  CHECK(hasLine(text, "wheelbeat_channel_protocol_errors_total{kind=\"truncated-at-eof\"} 1"));
  CHECK(hasLine(text, "wheelbeat_channel_protocol_errors_total{kind=\"body-too-large\"} 0"));
  server.stop();
}

TEST_CASE("metrics: a graceful shutdown's READONLY is received once by the client") {
  Env env;
  auto serverMetrics = std::make_shared<ChannelMetrics>();
  auto clientMetrics = std::make_shared<ChannelMetrics>();
  TcpServer server(env.loop, env.timer, quietServer(serverMetrics), echo());
  const auto port = server.listen();
  Recorder rec;
  TcpClient client(env.loop, env.timer, quietClient(port, clientMetrics), rec.handler(),
                   rec.stateCallback());
  client.start();
  REQUIRE(waitFor([&] { return client.state() == ClientState::Connected; }, 5s));
  REQUIRE(waitFor([&] { return server.connections() == 1; }, 5s));

  const ShutdownReport report = server.shutdown(5s);
  CHECK(report.notified == 1);
  REQUIRE(waitFor([&] { return load(clientMetrics->readOnlyReceived) == 1; }, 5s));
  CHECK(load(serverMetrics->readOnlyReceived) == 0);
  CHECK(load(serverMetrics->framesOut) == 1);
  CHECK(load(serverMetrics->bytesOut) == kReadOnlyFrameBytes);
  const auto states = rec.stateList();
  CHECK(std::count(states.begin(), states.end(), ClientState::ReadOnly) == 1);
  CHECK(hasLine(textOf(*clientMetrics), "wheelbeat_channel_readonly_received_total 1"));
  client.close();
}

TEST_CASE("metrics: the catalogue's label values are the names of the net enums") {
  const ChannelMetrics fresh;
  MetricsWriter out;
  CHECK_NOTHROW(writeMetrics(fresh, out));  // the writer refuses a value outside the catalogue
  const std::string text = out.prometheusText();
  for (const auto s : {ClientState::Disconnected, ClientState::Connecting, ClientState::Connected,
                       ClientState::ReadOnly}) {
    CHECK(hasLine(text, fmt::format("wheelbeat_channels{{state=\"{}\"}} 0", clientStateName(s))));
  }
  for (const auto e :
       {DecodeError::BadMagic, DecodeError::BodyTooLarge, DecodeError::TruncatedAtEof,
        DecodeError::BudgetExceeded, DecodeError::OutOfMemory}) {
    CHECK(hasLine(text, fmt::format("wheelbeat_channel_protocol_errors_total{{kind=\"{}\"}} 0",
                                    decodeErrorName(e))));
  }
}

}  // TEST_SUITE("net")
