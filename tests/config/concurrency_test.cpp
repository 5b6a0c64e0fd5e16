// The header's thread contract: loading and serializing from several threads at once.
#include "helpers.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

TEST_SUITE("config") {

TEST_CASE("threads: concurrent loads of the same file give equal configs") {
  const auto file = wbtest::samplesDir() / "full.json";
  const wheelbeat::config::Config expected = wheelbeat::config::load(file);
  std::atomic<int> equal{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        const auto c = wheelbeat::config::load(file);
        const bool bad = wheelbeat::config::tryLoadString(R"({"x":1})").ok();
        if (c == expected && !bad && wheelbeat::config::loadString(toJson(c)) == c) ++equal;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(equal.load() == 80);
}

}  // TEST_SUITE("config")
