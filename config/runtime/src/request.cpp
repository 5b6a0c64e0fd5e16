// requestWithRetries(): a Channel::request per attempt of a RetryRunner's run.
#include <wheelbeat/runtime/runtime.h>

#include <utility>

namespace wheelbeat {

tasks::RetryHandle requestWithRetries(tasks::RetryRunner& runner, net::Channel& channel,
                                      std::string body, std::chrono::nanoseconds attemptTimeout,
                                      tasks::RetryCallback done) {
  auto attempt = [&channel, body = std::move(body), attemptTimeout](std::int64_t,
                                                                    tasks::AttemptDone one) {
    const net::RequestResult sent =
        channel.request(body, attemptTimeout, [one](const net::CallResult& result) {
          const std::string_view error = net::errorName(result);
          error.empty() ? one.succeed() : one.fail(error);
        });
    if (sent.sent != net::SendResult::Queued) one.fail(net::errorName(sent.sent));
  };
  return runner.run(std::move(attempt), std::move(done));
}

}  // namespace wheelbeat
