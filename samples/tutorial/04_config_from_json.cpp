// Tutorial 04 — configuration from JSON.
//
// config::load() turns a JSON document into the plain option structs each layer owns
// (WheelOptions, HeartbeatOptions, ServerOptions, ClientOptions, RegistryOptions, ...). Missing
// keys keep their defaults; unknown keys, bad values and broken cross-field rules are errors,
// all of them reported at once with the JSON pointer, the value and what was expected. Nothing
// in core/, tasks/ or net/ knows about JSON: the structs are the interface.
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"
#include "common/wait.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

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

// config::load(path) reads a file: the document above, from a file of its own, gives an equal
// Config.
bool loadsFromFile(const config::Config& fromString) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     fmt::format("wheelbeat-tutorial-04-{}.json", ::getpid());
  std::ofstream(path) << kDocument;
  const config::Config fromFile = config::load(path.string());
  std::filesystem::remove(path);
  samples::info("{}: listen {}, equal to the string's: {}", path.filename().string(),
                samples::endpointText(fromFile.server.listen), fromFile == fromString);
  return fromFile == fromString;
}

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

int main(int argc, char** argv) {
  if (const auto status =
          samples::noOptions(argc, argv, "tutorial_04_config_from_json",
                             "Tutorial 04: configuration from JSON into the option structs of each "
                             "layer, and the errors a bad document gets."))
    return *status;
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

  // A file works the same way (config::load(path)): the same document, written to a file first
  // (samples/configs/ has larger examples to start from).
  const bool sameFromFile = loadsFromFile(cfg);

  const bool errorsShown = showErrors();
  const bool works = useIt(cfg);
  const bool ok =
      hb.interval == 200ms && hb.idleTimeout == 600ms && sameFromFile && errorsShown && works;
  samples::info("{}", ok ? "04 ok" : "04 FAILED");
  return ok ? 0 : 1;
}
