// Consumer of the installed package's runtime component: a Runtime from JSON, a server and a
// client made by it, one request answered, the endpoint listening, an ordered stop (proves
// wheelbeat::runtime links with what find_package(wheelbeat COMPONENTS runtime) brings).
#include <wheelbeat/runtime/runtime.h>

#include <chrono>
#include <cstdio>
#include <future>

int main() {
  using namespace std::chrono_literals;
  wheelbeat::Runtime rt = wheelbeat::Runtime::fromJson(R"({ "log_level": "warn",
    "loop": { "io_threads": 1 }, "server": { "listen": "127.0.0.1:0" },
    "retry": { "calls": { "initial_delay": "20ms", "max_attempts": 100 } },
    "metrics": { "listen": "127.0.0.1:0" } })");
  auto server =
      rt.server({.onFrame = [](wheelbeat::net::Channel& ch, const wheelbeat::net::FrameView& f) {
        if (f.isRequest() && f.isTwoWay()) (void)ch.reply(f, "pong");
      }});
  auto client = rt.client("127.0.0.1", server->listen());
  client->start();
  std::promise<std::string> answer;
  (void)wheelbeat::requestWithRetries(
      *rt.retry("calls"), client->channel(), "ping", 2s,
      [&](const wheelbeat::tasks::RetryResult& r) {
        answer.set_value(std::string(wheelbeat::tasks::retryOutcomeName(r.outcome)));
      });
  auto outcome = answer.get_future();
  if (outcome.wait_for(20s) != std::future_status::ready || outcome.get() != "ok" ||
      rt.metricsPort() == 0) {
    std::fputs("runtime consumer: no answer, or no metrics endpoint\n", stderr);
    return 1;
  }
  rt.stop();
  return client->state() == wheelbeat::net::ClientState::Closed ? 0 : 1;
}
