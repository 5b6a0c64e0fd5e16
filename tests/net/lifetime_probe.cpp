// wheelbeat_net_lifetime_probe CASE: one destruction order per run, for the ctest lifetime_*
// tests of net. Each wrong order must end the process with a message naming the user still
// alive (never reaching "survived"); the right one ends cleanly.
//   loop-before-client      the EventLoop destroyed under a TcpClient
//   timer-before-server     the wheel destroyed under a TcpServer
//   loop-before-endpoint    the EventLoop destroyed under a MetricsEndpoint
//   loop-before-loopwheel   the EventLoop destroyed under the LoopWheel driving a wheel
//   timer-before-loopwheel  that wheel destroyed under its LoopWheel
//   right-order             every user first, then the loop and the wheels: "clean"
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/loop_wheel.h>
#include <wheelbeat/net/metrics_endpoint.h>
#include <wheelbeat/net/net.h>

#include <cstdio>
#include <memory>
#include <string_view>

using namespace wheelbeat;

namespace {

struct World {
  std::unique_ptr<core::HashedWheelTimer> timer = std::make_unique<core::HashedWheelTimer>();
  std::unique_ptr<core::HashedWheelTimer> manualTimer;  // driven by the LoopWheel
  std::unique_ptr<net::EventLoop> loop = std::make_unique<net::EventLoop>("probe");
  std::unique_ptr<net::TcpClient> client;
  std::unique_ptr<net::TcpServer> server;
  std::unique_ptr<net::MetricsEndpoint> endpoint;
  std::unique_ptr<net::LoopWheel> loopWheel;

  World() {
    net::ClientOptions co;
    co.server = {"127.0.0.1", 1};
    client = std::make_unique<net::TcpClient>(*loop, *timer, co);
    net::ServerOptions so;
    so.listen = {"127.0.0.1", 0};
    server = std::make_unique<net::TcpServer>(*loop, *timer, so, net::ChannelHandler{});
    net::MetricsEndpointOptions mo;
    mo.listen = "127.0.0.1:0";
    endpoint = net::MetricsEndpoint::start(*loop, mo, [] { return std::string(); });
    core::TimerHooks hooks;
    hooks.drive = core::Drive::Manual;
    manualTimer = std::make_unique<core::HashedWheelTimer>(core::WheelOptions{}, hooks);
    loopWheel = std::make_unique<net::LoopWheel>(*loop, *manualTimer);
  }
  // Every user but `keep` goes (the order of a correct program).
  void dropUsersBut(const void* keep) {
    if (client.get() != keep) client.reset();
    if (server.get() != keep) server.reset();
    if (endpoint.get() != keep) endpoint.reset();
    if (loopWheel.get() != keep) loopWheel.reset();
  }
};

int usage() {
  std::fprintf(stderr,
               "usage: wheelbeat_net_lifetime_probe loop-before-client|timer-before-server|"
               "loop-before-endpoint|loop-before-loopwheel|timer-before-loopwheel|right-order\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view which = argc > 1 ? argv[1] : "";
  World w;
  if (which == "loop-before-client") {
    w.dropUsersBut(w.client.get());
    w.loop.reset();  // must abort: the client still uses the loop
  } else if (which == "timer-before-server") {
    w.dropUsersBut(w.server.get());
    w.timer.reset();  // must abort: the server still uses the wheel
  } else if (which == "loop-before-endpoint") {
    w.dropUsersBut(w.endpoint.get());
    w.loop.reset();  // must abort: the endpoint still uses the loop
  } else if (which == "loop-before-loopwheel") {
    w.dropUsersBut(w.loopWheel.get());
    w.loop.reset();  // must abort: the LoopWheel still uses the loop
  } else if (which == "timer-before-loopwheel") {
    w.dropUsersBut(w.loopWheel.get());
    w.manualTimer.reset();  // must abort: the LoopWheel still drives that wheel
  } else if (which == "right-order") {
    w.dropUsersBut(nullptr);
    w.loop.reset();
    w.manualTimer.reset();
    w.timer.reset();
    std::puts("clean");
    return 0;
  } else {
    return usage();
  }
  std::puts("survived");
  return 0;
}
