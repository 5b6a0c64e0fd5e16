// The pkg-config consumer's program, built by a plain g++ command line from
// `pkg-config --cflags --libs wheelbeat-net`: a server on a loopback port of the kernel's choice
// answers one request of a client; every handle closes. Proves that net, tasks and core and
// their private dependency (libuv) link, in a static or a shared install.
#include <wheelbeat/net/net.h>
#include <wheelbeat/version.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

int main() {
  using namespace wheelbeat;
  using namespace std::chrono_literals;
  core::HashedWheelTimer timer;
  net::EventLoop loop;
  net::ServerOptions so;
  so.listen = {"127.0.0.1", 0};
  net::TcpServer server(
      loop, timer, so,
      net::ChannelHandler{.onFrame = [](net::Channel& ch, const net::FrameView& f) {
        if (f.isRequest() && f.isTwoWay()) (void)ch.reply(f, "pong");
      }});
  net::ClientOptions co;
  co.server = {"127.0.0.1", server.listen()};
  std::promise<std::string> answer;
  net::TcpClient client(loop, timer, co,
                        net::ChannelHandler{.onConnected = [&answer](net::Channel& ch) {
                          ch.request("ping", 5s, [&answer](const net::CallResult& r) {
                            answer.set_value(r.status == net::CallStatus::Ok ? r.body : r.error);
                          });
                        }});
  client.start();
  auto future = answer.get_future();
  const bool answered = future.wait_for(10s) == std::future_status::ready;
  const std::string body = answered ? future.get() : "no answer within 10 s";
  client.close();
  server.stop();
  const bool closed = loop.stop() == 0;
  timer.stop();
  if (body != "pong" || !closed) {
    std::fprintf(stderr, "net consumer: answer '%s', every handle closed: %d\n", body.c_str(),
                 closed);
    return 1;
  }
  std::printf("net consumer: wheelbeat %s answered pong\n", std::string(version()).c_str());
  return 0;
}
