// A plain ZooKeeper client for tests (Client: one ZkSession on a loop, its state changes recorded,
// every operation awaited with a deadline), shared by the ZkSession and engine suites and the
// registry fixtures (engines.h). Test-only; everything waits at most kWait.
#pragma once

#include "zk_session.h"

#include <wheelbeat/net/event_loop.h>

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace wbzk {

using namespace std::chrono_literals;
using namespace wheelbeat::registry::zk;
using wheelbeat::net::EventLoop;
using Clock = std::chrono::steady_clock;

constexpr auto kWait = 15s;  // generous bound for anything the server has to do

inline bool waitFor(const std::function<bool()>& pred, std::chrono::nanoseconds timeout = kWait) {
  const auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Runs an asynchronous operation on the loop and waits (bounded) for its one result.
template <typename T>
T await(EventLoop& loop, std::function<void(std::function<void(T)>)> start) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  REQUIRE(loop.post([start = std::move(start), promise] {
    start([promise](T value) { promise->set_value(std::move(value)); });
  }));
  REQUIRE(future.wait_for(kWait) == std::future_status::ready);
  return future.get();
}

struct Children {
  ZkResult result;
  std::vector<std::string> names;
};
struct Existence {
  ZkResult result;
  std::optional<NodeStat> stat;
};
struct Created {
  ZkResult result;
  std::string path;
};

// Everything a watch saw, thread-safe.
struct WatchLog {
  std::mutex mutex;
  std::vector<std::pair<WatchEvent, std::string>> events;

  ZkSession::WatchCallback callback() {
    return [this](WatchEvent e, const std::string& path) {
      std::lock_guard lock(mutex);
      events.emplace_back(e, path);
    };
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return events.size();
  }
  std::pair<WatchEvent, std::string> at(std::size_t i) {
    std::lock_guard lock(mutex);
    return events.at(i);
  }
};

// One ZkSession on a loop, with its state changes recorded.
class Client {
public:
  Client(EventLoop& loop, const std::string& hosts, std::chrono::milliseconds timeout = 2000ms,
         std::optional<Credentials> resume = std::nullopt)
      : loop_(loop) {
    ZkSession::Options o;
    o.hosts = hosts;
    o.sessionTimeout = timeout;
    o.resume = resume;
    bool ok = false;
    REQUIRE(loop_.call([&] {
      session_ = std::make_unique<ZkSession>(loop_, o, [this](const StateEvent& e) {
        std::lock_guard lock(mutex_);
        states_.push_back(e);
      });
      ok = session_->connect();
    }));
    REQUIRE(ok);
  }
  ~Client() {
    (void)loop_.call([this] { session_.reset(); });
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  ZkSession& session() { return *session_; }

  std::vector<StateEvent> states() {
    std::lock_guard lock(mutex_);
    return states_;
  }
  std::vector<SessionState> stateNames() {
    std::vector<SessionState> out;
    for (const auto& e : states()) out.push_back(e.state);
    return out;
  }
  // The n-th (1-based) report of `s` arrives within the bound.
  bool waitState(SessionState s, int n = 1) {
    return waitFor([&] {
      int seen = 0;
      for (const auto& e : states()) seen += e.state == s ? 1 : 0;
      return seen >= n;
    });
  }
  std::int64_t id() {
    std::int64_t v = 0;
    REQUIRE(loop_.call([&] { v = session_->sessionId(); }));
    return v;
  }
  Credentials credentials() {
    Credentials c;
    REQUIRE(loop_.call([&] { c = session_->credentials(); }));
    return c;
  }
  void close() {
    REQUIRE(loop_.call([this] { session_->close(); }));
  }

  Created create(const std::string& path, CreateOptions o = {}, const std::string& data = {}) {
    return await<Created>(loop_, [this, path, o, data](auto done) {
      session_->create(path, data, o, [done](const ZkResult& r, const std::string& p) {
        done(Created{r, p});
      });
    });
  }
  ZkResult remove(const std::string& path) {
    return await<ZkResult>(loop_, [this, path](auto done) { session_->remove(path, done); });
  }
  Children children(const std::string& path, ZkSession::WatchCallback watch = {}) {
    return await<Children>(loop_, [this, path, watch](auto done) {
      session_->getChildren(path, watch, [done](const ZkResult& r, const auto& names) {
        done(Children{r, names});
      });
    });
  }
  Existence exists(const std::string& path, ZkSession::WatchCallback watch = {}) {
    return await<Existence>(loop_, [this, path, watch](auto done) {
      session_->exists(path, watch, [done](const ZkResult& r, const std::optional<NodeStat>& s) {
        done(Existence{r, s});
      });
    });
  }
  std::pair<std::size_t, std::size_t> pending() {
    std::pair<std::size_t, std::size_t> p;
    REQUIRE(loop_.call([&] { p = {session_->pendingOperations(), session_->armedWatches()}; }));
    return p;
  }

private:
  EventLoop& loop_;
  std::unique_ptr<ZkSession> session_;
  std::mutex mutex_;
  std::vector<StateEvent> states_;
};

// Blocks a loop's thread until released (or 30 s pass): its sessions hear nothing meanwhile.
class LoopBlock {
public:
  explicit LoopBlock(EventLoop& loop) : released_(release_.get_future().share()) {
    std::promise<void> entered;
    auto in = entered.get_future();
    REQUIRE(
        loop.post([f = released_, e = std::make_shared<std::promise<void>>(std::move(entered))] {
          e->set_value();
          (void)f.wait_for(30s);
        }));
    REQUIRE(in.wait_for(kWait) == std::future_status::ready);
  }
  ~LoopBlock() { release(); }
  void release() {
    if (!done_) release_.set_value();
    done_ = true;
  }

private:
  std::promise<void> release_;
  std::shared_future<void> released_;
  bool done_ = false;
};

}  // namespace wbzk
