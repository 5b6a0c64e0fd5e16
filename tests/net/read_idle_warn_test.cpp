// A client whose connections keep ending read-idle, over loopback against a peer the test plays:
// three read-idle reconnects in a row with no read between them log one Warn with the idle
// timeout and the heartbeat interval; a read on each connection keeps the count from growing.
#include "../log_capture.h"
#include "support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

using namespace wbnet;
using wbtest::LevelLogCapture;
using wheelbeat::core::LogLevel;

namespace {

constexpr int kConnections = 5;  // 4 read-idle reconnects: the Warn once, not again at 4

// The Warn lines about read-idle reconnects, in order.
std::vector<std::string> readIdleWarnings(const LevelLogCapture& log) {
  std::vector<std::string> out;
  for (const std::string& line : log.lines()) {
    if (line.find("read-idle reconnects") != std::string::npos) out.push_back(line);
  }
  return out;
}

// A client of `peer` with heartbeats every 100 ms and the default idle timeout (300 ms).
struct Client {
  Client(Env& env, const RawListener& peer) : cli(env.loop, env.timer, options(peer.port()), {}) {
    cli.start();
  }
  ClientOptions options(std::uint16_t port) {
    ClientOptions o = clientOptions(port);
    o.taskMetrics = metrics;
    return o;
  }
  std::shared_ptr<wheelbeat::tasks::TaskMetrics> metrics =
      std::make_shared<wheelbeat::tasks::TaskMetrics>();
  TcpClient cli;
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("three read-idle reconnects in a row without a read log one Warn with the numbers") {
  LevelLogCapture log(LogLevel::Warn);
  Env env;
  RawListener peer;
  Client c(env, peer);
  // Accepted and never answered: each connection ends read-idle, then the client connects again.
  std::vector<std::unique_ptr<RawSocket>> silent;
  for (int i = 0; i < kConnections; ++i) {
    silent.push_back(std::make_unique<RawSocket>(peer.accept()));
    REQUIRE(silent.back()->fd() >= 0);
  }
  CHECK(c.metrics->snapshot().reconnectsStarted == kConnections - 1);
  c.cli.close();
  CHECK(readIdleWarnings(log) ==
        std::vector<std::string>{fmt::format(
            "WARN client 127.0.0.1:{}: 3 read-idle reconnects in a row (idle timeout 300ms, "
            "heartbeat interval 100ms): the peer answers slower than the idle timeout?",
            peer.port())});
}

TEST_CASE("read-idle reconnects with a read on each connection log no Warn") {
  LevelLogCapture log(LogLevel::Warn);
  Env env;
  RawListener peer;
  Client c(env, peer);
  // Each connection's first heartbeat is answered, then the peer falls silent.
  std::vector<std::unique_ptr<RawSocket>> answered;
  for (int i = 0; i < kConnections; ++i) {
    answered.push_back(std::make_unique<RawSocket>(peer.accept()));
    RawSocket& s = *answered.back();
    REQUIRE(s.fd() >= 0);
    const std::string request = s.recvExactly(17);
    REQUIRE(request.size() == 17);
    std::uint64_t id = 0;
    for (std::size_t b = 4; b < 12; ++b) id = (id << 8) | static_cast<unsigned char>(request[b]);
    REQUIRE(request == heartbeatRequest(id));
    REQUIRE(s.sendAll(heartbeatResponse(id)));
  }
  CHECK(c.metrics->snapshot().reconnectsStarted == kConnections - 1);
  c.cli.close();
  CHECK(readIdleWarnings(log).empty());
}

}  // TEST_SUITE("net")
