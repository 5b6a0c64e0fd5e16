#include "platform.h"

#include "workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace wheelbeat::bench {
namespace {

using Steady = std::chrono::steady_clock;

double clockReadNs(int reads) {
  std::int64_t sink = 0;
  const auto start = Steady::now();
  for (int i = 0; i < reads; ++i) sink += Steady::now().time_since_epoch().count();
  const std::chrono::duration<double, std::nano> took = Steady::now() - start;
  return sink == 0 ? 0.0 : took.count() / reads;  // `sink` keeps the loop alive
}

// Sleeps until absolute deadlines 1 ms apart, as a timer's worker does, and records how late
// each wake-up was.
std::vector<double> wakeupOvershootUs(int sleeps) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  std::vector<double> lateUs;
  lateUs.reserve(static_cast<std::size_t>(sleeps));
  auto next = Steady::now();
  for (int i = 0; i < sleeps; ++i) {
    next += std::chrono::milliseconds(1);
    while (cv.wait_until(lock, next) != std::cv_status::timeout) {
    }
    lateUs.push_back(std::chrono::duration<double, std::micro>(Steady::now() - next).count());
  }
  std::sort(lateUs.begin(), lateUs.end());
  return lateUs;
}

}  // namespace

std::string measurePlatform(bool quick) {
  const double clockNs = clockReadNs(quick ? 100'000 : 2'000'000);
  const auto late = wakeupOvershootUs(quick ? 200 : 2000);
  return fmt::format(
      R"({{"clock_read_ns":{:.1f},"wakeup_overshoot_us":{{"p50":{:.1f},"p99":{:.1f},"max":{:.1f}}}}})",
      clockNs, percentileSorted(late, 0.50), percentileSorted(late, 0.99), late.back());
}

}  // namespace wheelbeat::bench
