#include "signals.h"

#include <chrono>
#include <utility>

namespace wheelbeat::runtime::detail {

SignalWatcher::SignalWatcher(std::function<void()> onSignal)
    : onSignal_(std::move(onSignal)), thread_([this] {
        while (!quit_.load()) {
          if (signal_.wait(std::chrono::milliseconds(-1))) {
            onSignal_();
            return;
          }
        }
      }) {}

SignalWatcher::~SignalWatcher() {
  quit_ = true;
  signal_.wake();
  thread_.join();
}

}  // namespace wheelbeat::runtime::detail
