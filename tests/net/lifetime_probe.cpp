// wheelbeat_net_lifetime_probe CASE: one destruction order per run, for the ctest lifetime_*
// tests of net. Each wrong order must end the process with a message naming the user still
// alive (never reaching "survived"); the right one ends cleanly.
//   loop-before-client    the EventLoop destroyed under a TcpClient
//   timer-before-server   the wheel destroyed under a TcpServer
//   right-order           client and server first, then the loop and the wheel: "clean"
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/net.h>

#include <cstdio>
#include <memory>
#include <string_view>

using namespace wheelbeat;

int main(int argc, char** argv) {
  const std::string_view which = argc > 1 ? argv[1] : "";
  auto timer = std::make_unique<core::HashedWheelTimer>();
  auto loop = std::make_unique<net::EventLoop>("probe");
  net::ClientOptions co;
  co.server = {"127.0.0.1", 1};
  auto client = std::make_unique<net::TcpClient>(*loop, *timer, co);
  net::ServerOptions so;
  so.listen = {"127.0.0.1", 0};
  auto server = std::make_unique<net::TcpServer>(*loop, *timer, so, net::ChannelHandler{});
  if (which == "loop-before-client") {
    server.reset();
    loop.reset();  // must abort: the client still uses the loop
  } else if (which == "timer-before-server") {
    client.reset();
    timer.reset();  // must abort: the server still uses the wheel
  } else if (which == "right-order") {
    client.reset();
    server.reset();
    loop.reset();
    timer.reset();
    std::puts("clean");
    return 0;
  } else {
    std::fprintf(stderr,
                 "usage: wheelbeat_net_lifetime_probe "
                 "loop-before-client|timer-before-server|right-order\n");
    return 2;
  }
  std::puts("survived");
  return 0;
}
