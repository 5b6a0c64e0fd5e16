// EventLoop: post order, coalesced wake-ups, bursts run in shares with polls between them, call(),
// refusal after stop, and stop()'s result.
#include "support.h"

#include <signal.h>
#include <uv.h>  // a check handle counts the loop's polls

#include <future>
#include <stdexcept>
#include <vector>

namespace wbnet {

TEST_SUITE("net") {

TEST_CASE("loop runs posts in post order from two threads each in its own order") {
  EventLoop loop;
  std::vector<int> seen;  // loop thread only
  std::atomic<int> done{0};
  auto producer = [&](int base) {
    for (int i = 0; i < 1000; ++i) {
      REQUIRE(loop.post([&seen, &done, v = base + i] {
        seen.push_back(v);
        ++done;
      }));
    }
  };
  std::thread a(producer, 0);
  std::thread b(producer, 100000);
  a.join();
  b.join();
  REQUIRE(waitFor([&] { return done.load() == 2000; }));
  int lastA = -1;
  int lastB = 99999;
  loop.call([&] {
    for (int v : seen) {
      int& last = v < 100000 ? lastA : lastB;
      CHECK(v == last + 1);
      last = v;
    }
  });
  CHECK(lastA == 999);
  CHECK(lastB == 100999);
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop coalesces 1000 posts made while it is busy into one wake-up") {
  EventLoop loop;
  std::promise<void> entered;
  std::promise<void> release;
  auto released = release.get_future().share();
  loop.post([&entered, released] {
    entered.set_value();
    released.wait();
  });
  entered.get_future().wait();
  const std::uint64_t before = loop.wakeups();
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) loop.post([&ran] { ++ran; });
  release.set_value();
  REQUIRE(waitFor([&] { return ran.load() == 1000; }));
  CHECK(loop.wakeups() == before + 1);
  CHECK(loop.tasksRun() == 1001);
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop runs a burst of posts in shares of 32 and polls I/O between shares") {
  EventLoop loop;
  // A check handle runs once per loop iteration, right after the I/O poll: the number of its
  // runs a posted function sees is the number of polls before it.
  uv_check_t check{};
  int polls = 0;  // loop thread
  loop.call([&] {
    REQUIRE(uv_check_init(loop.native(), &check) == 0);
    check.data = &polls;
    uv_check_start(&check, [](uv_check_t* h) { ++*static_cast<int*>(h->data); });
  });
  std::promise<void> entered;
  std::promise<void> release;
  auto released = release.get_future().share();
  loop.post([&entered, released] {
    entered.set_value();
    released.wait();
  });
  entered.get_future().wait();
  const std::uint64_t before = loop.wakeups();
  constexpr int kPosts = 100;
  std::vector<int> seen;  // loop thread until `ran` reaches kPosts
  std::atomic<int> ran{0};
  for (int i = 0; i < kPosts; ++i) {
    loop.post([&] {
      seen.push_back(polls);
      ran.fetch_add(1, std::memory_order_release);
    });
  }
  release.set_value();
  REQUIRE(waitFor([&] { return ran.load(std::memory_order_acquire) == kPosts; }));
  REQUIRE(seen.size() == kPosts);
  for (int i = 0; i < kPosts; ++i) {
    INFO("post ", i);
    CHECK(seen[static_cast<std::size_t>(i)] - seen[0] == i / 32);  // 32, 32, 32, then 4
  }
  CHECK(loop.wakeups() == before + 1);       // the loop's own resumptions are not wake-ups
  CHECK(loop.tasksRun() == 1 + kPosts + 1);  // with the call() above
  loop.call([&] { uv_close(reinterpret_cast<uv_handle_t*>(&check), nullptr); });
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop call runs on the loop thread and rethrows") {
  EventLoop loop;
  bool onLoop = false;
  CHECK(loop.call([&] { onLoop = loop.isLoopThread(); }));
  CHECK(onLoop);
  CHECK_FALSE(loop.isLoopThread());
  CHECK_THROWS_AS(loop.call([] { throw std::runtime_error("boom"); }), std::runtime_error);
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop survives a throwing post and counts it") {
  EventLoop loop;
  wheelbeat::core::setLogLevel(wheelbeat::core::LogLevel::Off);
  loop.post([] { throw std::runtime_error("posted failure"); });
  std::atomic<bool> after{false};
  loop.post([&] { after = true; });
  REQUIRE(waitFor([&] { return after.load(); }));
  wheelbeat::core::setLogLevel(wheelbeat::core::LogLevel::Info);
  CHECK(loop.taskErrors() == 1);
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop refuses posts after stop and stop is idempotent") {
  EventLoop loop;
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) loop.post([&] { ++ran; });
  CHECK(loop.stop() == 0);
  CHECK(ran.load() == 10);  // accepted before stop(): all ran
  CHECK(loop.isStopped());
  CHECK_FALSE(loop.post([&] { ++ran; }));
  CHECK_FALSE(loop.call([&] { ++ran; }));
  CHECK(ran.load() == 10);
  CHECK(loop.stop() == 0);
}

TEST_CASE("loop stop closes channels left open with reason loop-stopped") {
  HashedWheelTimer timer{WheelOptions{.tickDuration = 10ms}};
  auto loop = std::make_unique<EventLoop>();
  Recorder server;
  Recorder client;
  TcpServer srv(*loop, timer, serverOptions(), server.handler());
  const std::uint16_t port = srv.listen();
  TcpClient cli(*loop, timer, clientOptions(port), client.handler());
  cli.start();
  REQUIRE(waitFor([&] { return server.connected.load() == 1 && client.connected.load() == 1; }));
  CHECK(loop->stop() == 0);  // the safety net: stop() before the server and the client
  CHECK(server.closed.load() == 1);
  CHECK(client.closed.load() == 1);
  CHECK(client.closeReasons().at(0).kind == CloseKind::LoopStopped);
  CHECK(cli.state() == ClientState::Disconnected);
  CHECK_FALSE(cli.channel().isConnected());
  CHECK(cli.channel().send(0, 0, 1, "x") == SendResult::NotConnected);
  cli.close();  // the loop is gone: closes at once, without waiting
  CHECK(cli.state() == ClientState::Closed);
  srv.stop();
}

TEST_CASE("event loop: SIGPIPE is ignored once a loop exists") {
  // A write to a peer that just reset the connection must fail with EPIPE, not kill the process.
  Env env;
  struct sigaction current {};
  REQUIRE(::sigaction(SIGPIPE, nullptr, &current) == 0);
  CHECK((current.sa_handler == SIG_IGN));
}

}  // TEST_SUITE("net")

}  // namespace wbnet
