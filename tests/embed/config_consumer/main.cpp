// A heartbeat-only client configured from JSON, against wheelbeat built without the registry
// (WHEELBEAT_WITH_REGISTRY=OFF): the configuration has no discovery sections (a document with one
// is an error naming it), and a client loaded from it keeps a connection alive by heartbeats to a
// server in the same process. Exits 0 when every check holds, 1 (saying which failed) otherwise.
#include <wheelbeat/config/config.h>
#include <wheelbeat/net/net.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

static_assert(WHEELBEAT_CONFIG_DISCOVERY == 0,
              "wheelbeat/config/features.h of a build without the registry says 0");

namespace {

using namespace std::chrono_literals;
namespace config = wheelbeat::config;
namespace net = wheelbeat::net;

bool check(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "config without registry: FAILED: %s\n", what);
  return ok;
}

// The discovery sections are rejected by name, in document order; the rest still loads.
bool discoveryRejected() {
  const config::LoadResult r = config::tryLoadString(
      R"({"registry": {"kind": "redis"}, "heartbeat": {"interval": "1s"}, "service": {},)"
      R"( "cluster": {"mode": "failfast"}})");
  const std::string off =
      " section: this wheelbeat was built without the registry "
      "(WHEELBEAT_WITH_REGISTRY=OFF)";
  const std::vector<config::ConfigError> expected = {
      {"/registry", R"({"kind":"redis"})", "no \"registry\"" + off},
      {"/service", "{}", "no \"service\"" + off},
      {"/cluster", R"({"mode":"failfast"})", "no \"cluster\"" + off}};
  for (const auto& e : r.errors()) std::printf("rejected: %s\n", e.toString().c_str());
  const std::vector<std::string> paths = config::knownKeyPaths();
  const bool noPaths = std::none_of(paths.begin(), paths.end(), [](const std::string& p) {
    return p.starts_with("/registry") || p.starts_with("/service") || p.starts_with("/cluster");
  });
  return check(!r.ok() && r.errors() == expected, "the discovery sections' errors") &&
         check(noPaths, "knownKeyPaths() without the discovery sections");
}

// Counts the client's heartbeats (called on the wheel's thread).
class HeartbeatCounter : public wheelbeat::tasks::TaskListener {
public:
  void onHeartbeatSent(wheelbeat::tasks::Channel& /*channel*/) override {
    const std::lock_guard lock(mutex_);
    ++sent_;
    changed_.notify_all();
  }
  // True once `n` heartbeats were sent, false if not within `bound`.
  bool waitFor(int n, std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return sent_ >= n; });
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int sent_ = 0;
};

// A server and a client from the document: the client beats while idle, the server answers.
bool heartbeatsFlow() {
  const config::Config cfg = config::loadString(R"({
    "log_level": "warn",
    "wheel": { "tick": "10ms" },
    "heartbeat": { "interval": "50ms" },
    "server": { "listen": "127.0.0.1:0" },
    "client": { "server": "127.0.0.1:1", "connect_timeout": "2s" }
  })");
  config::applyLogging(cfg);
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop(cfg.loop);
  net::ServerOptions so = cfg.server;
  so.metrics = std::make_shared<net::ChannelMetrics>();
  net::TcpServer server(loop, timer, so, net::ChannelHandler{});
  net::ClientOptions co = cfg.client;
  co.server.port = server.listen();
  co.metrics = std::make_shared<net::ChannelMetrics>();
  auto counter = std::make_shared<HeartbeatCounter>();
  co.taskListener = counter;
  net::TcpClient client(loop, timer, co, net::ChannelHandler{});
  client.start();
  // Four heartbeats, each an interval (50ms) of silence after the previous one's answer could
  // have come back: the first three were answered unless loopback lost a 16-byte frame.
  const bool sent = counter->waitFor(4, 20s);
  client.close();
  server.stop();
  const bool closed = loop.stop() == 0;
  timer.stop();
  const auto answered = so.metrics->heartbeatsAnswered.load();
  const auto roundTrips = co.metrics->heartbeatRtt.snapshot().count;
  std::printf("heartbeats: 4 sent: %d, answered by the server: %llu, round trips: %llu\n", sent,
              static_cast<unsigned long long>(answered),
              static_cast<unsigned long long>(roundTrips));
  return check(sent, "4 heartbeats sent within 20 s") &&
         check(answered >= 3 && roundTrips >= 3, "3 heartbeats answered and timed") &&
         check(closed, "every handle closed");
}

}  // namespace

int main() {
  bool ok = discoveryRejected();
  ok = heartbeatsFlow() && ok;
  std::puts(ok ? "config without registry: passed" : "config without registry: FAILED");
  return ok ? 0 : 1;
}
