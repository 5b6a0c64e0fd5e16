// LoopWheel: a Drive::Manual wheel advanced by its event loop. Tasks run on the loop thread,
// never early; heartbeats and reconnects work through it; closing it (or stopping the loop)
// ends the driving, and what was pending stays in the timer.
#include "support.h"

#include <wheelbeat/net/loop_wheel.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace wbnet {

using wheelbeat::core::Drive;
using wheelbeat::core::TimerHooks;
using wheelbeat::core::TimerStoppedError;
using wheelbeat::net::LoopWheel;

namespace {

TimerHooks manualHooks() {
  TimerHooks hooks;
  hooks.drive = Drive::Manual;
  return hooks;
}

// A 10 ms wheel without a thread, and a loop.
struct ManualEnv {
  HashedWheelTimer timer{WheelOptions{.tickDuration = 10ms, .ticksPerWheel = 512}, manualHooks()};
  EventLoop loop{"wb-loopwheel"};

  ~ManualEnv() { CHECK(loop.stop() == 0); }
};

class ThreadRecorder final : public wheelbeat::tasks::TaskListener {
public:
  explicit ThreadRecorder(EventLoop& loop) : loop_(loop) {}
  void onHeartbeatSent(wheelbeat::tasks::Channel& /*channel*/) override {
    sent.fetch_add(1);
    if (!loop_.isLoopThread()) offLoop.fetch_add(1);
  }
  std::atomic<int> sent{0};
  std::atomic<int> offLoop{0};

private:
  EventLoop& loop_;
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("LoopWheel runs every timeout on the loop thread and never early") {
  ManualEnv env;
  LoopWheel driver(env.loop, env.timer);
  constexpr int kTimeouts = 40;
  std::atomic<int> ran{0};
  std::atomic<int> offLoop{0};
  std::atomic<int> early{0};
  for (int i = 0; i < kTimeouts; ++i) {
    const auto delay = std::chrono::milliseconds(i % 8 * 7);  // 0 .. 49 ms: several ticks
    const auto deadline = env.timer.now() + delay;
    env.timer.newTimeout(
        [&, deadline] {
          if (!env.loop.isLoopThread()) offLoop.fetch_add(1);
          if (env.timer.now() < deadline) early.fetch_add(1);
          ran.fetch_add(1);
        },
        delay);
  }
  REQUIRE(waitFor([&] { return ran.load() == kTimeouts; }));
  CHECK(offLoop.load() == 0);
  CHECK(early.load() == 0);
  CHECK(env.timer.pendingTimeouts() == 0);
  CHECK(driver.advances() >= 1);
}

TEST_CASE("LoopWheel refuses a timer with its own thread and a stopped timer") {
  ManualEnv env;
  HashedWheelTimer threaded{WheelOptions{.tickDuration = 10ms}};
  CHECK_THROWS_WITH_AS(LoopWheel(env.loop, threaded),
                       "LoopWheel: timer.drive() = Thread (expected: Manual, set in "
                       "TimerHooks::drive)",
                       std::invalid_argument);
  HashedWheelTimer stopped{WheelOptions{.tickDuration = 10ms}, manualHooks()};
  (void)stopped.stop();
  CHECK_THROWS_AS(LoopWheel(env.loop, stopped), TimerStoppedError);
}

TEST_CASE("heartbeats through a LoopWheel: sent on the loop thread and answered") {
  ManualEnv env;
  LoopWheel driver(env.loop, env.timer);
  Recorder server;
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  auto listener = std::make_shared<ThreadRecorder>(env.loop);
  TcpServer srv(env.loop, env.timer, serverOptions(), server.handler());
  ClientOptions options = clientOptions(srv.listen());
  options.taskMetrics = metrics;
  options.taskListener = listener;
  TcpClient cli(env.loop, env.timer, options, client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  REQUIRE(waitFor([&] { return listener->sent.load() >= 3; }, 5s));
  REQUIRE(waitFor([&] { return cli.channel().lastHeartbeatRtt() > 0ns; }));
  CHECK(listener->offLoop.load() == 0);
  CHECK(metrics->reconnectsStarted.load() == 0);
  CHECK(server.frameCount() == 0);
  cli.close();
  srv.stop();
  CHECK(server.closed.load() == 1);
}

TEST_CASE("a client behind a LoopWheel reconnects after its server restarts") {
  ManualEnv env;
  LoopWheel driver(env.loop, env.timer);
  Recorder server;
  Recorder client;
  auto metrics = std::make_shared<wheelbeat::tasks::TaskMetrics>();
  auto first = std::make_unique<TcpServer>(env.loop, env.timer, serverOptions(), server.handler());
  const std::uint16_t port = first->listen();
  ClientOptions options = clientOptions(port);
  options.taskMetrics = metrics;
  TcpClient cli(env.loop, env.timer, options, client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  first->stop();
  first.reset();
  REQUIRE(waitFor([&] { return cli.state() != ClientState::Connected; }));
  TcpServer second(env.loop, env.timer, serverOptions(port), server.handler());
  REQUIRE(second.listen() == port);
  REQUIRE(waitFor([&] { return cli.state() == ClientState::Connected; }));
  CHECK(metrics->reconnectsStarted.load() >= 1);
  cli.close();
  second.stop();
}

TEST_CASE("LoopWheel close() stops the driving and the pending timeout stays in the timer") {
  ManualEnv env;
  std::atomic<int> ran{0};
  {
    LoopWheel driver(env.loop, env.timer);
    env.timer.newTimeout([&] { ran.fetch_add(1); }, 0ms);
    REQUIRE(waitFor([&] { return ran.load() == 1; }));
    driver.close();
    driver.close();  // idempotent
    env.timer.newTimeout([&] { ran.fetch_add(1); }, 0ms);
  }
  // No advance() can run after close() returned: stop() hands the second timeout back unrun.
  const auto unrun = env.timer.stop();
  CHECK(unrun.size() == 1);
  CHECK(ran.load() == 1);
}

TEST_CASE("a task may close its LoopWheel, and timer.stop() ends the driving") {
  ManualEnv env;
  std::atomic<int> ran{0};
  auto driver = std::make_unique<LoopWheel>(env.loop, env.timer);
  env.timer.newTimeout(
      [&] {
        driver->close();  // inline on the loop thread, inside advance()
        ran.fetch_add(1);
      },
      0ms);
  REQUIRE(waitFor([&] { return ran.load() == 1; }));
  CHECK(env.loop.call([] {}));  // one more loop turn: the closed handle's callback has run
  const std::uint64_t advances = driver->advances();
  driver.reset();
  // A second driver: the timer stops under it; its next advance() sees that and closes.
  LoopWheel again(env.loop, env.timer);
  REQUIRE(waitFor([&] { return again.advances() >= 1; }));
  CHECK(env.timer.stop().empty());
  CHECK(advances >= 1);
}

TEST_CASE("EventLoop::stop() ends a LoopWheel's driving - closing it afterwards is a no-op") {
  HashedWheelTimer timer{WheelOptions{.tickDuration = 10ms}, manualHooks()};
  EventLoop loop{"wb-loopwheel"};
  LoopWheel driver(loop, timer);
  REQUIRE(waitFor([&] { return driver.advances() >= 1; }));
  CHECK(loop.stop() == 0);  // the driver's handle was closed by the shutdown
  const std::uint64_t advances = driver.advances();
  driver.close();
  timer.newTimeout([] {}, 0ms);
  CHECK(timer.stop().size() == 1);
  CHECK(driver.advances() == advances);
  CHECK_THROWS_AS(LoopWheel(loop, timer), TimerStoppedError);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
