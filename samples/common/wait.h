// waitUntil: polls a condition every 10 ms until it holds or `limit` passes (the samples check
// what they show against real time, with bounds generous enough for sanitizer builds).
#pragma once

#include <chrono>
#include <thread>

namespace samples {

template <typename Pred>
bool waitUntil(Pred pred, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace samples
