// resolved(): the effective configuration (what wheelbeat-config prints) — the heartbeat's
// derived timeouts and the wheel's floor and rounding filled in, "none" / "unlimited" / "random"
// zeros kept; idempotent, and a round trip through toJson() gives it back.
#include "helpers.h"

#include <doctest/doctest.h>

#include <chrono>

using namespace std::chrono_literals;
using wheelbeat::config::Config;
using wheelbeat::config::loadString;
using wheelbeat::config::resolved;
using wheelbeat::config::toJson;

TEST_SUITE("config") {

TEST_CASE("resolved: idle_timeout 0 is 3 x interval and close_timeout 0 is idle_timeout") {
  const Config r = resolved(loadString(R"({"heartbeat":{"interval":"1.5s"}})"));
  for (const auto* hb : {&r.heartbeat, &r.server.heartbeat, &r.client.heartbeat}) {
    CHECK(hb->interval == 1500ms);
    CHECK(hb->idleTimeout == 4500ms);
    CHECK(hb->closeTimeout == 4500ms);
    CHECK(hb->seed == 0);  // 0 = a random seed per task: a rule, kept
  }
}

TEST_CASE("resolved: written timeouts are kept and close_timeout follows a written idle_timeout") {
  const Config r =
      resolved(loadString(R"({"heartbeat":{"interval":"10s","idle_timeout":"25s","seed":7}})"));
  CHECK(r.heartbeat.idleTimeout == 25s);
  CHECK(r.heartbeat.closeTimeout == 25s);
  CHECK(r.heartbeat.seed == 7);
  const Config both =
      resolved(loadString(R"({"heartbeat":{"idle_timeout":"3m","close_timeout":"1h"}})"));
  CHECK(both.heartbeat.closeTimeout == 1h);
}

TEST_CASE("resolved: the wheel's tick floor and power-of-two slots") {
  const Config r = resolved(loadString(R"({"wheel":{"tick":"250us","ticks_per_wheel":100}})"));
  CHECK(r.wheel.tickDuration == 1ms);
  CHECK(r.wheel.ticksPerWheel == 128);
  CHECK(r.wheel.maxPendingTimeouts == 0);  // unlimited: kept
}

TEST_CASE("resolved: zeros meaning none or unlimited stay 0") {
  const Config r = resolved(Config{});
  CHECK(r.server.maxConnections == 0);
  CHECK(r.heartbeat.reconnect.deadline == 0s);
  CHECK(r.loop.maxPartialBytes == Config{}.loop.maxPartialBytes);
}

TEST_CASE("resolved: idempotent and stable through toJson") {
  const Config r = resolved(loadString(
      R"({"heartbeat":{"interval":"2s"},"wheel":{"tick":"100us","ticks_per_wheel":3}})"));
  CHECK(resolved(r) == r);
  CHECK(loadString(toJson(r)) == r);
  CHECK_FALSE(r == loadString(R"({"heartbeat":{"interval":"2s"}})"));
}

}  // TEST_SUITE("config")
