// Seeded bursty traffic for the cadence tests (reconnect_task_test.cpp, close_task_test.cpp):
// silence and talk phases of 10 ms to 12 s each, one frame per 10 ms tick with probability 1/2
// while talking. Long silences cross the 9 s timeouts; short ones end just before or after them.
#pragma once

#include <cstdint>
#include <random>

namespace wbtest {

class BurstyTraffic {
public:
  explicit BurstyTraffic(std::uint64_t seed) : rng_(seed) {}

  // Whether a frame comes on the next tick.
  bool next() {
    if (left_ == 0) {
      talking_ = !talking_;
      left_ = phaseTicks_(rng_);
    }
    --left_;
    return talking_ && coin_(rng_);
  }

private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> phaseTicks_{1, 1200};
  std::bernoulli_distribution coin_{0.5};
  bool talking_ = true;  // the first phase is a silence
  int left_ = 0;
};

}  // namespace wbtest
