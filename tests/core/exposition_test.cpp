// The metric model (core/metrics.h): the exact Prometheus 0.0.4 text for known values (HELP /
// TYPE, _total, escaping, cumulative buckets with +Inf, _sum, _count), the writer's checks, the
// registry's collectors, the catalogue's rules, docs/metrics.md's table, and the wheel's own
// metrics on a manual clock.
#include "support.h"

#include <wheelbeat/core/metrics.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

using namespace wbtest;
using wheelbeat::core::HistogramSnapshot;
using wheelbeat::core::kDurationBucketsSeconds;
using wheelbeat::core::kHistogramBuckets;
using wheelbeat::core::LabelDef;
using wheelbeat::core::MetricDef;
using wheelbeat::core::MetricsRegistry;
using wheelbeat::core::MetricsWriter;
using wheelbeat::core::MetricType;
using Hist = wheelbeat::core::Histogram;

namespace {

constexpr std::string_view kColours[] = {"red", "green"};
constexpr LabelDef kColour[] = {{"colour", kColours}};
constexpr LabelDef kFree[] = {{"path", {}}};
constexpr MetricDef kTestCatalogue[] = {
    {"wheelbeat_test_requests_total", MetricType::Counter, "Requests\\served.\nSecond line.",
     kColour},
    {"wheelbeat_test_queue", MetricType::Gauge, "Queued items.", kFree},
    {"wheelbeat_test_rtt_seconds", MetricType::Histogram, "Round trips."},
    {"wheelbeat_test_idle_total", MetricType::Counter, "Never written."},
};

int countLines(const std::string& text, const std::string& line) {
  int n = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) n += l == line ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("exposition text is exact for known values") {
  MetricsWriter out(kTestCatalogue);
  out.counter("wheelbeat_test_requests_total", 3, {"red"});
  out.counter("wheelbeat_test_requests_total", 4, {"red"});  // adds to the same series
  out.counter("wheelbeat_test_requests_total", 1, {"green"});
  out.gauge("wheelbeat_test_queue", 2.5, {"a\\b\"c\nd"});
  Hist h;
  h.record(50us);   // bucket le=0.0001
  h.record(100us);  // exactly on a bound: that bucket (le is inclusive)
  h.record(3ms);    // le=0.005
  h.record(20s);    // +Inf only
  out.histogram("wheelbeat_test_rtt_seconds", h.snapshot());

  std::string expected =
      "# HELP wheelbeat_test_requests_total Requests\\\\served.\\nSecond line.\n"
      "# TYPE wheelbeat_test_requests_total counter\n"
      "wheelbeat_test_requests_total{colour=\"green\"} 1\n"
      "wheelbeat_test_requests_total{colour=\"red\"} 7\n"
      "# HELP wheelbeat_test_queue Queued items.\n"
      "# TYPE wheelbeat_test_queue gauge\n"
      "wheelbeat_test_queue{path=\"a\\\\b\\\"c\\nd\"} 2.5\n"
      "# HELP wheelbeat_test_rtt_seconds Round trips.\n"
      "# TYPE wheelbeat_test_rtt_seconds histogram\n";
  const std::uint64_t cumulative[] = {2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  for (std::size_t i = 0; i < kDurationBucketsSeconds.size(); ++i) {
    expected += fmt::format("wheelbeat_test_rtt_seconds_bucket{{le=\"{}\"}} {}\n",
                            kDurationBucketsSeconds[i], cumulative[i]);
  }
  expected +=
      "wheelbeat_test_rtt_seconds_bucket{le=\"+Inf\"} 4\n"
      "wheelbeat_test_rtt_seconds_sum 20.00315\n"
      "wheelbeat_test_rtt_seconds_count 4\n"
      "# HELP wheelbeat_test_idle_total Never written.\n"
      "# TYPE wheelbeat_test_idle_total counter\n";
  CHECK(out.prometheusText() == expected);
  CHECK(out.value("wheelbeat_test_requests_total", {"red"}) == 7);
  CHECK(out.histogramValue("wheelbeat_test_rtt_seconds").count == 4);
}

TEST_CASE("bucket bounds are the documented ones") {
  const std::string first = fmt::format("{}", kDurationBucketsSeconds.front());
  const std::string last = fmt::format("{}", kDurationBucketsSeconds.back());
  CHECK(first == "0.0001");
  CHECK(last == "10");
  CHECK(Hist::bucketOf(-5ns) == 0);
  CHECK(Hist::bucketOf(0ns) == 0);
  CHECK(Hist::bucketOf(100us) == 0);
  CHECK(Hist::bucketOf(100us + 1ns) == 1);
  CHECK(Hist::bucketOf(10s) == kDurationBucketsSeconds.size() - 1);
  CHECK(Hist::bucketOf(10s + 1ns) == kHistogramBuckets - 1);
}

// bucketOf() looks up a table by bit width: checked against a plain search at every bound's
// edges, every power of two's, and the extremes.
TEST_CASE("bucketOf agrees with a search of the bounds at every edge") {
  std::vector<std::int64_t> bounds;
  for (const double b : kDurationBucketsSeconds) bounds.push_back(std::llround(b * 1e9));
  auto expected = [&](std::int64_t v) {
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) -
                                    bounds.begin());
  };
  std::vector<std::int64_t> values{0, 1, std::numeric_limits<std::int64_t>::max()};
  for (const std::int64_t b : bounds) values.insert(values.end(), {b - 1, b, b + 1});
  for (int k = 1; k < 63; ++k) {
    const std::int64_t p = std::int64_t{1} << k;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  std::size_t checked = 0;
  for (const std::int64_t v : values) {
    CAPTURE(v);
    CHECK(Hist::bucketOf(std::chrono::nanoseconds(v)) == expected(v));
    ++checked;
  }
  CHECK(checked == 3 + 3 * bounds.size() + 3 * 62);
}

TEST_CASE("a histogram counts a negative value as zero and estimates quantiles in buckets") {
  Hist h;
  h.record(-1ms);
  HistogramSnapshot s = h.snapshot();
  CHECK(s.count == 1);
  CHECK(s.counts[0] == 1);
  CHECK(s.sum == 0ns);
  CHECK(HistogramSnapshot{}.quantile(0.5) == 0ns);
  Hist g;
  for (int i = 0; i < 100; ++i) g.recordSingleWriter(2ms);  // bucket (1ms, 2.5ms]
  s = g.snapshot();
  CHECK(s.sum == 200ms);
  // Linear inside (1ms, 2.5ms]: the median sits half way, p99 at 99 %.
  CHECK(s.quantile(0.5) == 1750us);
  CHECK(s.quantile(0.99) == 2485us);
  g.record(1min);
  CHECK(g.snapshot().quantile(1.0) == 10s);  // +Inf: its lower bound
}

TEST_CASE("the writer refuses what the catalogue does not allow and records nothing") {
  MetricsWriter out(kTestCatalogue);
  CHECK_THROWS_WITH_AS(out.counter("wheelbeat_nope_total", 1),
                       "metric wheelbeat_nope_total: not in the catalogue", std::invalid_argument);
  CHECK_THROWS_WITH_AS(out.gauge("wheelbeat_test_requests_total", 1, {"red"}),
                       "metric wheelbeat_test_requests_total: written as a gauge (expected: "
                       "counter)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(out.counter("wheelbeat_test_requests_total", 1),
                       "metric wheelbeat_test_requests_total: 0 label values (expected: 1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(out.counter("wheelbeat_test_requests_total", 1, {"blue"}),
                       "metric wheelbeat_test_requests_total: label colour = \"blue\" (expected "
                       "one of: red, green)",
                       std::invalid_argument);
  CHECK(out.prometheusText().find("wheelbeat_test_requests_total{") == std::string::npos);
}

TEST_CASE("every catalogue entry is rendered exactly once and follows the naming rules") {
  const MetricsWriter out;
  const std::string text = out.prometheusText();
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  std::map<std::string_view, int> seen;
  for (const MetricDef& m : wheelbeat::core::metricCatalogue()) {
    CAPTURE(m.name);
    CHECK(++seen[m.name] == 1);
    CHECK(m.name.starts_with("wheelbeat_"));
    CHECK(m.name.ends_with("_total") == (m.type == MetricType::Counter));
    if (m.type == MetricType::Histogram) CHECK(m.name.ends_with("_seconds"));
    CHECK(!m.help.empty());
    CHECK(m.help.find('\n') == std::string_view::npos);
    CHECK(m.labels.size() <= wheelbeat::core::kMaxLabels);
    // Bounded label sets; the one open label is a provider's url (bounded by the providers
    // followed).
    for (const LabelDef& l : m.labels) CHECK((!l.values.empty() || l.name == "provider"));
    const std::string name(m.name);
    CHECK(countLines(text, fmt::format("# TYPE {} {}", name,
                                       wheelbeat::core::metricTypeName(m.type))) == 1);
    CHECK(text.find("# HELP " + name + " ") != std::string::npos);
  }
  int typeLines = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) typeLines += l.starts_with("# TYPE ") ? 1 : 0;
  CHECK(typeLines == static_cast<int>(wheelbeat::core::metricCatalogue().size()));
}

TEST_CASE("docs/metrics.md's table is the catalogue") {
  std::ifstream file(WHEELBEAT_SOURCE_DIR "/docs/metrics.md");
  REQUIRE(file.good());
  std::ostringstream content;
  content << file.rdbuf();
  const std::string readme = content.str();
  const std::string table = wheelbeat::core::metricCatalogueMarkdown();
  // Regenerate with: build/tests/bin/wheelbeat_metrics_table (see docs/metrics.md).
  CHECK_MESSAGE(readme.find(table) != std::string::npos,
                "docs/metrics.md's table differs from the catalogue; expected:\n", table);
}

TEST_CASE("a registry runs its collectors until their registration goes") {
  MetricsRegistry registry;
  CHECK_THROWS_AS((void)registry.add(nullptr), std::invalid_argument);
  int runs = 0;
  auto first = registry.add([&](MetricsWriter& out) {
    ++runs;
    out.gauge("wheelbeat_wheel_pending_timeouts", 2);
  });
  auto second = registry.add([](MetricsWriter& out) {
    out.gauge("wheelbeat_wheel_pending_timeouts", 3);
    throw std::runtime_error("collector failed");  // logged; what it wrote stays
  });
  LogCapture log;
  CHECK(registry.collect().value("wheelbeat_wheel_pending_timeouts") == 5);
  const auto lines = log.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].level == LogLevel::Error);
  CHECK(lines[0].text == "wheelbeat: metrics collector 2 threw: collector failed");
  second.reset();
  const std::string text = registry.prometheusText();
  CHECK(countLines(text, "wheelbeat_wheel_pending_timeouts 2") == 1);
  first.reset();
  first.reset();  // idempotent
  CHECK(registry.collect().value("wheelbeat_wheel_pending_timeouts") == 0);
  CHECK(runs == 2);
}

TEST_CASE("a registration may outlive its registry") {
  MetricsRegistry::Registration kept;
  {
    MetricsRegistry registry;
    kept = registry.add([](MetricsWriter&) {});
  }
  kept.reset();  // nothing left to remove from: no crash, no leak
  CHECK(true);
}

TEST_CASE("the wheel writes its counters and its lateness and worker-lag histograms") {
  ManualWheel w;  // 10 ms tick
  w.start();
  int ran = 0;
  for (int i = 0; i < 3; ++i) (void)w.schedule([&] { ++ran; }, 20ms);  // due at tick 2
  auto cancelled = w.schedule([] {}, 50ms);
  CHECK(cancelled.cancel());
  (void)w.schedule([] {}, 1s);
  w.step(1);
  w.clock().advance(15ms);  // tick 2 is processed 5 ms after its time
  w.timer().advance();
  REQUIRE(ran == 3);
  MetricsWriter out;
  w.timer().writeMetrics(out);
  CHECK(out.value("wheelbeat_wheel_pending_timeouts") == 1);
  CHECK(out.value("wheelbeat_wheel_scheduled_total") == 5);
  CHECK(out.value("wheelbeat_wheel_expired_total") == 3);
  CHECK(out.value("wheelbeat_wheel_cancelled_total") == 1);
  CHECK(out.value("wheelbeat_wheel_rejected_total") == 0);
  CHECK(out.value("wheelbeat_wheel_task_errors_total") == 0);
  CHECK(out.value("wheelbeat_wheel_rounds_total") == 3);  // start(), step(1), advance()
  const HistogramSnapshot lateness = out.histogramValue("wheelbeat_wheel_lateness_seconds");
  CHECK(lateness.count == 3);
  CHECK(lateness.sum == 3 * 5ms);  // each ran 5 ms after its deadline
  CHECK(lateness.counts[Hist::bucketOf(5ms)] == 3);
  const HistogramSnapshot lag = out.histogramValue("wheelbeat_wheel_worker_lag_seconds");
  CHECK(lag.count == 1);  // one tick held timeouts
  CHECK(lag.sum == 5ms);
}

}  // TEST_SUITE("core")
