// TimerTask: inline vs heap storage, move semantics, capture lifetime, and both call forms
// (no parameter, const Timeout&), alone and through the timer.
#include "support.h"

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <memory>

using namespace wbtest;

namespace {

// Records where the callable lives when it is invoked.
struct SmallProbe {
  const void** where;
  void operator()(const Timeout&) { *where = this; }
};
struct LargeProbe {
  std::array<std::byte, 64> pad{};
  const void** where = nullptr;
  void operator()() { *where = this; }
};
// Small, but its move constructor may throw: must not be stored inline.
struct ThrowingMoveProbe {
  const void** where;
  explicit ThrowingMoveProbe(const void** w) : where(w) {}
  ThrowingMoveProbe(ThrowingMoveProbe&& other) noexcept(false) : where(other.where) {}
  void operator()() { *where = this; }
};

bool livesInside(const void* p, const TimerTask& task) {
  const auto* begin = reinterpret_cast<const std::byte*>(&task);
  const auto* at = static_cast<const std::byte*>(p);
  return at >= begin && at < begin + sizeof(TimerTask);
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a small nothrow-movable callable is stored inline and moves with the task") {
  static_assert(sizeof(SmallProbe) <= TimerTask::kInlineBytes);
  const void* where = nullptr;
  TimerTask task(SmallProbe{&where});
  REQUIRE(static_cast<bool>(task));
  task(Timeout{});
  CHECK(livesInside(where, task));

  TimerTask moved(std::move(task));
  CHECK_FALSE(
      static_cast<bool>(task));  // NOLINT(bugprone-use-after-move): checking the moved-from state
  REQUIRE(static_cast<bool>(moved));
  moved(Timeout{});
  CHECK(livesInside(where, moved));
}

TEST_CASE("a callable capturing 64 bytes lives on the heap and keeps its address across moves") {
  const void* where = nullptr;
  LargeProbe probe;
  probe.where = &where;
  TimerTask task(probe);
  task(Timeout{});
  const void* first = where;
  CHECK_FALSE(livesInside(first, task));

  TimerTask moved(std::move(task));
  moved(Timeout{});
  CHECK(where == first);
  CHECK_FALSE(static_cast<bool>(task));  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("a small callable with a throwing move is stored on the heap") {
  const void* where = nullptr;
  TimerTask task{ThrowingMoveProbe(&where)};
  task(Timeout{});
  CHECK_FALSE(livesInside(where, task));
}

TEST_CASE("a lambda capturing a 64-byte array runs through the timer with its captures intact") {
  ManualWheel w;
  w.start();
  std::array<std::uint64_t, 8> values{1, 2, 3, 4, 5, 6, 7, 8};
  std::uint64_t sum = 0;
  w.schedule(
      [values, &sum] {
        for (auto v : values) sum += v;
      },
      10ms);
  w.step();
  CHECK(sum == 36);
}

TEST_CASE("move assignment destroys the target's callable and empties the source") {
  auto a = std::make_shared<int>(1);
  auto b = std::make_shared<int>(2);
  std::weak_ptr<int> watchA = a;
  std::weak_ptr<int> watchB = b;
  int seen = 0;
  TimerTask first([p = std::move(a), &seen] { seen = *p; });
  TimerTask second([p = std::move(b), &seen] { seen = *p; });
  first = std::move(second);
  CHECK(watchA.expired());
  CHECK_FALSE(watchB.expired());
  CHECK_FALSE(static_cast<bool>(second));  // NOLINT(bugprone-use-after-move)
  first(Timeout{});
  CHECK(seen == 2);
  first = TimerTask{};
  CHECK(watchB.expired());
  CHECK_FALSE(static_cast<bool>(first));
}

TEST_CASE("reset and destruction release the captures of inline and heap tasks") {
  auto small = std::make_shared<int>(1);
  auto large = std::make_shared<int>(2);
  std::weak_ptr<int> watchSmall = small;
  std::weak_ptr<int> watchLarge = large;
  {
    TimerTask inlineTask([p = std::move(small)] { (void)*p; });
    std::array<char, 64> pad{};
    TimerTask heapTask([p = std::move(large), pad] {
      (void)*p;
      (void)pad;
    });
    CHECK(watchSmall.use_count() == 1);
    inlineTask.reset();
    CHECK(watchSmall.expired());
    CHECK_FALSE(static_cast<bool>(inlineTask));
    CHECK_FALSE(watchLarge.expired());
  }
  CHECK(watchLarge.expired());
}

TEST_CASE("a move-only capture works") {
  ManualWheel w;
  w.start();
  int seen = 0;
  auto owned = std::make_unique<int>(9);
  w.schedule([p = std::move(owned), &seen] { seen = *p; }, 10ms);
  w.step();
  CHECK(seen == 9);
}

TEST_CASE("a task may take no parameter or the const Timeout of its own timeout") {
  ManualWheel w;
  w.start();
  int plain = 0;
  Timeout seen;
  w.schedule([&plain] { ++plain; }, 10ms);
  const Timeout mine = w.schedule([&seen](const Timeout& t) { seen = t; }, 10ms);
  w.step();
  CHECK(plain == 1);
  CHECK(seen == mine);
}

TEST_CASE("a mutable task keeps its state while it runs") {
  ManualWheel w;
  w.start();
  int result = 0;
  w.schedule(
      [counter = 0, &result]() mutable {
        ++counter;
        ++counter;
        result = counter;
      },
      10ms);
  w.step();
  CHECK(result == 2);
}

TEST_CASE("the timer releases a task's captures once it ran") {
  ManualWheel w;
  w.start();
  auto payload = std::make_shared<int>(3);
  std::weak_ptr<int> watch = payload;
  w.schedule([p = std::move(payload)] { (void)*p; }, 10ms);
  CHECK(watch.use_count() == 1);  // the timer holds the only reference
  w.step();
  CHECK(watch.expired());
}

TEST_CASE("a cancelled timeout's captures are released by the next advance") {
  ManualWheel w;
  w.start();
  auto payload = std::make_shared<int>(3);
  std::weak_ptr<int> watch = payload;
  std::array<char, 64> pad{};  // heap-stored task
  const Timeout t = w.schedule(
      [p = std::move(payload), pad] {
        (void)*p;
        (void)pad;
      },
      1h);
  CHECK(watch.use_count() == 1);
  CHECK(t.cancel());
  w.step();
  CHECK(watch.expired());
  CHECK(w.timer().pendingTimeouts() == 0);
}

}  // TEST_SUITE("core")
