// Tutorial 08 — a service in a dozen lines: wheelbeat::Runtime.
//
// One configuration file makes the runtime: the loop group, the shared wheel, the metrics
// registry and its /metrics endpoint, logging. Its makers build what a service needs from the
// file's sections — a server (cfg.server), a client (cfg.client), a retry runner (cfg.retry's
// "echo" policy) — with their metrics collected and their shutdown ordered by the runtime. The
// application adds its own counter to the same registry. On SIGTERM or SIGINT everything stops in
// order (servers gracefully, clients, endpoint, loops, wheel) and the program exits 0.
//
// Run it from samples/configs/ (it reads service.json there). The runtime logs where /metrics is
// served; the program prints the outcome of one echo call (made with retries: the first attempts
// find the client still connecting), then serves until a signal.
// samples/tutorial/08_runtime_service_check.sh scrapes it with Prometheus' promtool; README.md
// shows the same lines (tests/readme keeps them equal).
#include "common/program.h"

#include <wheelbeat/runtime/runtime.h>

#include <fmt/format.h>

namespace {
constexpr const char* kName = "tutorial_08_runtime_service";
constexpr const char* kAbout =
    "Tutorial 08: a service from one JSON file (server, client, retry policy, /metrics, an "
    "application counter) in a dozen lines; run it in samples/configs/; it stops on SIGTERM.";
}  // namespace

int main(int argc, char** argv) {
  if (auto status = samples::noOptions(argc, argv, kName, kAbout)) return *status;
  // README: begin
  using namespace wheelbeat;
  Runtime rt(config::load("service.json"));  // loops, wheel, logging, /metrics
  core::Counter& echoes = rt.metrics().counter("echo_requests_total", "Requests echoed.");
  auto server = rt.server({.onFrame = [&](net::Channel& ch, const net::FrameView& f) {
    echoes.inc(), (void)ch.reply(f, std::string(f.body));
  }});
  auto client = rt.client("127.0.0.1", server->listen());
  client->start();
  auto done = [](auto& r) { fmt::print(stderr, "echo: {}\n", tasks::retryOutcomeName(r.outcome)); };
  requestWithRetries(*rt.retry("echo"), client->channel(), "hi", std::chrono::seconds(1), done);
  rt.stopOnSignals();
  rt.run();  // until SIGTERM / SIGINT: then everything stops, in order
  // README: end
}
