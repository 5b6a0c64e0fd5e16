// What the Directory tests share (directory_test.cpp: lists followed, picks, drops, heartbeats,
// accept(); directory_protection_test.cpp: the empty-list protection and close()): an embedded
// registry with fast failback and reconnects, providers' urls, and a recorder of the Directory's
// events.
#pragma once

#include "../../net/support.h"

#include <wheelbeat/registry/directory.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace wbdir {

using namespace wbnet;
using namespace wheelbeat::registry;

inline const std::string kService = "org.example.Echo";
constexpr auto kQuiet = 2s;  // "no connect attempt": many backoff periods (<= 200 ms each)

inline RegistrySetup setupAt(std::uint16_t port) {
  RegistrySetup setup;
  setup.registry.address = Endpoint{"127.0.0.1", port};
  setup.client = clientOptions(port);
  setup.failback = fastFailback();
  setup.requestTimeout = 500ms;
  return setup;
}

inline std::unique_ptr<Registry> embedded(Env& env, std::uint16_t port) {
  auto r = makeRegistry(env.loop, env.timer, setupAt(port));
  r->start();
  return r;
}

inline std::string providerUrl(std::uint16_t port, const std::string& params = "version=1.0.0") {
  return fmt::format("dubbo://127.0.0.1:{}/{}?{}", port, kService, params);
}

// Fast provider clients (support.h: heartbeat 100 ms, reconnect 50 .. 200 ms).
inline DirectoryOptions fastDirectory() {
  DirectoryOptions o;
  o.client = clientOptions(1);
  o.minHeartbeat = 50ms;
  return o;
}

// Everything the directory reported, thread-safe.
struct Seen {
  std::mutex mutex;
  std::vector<std::vector<std::string>> lists;
  std::vector<std::string> connected;
  std::vector<std::string> closed;
  std::vector<std::size_t> held;
  std::vector<ns> listAt;  // the wheel's clock at each onList

  DirectoryEvents events(HashedWheelTimer& timer) {
    return DirectoryEvents{
        .onList =
            [this, &timer](const std::vector<std::string>& urls) {
              std::lock_guard lock(mutex);
              lists.push_back(urls);
              listAt.push_back(timer.now());
            },
        .onConnected =
            [this](const std::string& url, Channel&) {
              std::lock_guard lock(mutex);
              connected.push_back(url);
            },
        .onClosed =
            [this](const std::string& url, const CloseReason&) {
              std::lock_guard lock(mutex);
              closed.push_back(url);
            },
        .onEmptyHeld =
            [this](std::size_t kept) {
              std::lock_guard lock(mutex);
              held.push_back(kept);
            },
        .onDisconnected = {},
    };
  }
  std::size_t connects() {
    std::lock_guard lock(mutex);
    return connected.size();
  }
  std::vector<std::string> closes() {
    std::lock_guard lock(mutex);
    return closed;
  }
  std::vector<std::size_t> holds() {
    std::lock_guard lock(mutex);
    return held;
  }
  std::optional<std::vector<std::string>> lastList() {
    std::lock_guard lock(mutex);
    if (lists.empty()) return std::nullopt;
    return lists.back();
  }
};

inline std::size_t connectedCount(const Directory& d) {
  std::size_t n = 0;
  for (const auto& p : d.providers()) n += p.state == ClientState::Connected ? 1 : 0;
  return n;
}

inline std::optional<Directory::Provider> providerOf(const Directory& d, const std::string& url) {
  for (const auto& p : d.providers()) {
    if (p.url == url) return p;
  }
  return std::nullopt;
}

}  // namespace wbdir
