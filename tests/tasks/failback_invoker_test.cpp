// FailbackInvoker on a manual clock: failed invocations retried in the background (Dubbo: 3
// retries 5 s apart), each retry avoiding the endpoint that failed last, at most
// maxPendingRetries held, stop() handing back what never ran; and pickEndpoint().
#include "failback_fake.h"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace wbtest;
using wheelbeat::tasks::kFailbackRejected;
using wheelbeat::tasks::pickEndpoint;

namespace {

// Endpoints whose health the test sets; records every call as "endpoint".
struct Cluster {
  std::vector<std::string> endpoints{"A", "B", "C"};
  std::set<std::string> broken;
  std::vector<std::string> called;
  std::uint64_t picks = 0;
  bool defer = false;
  std::vector<Completion> waiting;

  FailbackInvoker::Selector selector() {
    return [this](const std::string& avoid) { return pickEndpoint(endpoints, avoid, picks++); };
  }
  FailbackInvoker::Call call() {
    return [this](const std::string& endpoint, Completion done) {
      called.push_back(endpoint);
      if (defer) {
        waiting.push_back(std::move(done));
      } else if (broken.contains(endpoint)) {
        done(CallResult::failure("unavailable", endpoint + " is down"));
      } else {
        done(CallResult::success());
      }
    };
  }
};

struct InvokerRig {
  Rig rig;
  Cluster cluster;
  std::shared_ptr<RecordingFailbackListener> listener =
      std::make_shared<RecordingFailbackListener>();
  std::shared_ptr<FailbackMetrics> metrics = std::make_shared<FailbackMetrics>();
  std::unique_ptr<FailbackInvoker> invoker;

  explicit InvokerRig(FailbackOptions o = {}) {
    invoker = std::make_unique<FailbackInvoker>(rig.timer(), o, listener, metrics, nullptr, 7);
  }
  void invoke(const std::string& name, Outcomes* out = nullptr) {
    invoker->invoke(name, cluster.selector(), cluster.call(), out ? out->sink() : Completion{});
  }
};

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("failback invoker: a successful call is not held") {
  InvokerRig r;
  Outcomes out;
  r.invoke("hello", &out);
  CHECK(r.cluster.called == std::vector<std::string>{"A"});
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].ok);
  CHECK(r.invoker->pendingRetries() == 0);
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("failback invoker: a failed call is retried on another endpoint") {
  InvokerRig r;
  r.cluster.broken = {"A"};
  Outcomes out;
  r.invoke("hello", &out);
  CHECK(out.seen.empty());  // held, not finished
  CHECK(r.invoker->pendingRetries() == 1);
  r.rig.runUntil(5s);
  CHECK(r.cluster.called == std::vector<std::string>{"A", "C"});  // pick #1 skipping A
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].ok);
  CHECK(r.invoker->pendingRetries() == 0);
  CHECK(r.listener->events() ==
        std::vector<std::string>{"scheduled invoke hello #1 5000", "recovered invoke hello 1"});
}

TEST_CASE("failback invoker: every retry avoids the endpoint that failed last") {
  InvokerRig r;
  r.cluster.broken = {"A", "B", "C"};
  Outcomes out;
  r.invoke("hello", &out);
  r.rig.runUntil(15s);
  REQUIRE(r.cluster.called.size() == 4);  // Dubbo's 3 retries
  for (std::size_t i = 1; i < r.cluster.called.size(); ++i) {
    CHECK(r.cluster.called[i] != r.cluster.called[i - 1]);
  }
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].error == "unavailable");
  CHECK(r.listener->events().back() == "gave-up invoke hello max-attempts unavailable");
  CHECK(r.metrics->snapshot() == FailbackMetricsSnapshot{4, 3, 0, 0, 1, 0, 0});
  CHECK(r.invoker->pendingRetries() == 0);
  CHECK(r.rig.pending() == 0);
}

TEST_CASE("failback invoker: beyond maxPendingRetries a failure is rejected") {
  FailbackOptions o;
  o.maxPendingRetries = 2;
  InvokerRig r(o);
  r.cluster.broken = {"A", "B", "C"};
  Outcomes third;
  r.invoke("c1");
  r.invoke("c2");
  r.invoke("c3", &third);
  CHECK(r.invoker->pendingRetries() == 2);
  REQUIRE(third.seen.size() == 1);
  CHECK(third.seen[0].error == kFailbackRejected);
  CHECK(third.seen[0].message ==
        "failback of 'c3' rejected: 2 failed invocations already held (expected: fewer than "
        "maxPendingRetries = 2)");
  CHECK(r.listener->events().back() == "rejected c3 2");
  CHECK(r.metrics->snapshot().rejected == 1);
}

TEST_CASE("failback invoker: calls in flight do not count against the limit") {
  FailbackOptions o;
  o.maxPendingRetries = 1;
  InvokerRig r(o);
  r.cluster.defer = true;
  for (int i = 0; i < 5; ++i) r.invoke(fmt::format("c{}", i));
  CHECK(r.cluster.waiting.size() == 5);
  CHECK(r.invoker->pendingRetries() == 0);
  r.cluster.waiting[0](CallResult::failure("timeout", "no answer"));
  CHECK(r.invoker->pendingRetries() == 1);
  r.cluster.waiting[1](CallResult::failure("timeout", "no answer"));
  CHECK(r.metrics->snapshot().rejected == 1);
  r.cluster.waiting[2](CallResult::success());
  CHECK(r.metrics->snapshot().rejected == 1);
}

TEST_CASE("failback invoker: no endpoint is a retryable failure") {
  InvokerRig r;
  r.cluster.endpoints.clear();
  r.invoke("hello");
  CHECK(r.cluster.called.empty());
  CHECK(r.invoker->pendingRetries() == 1);
  r.cluster.endpoints = {"B"};
  r.rig.runUntil(5s);
  CHECK(r.cluster.called == std::vector<std::string>{"B"});
  CHECK(r.invoker->pendingRetries() == 0);
}

TEST_CASE("failback invoker: a call that throws is a failure") {
  InvokerRig r;
  int calls = 0;
  Outcomes out;
  r.invoker->invoke(
      "boom", r.cluster.selector(),
      [&calls](const std::string&, Completion done) {
        if (++calls == 1) throw std::runtime_error("serializer failed");
        done(CallResult::success());
      },
      out.sink());
  CHECK(r.invoker->pendingRetries() == 1);
  r.rig.runUntil(5s);
  CHECK(calls == 2);
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].ok);
}

TEST_CASE("failback invoker: stop hands back the waiting invocations") {
  InvokerRig r;
  r.cluster.broken = {"A", "B"};
  Outcomes out;
  r.invoke("x", &out);
  r.invoke("y", &out);
  // One pick counter for both: x fails on A (#0), y on B (#1); at 5 s x retries on B (#2 over
  // {B, C}) and fails again, y retries on C (#3 over {A, C}) and succeeds.
  r.rig.runUntil(5s);
  const auto stopped = r.invoker->stop();
  CHECK(out.seen.size() == 1);  // y recovered on C
  REQUIRE(stopped.size() == 1);
  CHECK(stopped[0].name == "x");
  CHECK(stopped[0].attempts == 2);
  CHECK(stopped[0].lastEndpoint == "B");
  CHECK(r.rig.pending() == 0);
  CHECK_THROWS_AS(r.invoke("z"), std::logic_error);
  r.rig.runUntil(30s);
  CHECK(out.seen.size() == 1);  // a handed-back invocation's completion is not called
}

TEST_CASE("failback invoker: empty callables are refused") {
  InvokerRig r;
  CHECK_THROWS_AS(r.invoker->invoke("x", {}, r.cluster.call()), std::invalid_argument);
  CHECK_THROWS_AS(r.invoker->invoke("x", r.cluster.selector(), {}), std::invalid_argument);
  CHECK(r.invoker->pendingRetries() == 0);
}

TEST_CASE("failback invoker: adopt holds a call that failed elsewhere, retried later") {
  InvokerRig r;
  Outcomes out;
  r.invoker->adopt("adopted", "A", CallResult::failure("timeout", "no answer from A"),
                   r.cluster.selector(), r.cluster.call(), out.sink());
  CHECK(r.cluster.called.empty());  // no attempt at once: the first one already failed
  CHECK(out.seen.empty());
  CHECK(r.invoker->pendingRetries() == 1);
  r.rig.runUntil(5s);
  CHECK(r.cluster.called == std::vector<std::string>{"B"});  // avoids A, the one that failed
  REQUIRE(out.seen.size() == 1);
  CHECK(out.seen[0].ok);
  CHECK(r.listener->events() ==
        std::vector<std::string>{"scheduled invoke adopted #1 5000", "recovered invoke adopted 1"});
  CHECK(r.metrics->snapshot() == FailbackMetricsSnapshot{1, 1, 1, 0, 0, 0, 0});
}

TEST_CASE("failback invoker: adopt counts against maxPendingRetries and refuses an ok") {
  FailbackOptions o;
  o.maxPendingRetries = 1;
  InvokerRig r(o);
  Outcomes first;
  Outcomes second;
  const auto failure = CallResult::failure("timeout", "no answer");
  r.invoker->adopt("a1", "A", failure, r.cluster.selector(), r.cluster.call(), first.sink());
  r.invoker->adopt("a2", "A", failure, r.cluster.selector(), r.cluster.call(), second.sink());
  CHECK(first.seen.empty());
  REQUIRE(second.seen.size() == 1);
  CHECK(second.seen[0].error == kFailbackRejected);
  CHECK(r.invoker->pendingRetries() == 1);
  CHECK(errorOf([&] {
          r.invoker->adopt("a3", "A", CallResult::success(), r.cluster.selector(),
                           r.cluster.call());
        }) == "FailbackInvoker::adopt: failure of 'a3' is ok (expected: a failed attempt)");
  CHECK(r.invoker->pendingRetries() == 1);  // nothing changed
  (void)r.invoker->stop();
  CHECK_THROWS_AS(r.invoker->adopt("a4", "A", failure, r.cluster.selector(), r.cluster.call()),
                  std::logic_error);
}

TEST_CASE("failback: pickEndpoint round-robins and skips the avoided endpoint") {
  const std::vector<std::string> three{"A", "B", "C"};
  CHECK(pickEndpoint(three, "", 0) == "A");
  CHECK(pickEndpoint(three, "", 4) == "B");
  CHECK(pickEndpoint(three, "A", 0) == "B");
  CHECK(pickEndpoint(three, "A", 1) == "C");
  CHECK(pickEndpoint(three, "A", 2) == "B");
  CHECK(pickEndpoint({"A"}, "A", 3) == "A");  // the only one: used anyway
  CHECK(pickEndpoint({}, "A", 0) == std::nullopt);
}

TEST_CASE("failback: FailbackOptions defaults and validation messages") {
  const FailbackOptions d;
  CHECK(d.check);
  CHECK(d.maxPendingRetries == 100);
  CHECK(d.registryRetry.initialDelay == 5s);
  CHECK(d.registryRetry.maxAttempts == -1);
  CHECK(d.invocationRetry.maxAttempts == 3);
  FailbackOptions o;
  o.maxPendingRetries = 0;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o); }) ==
        "FailbackOptions.maxPendingRetries = 0 (expected: >= 1)");
  o = {};
  o.registryRetry.maxDelay = 1s;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o); }) ==
        "FailbackOptions.registryRetry.maxDelay = 1s (expected: >= initialDelay = 5s)");
  o = {};
  o.invocationRetry.multiplier = 0.5;
  CHECK(errorOf([&] { wheelbeat::tasks::validate(o); }) ==
        "FailbackOptions.invocationRetry.multiplier = 0.5 (expected: >= 1)");
}

}  // TEST_SUITE("tasks")
