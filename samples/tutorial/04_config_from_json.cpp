// Tutorial 04 — configuration from JSON.
//
// config::load() turns a JSON document into the plain option structs each layer owns
// (WheelOptions, HeartbeatOptions, ServerOptions, ClientOptions, RegistryOptions, ...). Missing
// keys keep their defaults; unknown keys, bad values and broken cross-field rules are errors,
// all of them reported at once with the JSON pointer, the value and what was expected. Nothing
// in core/, tasks/ or net/ knows about JSON: the structs are the interface.
#include "common/format.h"
#include "common/say.h"
#include "common/wait.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <csignal>

using namespace std::chrono_literals;
namespace config = wheelbeat::config;
namespace net = wheelbeat::net;
using samples::human;

namespace {

// What a small service would ship: fast heartbeats, everything else left at its default.
constexpr const char* kDocument = R"({
  "wheel": { "tick": "10ms" },
  "heartbeat": { "interval": "200ms", "reconnect": { "initial_delay": "100ms", "max_delay": "1s" } },
  "server": { "listen": "127.0.0.1:0" },
  "client": { "connect_timeout": "1s" }
})";

// Every mistake of a document is reported, each with its place.
bool showErrors() {
  const config::LoadResult bad = config::tryLoadString(
      R"({ "heartbeat": { "interval": "200ms", "idle_timeout": "300ms" }, "wheel": { "tik": "1ms" } })");
  for (const config::ConfigError& e : bad.errors()) samples::info("  error: {}", e.toString());
  return !bad.ok() && bad.errors().size() == 2;
}

// The options from the document, at work: a client connects to a server and heartbeats.
bool useIt(const config::Config& cfg) {
  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("tutorial-04", cfg.loop);
  net::TcpServer server(loop, timer, cfg.server, net::ChannelHandler{});
  net::ClientOptions clientOptions = cfg.client;
  clientOptions.server.port = server.listen();  // the document asked for any free port
  net::TcpClient client(loop, timer, clientOptions);
  client.start();
  const bool beat = samples::waitUntil(
      [&] { return client.channel().lastHeartbeatRtt() > std::chrono::nanoseconds(0); }, 5s);
  client.close();
  server.stop();
  const bool clean = loop.stop() == 0;
  timer.stop();
  return beat && clean;
}

}  // namespace

int main() {
  samples::lineBufferedOutput();
  // libuv writes with write(2): a write to a connection the peer reset raises SIGPIPE, which
  // kills a process by default. Every program using wheelbeat's net layer ignores it (the
  // channel then sees EPIPE and reports the close through onClosed).
  std::signal(SIGPIPE, SIG_IGN);
  const config::Config cfg = config::loadString(kDocument);  // throws ConfigErrors if bad
  const auto hb = cfg.client.heartbeat.resolved();           // 0-defaults filled in
  samples::info("tick {}, heartbeat {}, idle timeout {} (3 x heartbeat), close timeout {}",
                human(cfg.wheel.tickDuration), human(hb.interval), human(hb.idleTimeout),
                human(cfg.server.heartbeat.resolved().closeTimeout));
  samples::info("reconnect backoff {} .. {}, connect timeout {}, registry {} at {}",
                human(hb.reconnect.initialDelay), human(hb.reconnect.maxDelay),
                human(cfg.client.connectTimeout),
                wheelbeat::registry::registryKindName(cfg.registry.kind),
                samples::endpointText(cfg.registry.address));

  // A file works the same way (config::load(path)); here one of the shipped examples.
  const config::Config fromFile = config::load(WHEELBEAT_SAMPLES_DIR "/configs/server.json");
  samples::info("configs/server.json: listen {}, backlog {}",
                samples::endpointText(fromFile.server.listen), fromFile.server.backlog);

  const bool errorsShown = showErrors();
  const bool works = useIt(cfg);
  const bool ok = hb.interval == 200ms && hb.idleTimeout == 600ms && errorsShown && works;
  samples::info("{}", ok ? "04 ok" : "04 FAILED");
  return ok ? 0 : 1;
}
