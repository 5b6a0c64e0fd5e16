// The application's own metrics (app_metrics.h): made through the registry, checked against
// Prometheus' naming rules and wheelbeat's prefix, exposed after wheelbeat's metrics.
#include <wheelbeat/core/app_metrics.h>
#include <wheelbeat/core/metrics.h>

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using wheelbeat::core::Counter;
using wheelbeat::core::DurationHistogram;
using wheelbeat::core::Gauge;
using wheelbeat::core::MetricsRegistry;
using wheelbeat::core::MetricsWriter;

namespace {

std::string refusal(const std::function<void()>& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("core") {
TEST_CASE("app metrics: a counter and a gauge with labels, after wheelbeat's metrics") {
  MetricsRegistry registry;
  auto wheel =
      registry.add([](MetricsWriter& out) { out.gauge("wheelbeat_wheel_pending_timeouts", 4); });
  Counter& requests = registry.counter("myapp_requests_total", "Requests served.", {"method"});
  requests.inc({"get"});
  requests.inc({"get"});
  requests.inc({"put \"x\""}, 0.5);
  Gauge& queue = registry.gauge("myapp_queue_depth", "Jobs waiting.");
  queue.set(12);
  queue.add(-2);
  CHECK(requests.value({"get"}) == 2);
  CHECK(queue.value() == 10);
  const std::string text = registry.prometheusText();
  const std::string ours =
      "# HELP myapp_requests_total Requests served.\n"
      "# TYPE myapp_requests_total counter\n"
      "myapp_requests_total{method=\"get\"} 2\n"
      "myapp_requests_total{method=\"put \\\"x\\\"\"} 0.5\n"
      "# HELP myapp_queue_depth Jobs waiting.\n"
      "# TYPE myapp_queue_depth gauge\n"
      "myapp_queue_depth 10\n";
  REQUIRE(text.size() > ours.size());
  CHECK(text.substr(text.size() - ours.size()) == ours);  // after wheelbeat's, in the order made
  CHECK(text.find("wheelbeat_wheel_pending_timeouts 4\n") < text.find("myapp_requests_total"));
}

TEST_CASE("app metrics: a histogram over the duration buckets") {
  MetricsRegistry registry;
  DurationHistogram& latency =
      registry.histogram("myapp_latency_seconds", "Time to serve.", {"method"});
  latency.record({"get"}, 3ms);
  latency.record({"get"}, 20ms);
  CHECK(latency.snapshot({"get"}).count == 2);
  const std::string text = registry.prometheusText();
  CHECK(text.find("myapp_latency_seconds_bucket{method=\"get\",le=\"0.0025\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("myapp_latency_seconds_bucket{method=\"get\",le=\"0.005\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("myapp_latency_seconds_bucket{method=\"get\",le=\"+Inf\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("myapp_latency_seconds_sum{method=\"get\"} 0.023\n") != std::string::npos);
  CHECK(text.find("myapp_latency_seconds_count{method=\"get\"} 2\n") != std::string::npos);
}

TEST_CASE("app metrics: made again, the same metric - different, refused") {
  MetricsRegistry registry;
  Counter& a = registry.counter("myapp_jobs_total", "Jobs.", {"queue"});
  Counter& b = registry.counter("myapp_jobs_total", "Jobs.", {"queue"});
  CHECK(&a == &b);
  CHECK(refusal([&] { (void)registry.gauge("myapp_jobs_total", "Jobs.", {"queue"}); }) ==
        "metric myapp_jobs_total: made before as a counter with help \"Jobs.\" and labels (queue) "
        "(expected: the same type, help and labels)");
  CHECK(refusal([&] { (void)registry.counter("myapp_jobs_total", "Jobs.", {"kind"}); }) != "");
}

TEST_CASE("app metrics: names and labels follow Prometheus' rules - wheelbeat_ is refused") {
  MetricsRegistry registry;
  CHECK(refusal([&] { (void)registry.counter("9lives", "x"); }) ==
        "metric 9lives: not a Prometheus metric name (expected: [a-zA-Z_:][a-zA-Z0-9_:]*)");
  CHECK(refusal([&] { (void)registry.counter("my-app", "x"); }) != "");
  CHECK(refusal([&] { (void)registry.counter("wheelbeat_mine_total", "x"); }) ==
        "metric wheelbeat_mine_total: the prefix wheelbeat_ is wheelbeat's own (expected: a name "
        "of the application's)");
  CHECK(refusal([&] { (void)registry.counter("myapp_x", "x", {"__meta"}); }) ==
        "metric myapp_x: label \"__meta\" is not a Prometheus label name (expected: "
        "[a-zA-Z_][a-zA-Z0-9_]*, not starting with __)");
  CHECK(refusal([&] { (void)registry.histogram("myapp_h", "x", {"le"}); }) ==
        "metric myapp_h: label \"le\" is the histogram's bucket label (expected: another name)");
  CHECK(refusal([&] {
          (void)registry.gauge("myapp_g", "x", {"a", "a"});
        }) == "metric myapp_g: label \"a\" given twice (expected: distinct labels)");
  CHECK(registry.prometheusText().find("myapp") == std::string::npos);  // nothing was made
  Counter& c = registry.counter("ns:myapp_total", "x", {"a", "b"});
  CHECK(refusal([&] { c.inc({"only-one"}); }) ==
        "metric ns:myapp_total: 1 label value(s) for the labels (a, b) (expected: one per label)");
  CHECK(refusal([&] {
          c.inc({"x", "y"}, -1);
        }) == "metric ns:myapp_total: inc(-1) (expected: a finite amount >= 0)");
  CHECK(c.value({"x", "y"}) == 0);  // refused calls changed nothing
}
}  // TEST_SUITE("core")
