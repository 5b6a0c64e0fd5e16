// The registry tests' subscriber: a NotifyListener that keeps the last provider list of each
// service and counts the notifications (over tests/net/support.h: waitFor()).
#pragma once

#include "../net/support.h"

#include <wheelbeat/registry/backend.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace wbnet {

// The last provider list seen per service, and how many notifications arrived.
struct Watcher final : wheelbeat::registry::NotifyListener {
  void notify(const std::string& service, const std::vector<std::string>& providers) override {
    std::lock_guard lock(mutex);
    last[service] = providers;
    ++count;
  }
  std::optional<std::vector<std::string>> providers(const std::string& service) {
    std::lock_guard lock(mutex);
    const auto it = last.find(service);
    if (it == last.end()) return std::nullopt;
    return it->second;
  }
  bool sees(const std::string& service, const std::vector<std::string>& expected, ns bound = 10s) {
    return waitFor([&] { return providers(service) == expected; }, bound);
  }
  int notifications() {
    std::lock_guard lock(mutex);
    return count;
  }
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> last;
  int count = 0;
};

}  // namespace wbnet
