// Users (core/users.h): tokens name the users of a resource while they live.
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/users.h>

#include <doctest/doctest.h>

#include <memory>
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
}  // TEST_SUITE("core")
