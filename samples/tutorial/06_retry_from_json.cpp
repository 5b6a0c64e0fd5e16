// Tutorial 06 — a retry policy from JSON, put to work.
//
// A policy in the configuration's "retry" section is data; tasks::RetryRunner makes it act: it
// calls an asynchronous operation, and on each failure asks the policy (backoff with jitter,
// max attempts, deadline, the shared retry budget, retry_on / ignore) whether and when to try
// again, on the shared wheel. The operation reports failures by the shared error names
// (tasks/error_names.h); net::errorName() turns a request's outcome into one. Here a local
// service fails its first calls — "busy" (Dubbo status 100 → "overloaded"), then silent (no
// answer within the request timeout → "timeout") — and answers the third; a last call it refuses
// as a bad request, which the policy's ignore list stops at once.
#include "common/format.h"
#include "common/program.h"
#include "common/say.h"
#include "common/wait.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/tasks/retry_runner.h>

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <future>

using namespace std::chrono_literals;
namespace config = wheelbeat::config;
namespace net = wheelbeat::net;
namespace tasks = wheelbeat::tasks;

namespace {

constexpr const char* kDocument = R"({
  "wheel": { "tick": "10ms" },
  "retry": {
    "flaky-service": {
      "backoff": "exponential", "initial_delay": "0.1s", "multiplier": 2, "max_delay": "1s",
      "jitter": "equal", "max_attempts": 4, "deadline": "5s",
      "retry_on": ["timeout", "overloaded", "disconnected"], "ignore": ["bad-request"]
    }
  },
  "retry_budget": { "ratio": 0.2, "min_retries_per_second": 10 },
  "server": { "listen": "127.0.0.1:0" }
})";

// The flaky service: call 1 busy, call 2 unanswered, call 3 answered, call 4 a bad request.
net::ChannelHandler flakyService(std::atomic<int>& calls) {
  net::ChannelHandler handler;
  handler.onFrame = [&calls](net::Channel& channel, const net::FrameView& frame) {
    if (!frame.isRequest() || !frame.isTwoWay()) return;
    switch (++calls) {
      case 1: (void)channel.reply(frame, "busy", 100); break;  // thread pool exhausted
      case 2: break;                                           // silence: the caller times out
      case 3: (void)channel.reply(frame, "pong"); break;
      default: (void)channel.reply(frame, "no such method", 40);  // bad request
    }
  };
  return handler;
}

// One call through the runner; prints every attempt and returns the outcome.
tasks::RetryResult callWithRetries(tasks::RetryRunner& runner, net::Channel& channel) {
  const auto start = std::chrono::steady_clock::now();
  std::promise<tasks::RetryResult> outcome;
  runner.run(
      [&channel, start](std::int64_t attempt, tasks::AttemptDone done) {
        const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        samples::info("  attempt {} at +{}", attempt, samples::human(at));
        const auto sent = channel.request("ping", 300ms, [done](const net::CallResult& r) {
          const std::string_view error = net::errorName(r);
          samples::info("    -> {}", error.empty() ? "ok" : error);
          error.empty() ? done.succeed() : done.fail(error);
        });
        if (sent.sent != net::SendResult::Queued) done.fail(net::errorName(sent.sent));
      },
      [&outcome](const tasks::RetryResult& r) { outcome.set_value(r); });
  auto future = outcome.get_future();
  if (future.wait_for(10s) != std::future_status::ready) return {};
  const tasks::RetryResult r = future.get();
  samples::info("  outcome: {} ({}), {} attempts, last error \"{}\"",
                tasks::retryOutcomeName(r.outcome), tasks::giveUpName(r.reason), r.attempts,
                r.lastError);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (const auto status =
          samples::noOptions(argc, argv, "tutorial_06_retry_from_json",
                             "Tutorial 06: a retry policy from JSON put to work by RetryRunner "
                             "against a service that fails its first calls."))
    return *status;
  samples::lineBufferedOutput();
  std::signal(SIGPIPE, SIG_IGN);  // as every program using the net layer (see tutorial 04)
  const config::Config cfg = config::loadString(kDocument);
  const tasks::RetryOptions& policy = cfg.retry("flaky-service");  // throws if it is missing

  wheelbeat::core::HashedWheelTimer timer(cfg.wheel);
  net::EventLoop loop("tutorial-06", cfg.loop);
  std::atomic<int> calls{0};
  net::TcpServer server(loop, timer, cfg.server, flakyService(calls));
  net::ClientOptions clientOptions = cfg.client;
  clientOptions.server = {"127.0.0.1", server.listen()};
  net::TcpClient client(loop, timer, clientOptions);
  client.start();
  const bool connected =
      samples::waitUntil([&] { return client.state() == net::ClientState::Connected; }, 5s);

  // One runner per called service; its runs share the budget (retries <= 20 % of calls + 10/s).
  tasks::RetryRunner runner(timer, policy,
                            {.budget = std::make_shared<tasks::RetryBudget>(cfg.retryBudget)});
  samples::info("call 1: the service is busy, then silent, then answers");
  const tasks::RetryResult first = callWithRetries(runner, client.channel());
  samples::info("call 2: the service refuses the request as bad");
  const tasks::RetryResult second = callWithRetries(runner, client.channel());

  client.close();
  server.stop();
  const bool clean = loop.stop() == 0;
  timer.stop();
  const bool ok =
      connected && clean && first.outcome == tasks::RetryOutcome::Ok && first.attempts == 3 &&
      first.lastError == "timeout" && second.outcome == tasks::RetryOutcome::GaveUp &&
      second.reason == tasks::GiveUp::NotRetryable && second.attempts == 1 && calls.load() == 4;
  samples::info("{}", ok ? "06 ok" : "06 FAILED");
  return ok ? 0 : 1;
}
