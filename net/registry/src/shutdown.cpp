// shutdownProvider (contract in shutdown.h).
#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/registry/shutdown.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace wheelbeat::registry {

namespace {

// Counts the registry's answers; waited for off the loop thread.
struct Pending {
  std::mutex mutex;
  std::condition_variable cv;
  std::size_t left = 0;
  std::size_t failed = 0;
};

}  // namespace

net::ShutdownReport shutdownProvider(Registry& registry, const std::vector<std::string>& urls,
                                     net::TcpServer& server, std::chrono::nanoseconds grace,
                                     std::chrono::nanoseconds unregisterWait) {
  if (grace < std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("shutdownProvider: grace = {} (expected: >= 0)", grace));
  }
  auto pending = std::make_shared<Pending>();
  pending->left = urls.size();
  for (const auto& url : urls) {
    registry.unregisterUrl(url, [pending](const tasks::CallResult& r) {
      const std::lock_guard lock(pending->mutex);
      if (!r.ok) ++pending->failed;
      if (pending->left > 0) --pending->left;
      pending->cv.notify_all();
    });
  }
  {
    std::unique_lock lock(pending->mutex);
    if (!pending->cv.wait_for(lock, unregisterWait, [&] { return pending->left == 0; }) ||
        pending->failed > 0) {
      core::log(core::LogLevel::Warn,
                "shutdown: {} of {} url(s) not confirmed unregistered within {}; "
                "consumers still get READONLY",
                pending->left + pending->failed, urls.size(), core::human(unregisterWait));
    }
  }
  return server.shutdown(grace);
}

}  // namespace wheelbeat::registry
