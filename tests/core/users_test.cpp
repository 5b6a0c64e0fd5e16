// Users (core/users.h): tokens name the users of a resource while they live.
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/users.h>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using wheelbeat::core::Users;

TEST_SUITE("core") {
TEST_CASE("users: tokens name the users while they live, in the order they came") {
  Users users;
  Users::Use a = users.add("TcpClient 127.0.0.1:1");
  Users::Use b = users.add("TcpServer 127.0.0.1:2");
  CHECK(users.names() ==
        std::vector<std::string>{"TcpClient 127.0.0.1:1", "TcpServer 127.0.0.1:2"});
  Users::Use moved = std::move(a);
  CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from token is empty
  CHECK(moved);
  CHECK(users.names().size() == 2);
  moved.reset();
  moved.reset();  // idempotent
  CHECK(users.names() == std::vector<std::string>{"TcpServer 127.0.0.1:2"});
  b = users.add("Directory org.example.Echo");  // the old token is given up first
  CHECK(users.names() == std::vector<std::string>{"Directory org.example.Echo"});
  b.reset();
  users.checkNoneLeft("Users");  // none left: returns
  CHECK(users.names().empty());
}

TEST_CASE("users: a token that outlives its users is inert") {
  auto users = std::make_unique<Users>();
  Users::Use use = users->add("late");
  users.reset();
  use.reset();  // nothing to remove from: no crash
  CHECK_FALSE(use);
}

TEST_CASE("users: the wheel lists its users") {
  wheelbeat::core::HashedWheelTimer timer;
  {
    auto use = timer.use("TcpClient 127.0.0.1:20880");
    CHECK(timer.users() == std::vector<std::string>{"TcpClient 127.0.0.1:20880"});
  }
  CHECK(timer.users().empty());
}
TEST_CASE("users: stopEach runs each live user's stop handler, in order, once") {
  Users users;
  std::vector<std::string> ran;
  Users::Use a = users.add("first", [&] { ran.push_back("first"); });
  Users::Use quiet = users.add("no handler");
  Users::Use b = users.add("second", [&] {
    ran.push_back("second");
    throw std::runtime_error("handler failed");  // logged and dropped
  });
  Users::Use gone = users.add("gone", [&] { ran.push_back("gone"); });
  gone.reset();
  CHECK(users.stopEach("Thing") == 3);
  CHECK(ran == std::vector<std::string>{"first", "second"});
  CHECK(users.names().size() == 3);  // stopping is not leaving: each user drops its own token
  a.reset();
  quiet.reset();
  b.reset();
  CHECK(users.stopEach("Thing") == 0);
  CHECK(ran.size() == 2);
}

TEST_CASE("users: a quiet user is still a user but is not told of a stop") {
  Users users;
  int ran = 0;
  Users::Use closed = users.add("closed client", [&] { ++ran; });
  closed.quiet();
  closed.quiet();  // idempotent
  CHECK(users.stopEach("Thing") == 0);
  CHECK(ran == 0);
  CHECK(users.names() == std::vector<std::string>{"closed client"});  // still must outlive it
}

TEST_CASE("users: a stop handler may drop its own token") {
  Users users;
  Users::Use self;
  int ran = 0;
  self = users.add("self", [&] {
    ++ran;
    self.reset();  // from inside its own handler: no wait, no deadlock
  });
  CHECK(users.stopEach("Thing") == 1);
  CHECK(ran == 1);
  CHECK(users.names().empty());
}

TEST_CASE("users: the wheel's stop() runs its users' stop handlers first") {
  wheelbeat::core::HashedWheelTimer timer;
  bool pendingAtStop = false;
  wheelbeat::core::Timeout t;
  auto use = timer.use("TcpClient 127.0.0.1:20880", [&] {
    pendingAtStop = !timer.isStopped();
    (void)t.cancel();  // a user cancels its timeouts on a timer not stopped yet
  });
  t = timer.newTimeout([] {}, std::chrono::hours(1));
  CHECK(timer.stop().empty());  // the user cancelled it: nothing handed back
  CHECK(pendingAtStop);
  CHECK(timer.stop().empty());  // a second stop tells nobody again
}
}  // TEST_SUITE("core")
