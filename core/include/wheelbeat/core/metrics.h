// The metric model: one catalogue of every metric wheelbeat exposes, the samples each layer writes
// at scrape time, and their rendering in the Prometheus text format 0.0.4.
//
//   core::MetricsRegistry metrics;
//   auto wheelRegistration = metrics.add([&](core::MetricsWriter& out) { timer.writeMetrics(out);
//   }); std::string text = metrics.prometheusText();   // "# HELP wheelbeat_wheel_pending_timeouts
//   ..."
//
// Catalogue (metricCatalogue(), core/src/metrics_catalogue.cpp): the one table naming every
// metric: its full name (prefix `wheelbeat_`, counters end in `_total`, histograms in `_seconds`),
// type, help text and label names. Every label takes its values from a small fixed set listed in
// the catalogue (but `provider`, one per provider followed), so the number of series is bounded
// whatever the traffic.
//
// Units: durations in seconds (histogram bounds, `_sum`), sizes in bytes.
//
// Samples: each layer keeps its numbers in its own atomics (cheap on its hot path) and writes
// them into a MetricsWriter only when a scrape asks (a collector). Two samples of the same metric
// and label values add up (two clients sharing nothing still make one series), so a process with
// several wheels, servers or clients exposes their sums.
//
// Threads: MetricsRegistry: every member, any thread (one mutex; collectors run under it, one
// scrape at a time). A MetricsWriter belongs to the thread that fills it. Histogram: record() and
// snapshot() from any thread (relaxed atomics: a snapshot taken while others record may be a few
// samples behind, and its buckets, sum and count are not one consistent instant).
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::core {

enum class MetricType : std::uint8_t { Counter, Gauge, Histogram };
// "counter", "gauge", "histogram" (the TYPE line's word).
[[nodiscard]] std::string_view metricTypeName(MetricType type) noexcept;

// One label: its name and the only values it may take (empty = any value: in metricCatalogue()
// only `provider`, a provider's url, bounded by the providers a cluster client follows).
struct LabelDef {
  std::string_view name;
  std::span<const std::string_view> values;
};

struct MetricDef {
  std::string_view name;  // full exposition name, e.g. "wheelbeat_channel_frames_in_total"
  MetricType type = MetricType::Counter;
  std::string_view help;               // one line, plain text
  std::span<const LabelDef> labels{};  // at most kMaxLabels
};

inline constexpr std::size_t kMaxLabels = 2;

// Every metric of wheelbeat, in exposition order. Thread: any (a static table).
[[nodiscard]] std::span<const MetricDef> metricCatalogue() noexcept;
// The catalogue as a Markdown table (| Metric | Type | Labels | Meaning |), as docs/metrics.md
// shows it (a test keeps the two equal).
[[nodiscard]] std::string metricCatalogueMarkdown();

// Upper bounds (`le`) of every histogram's buckets, in seconds: 100 us .. 10 s, roughly 1-2.5-5
// per decade (a heartbeat RTT on a LAN and a wheel's lateness both fall inside).
inline constexpr std::array<double, 16> kDurationBucketsSeconds{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
inline constexpr std::size_t kHistogramBuckets = kDurationBucketsSeconds.size() + 1;  // +Inf

// Plain numbers of a Histogram. counts[i] holds the samples of bucket i alone (not cumulative);
// the last one is (10 s, +Inf).
struct HistogramSnapshot {
  std::array<std::uint64_t, kHistogramBuckets> counts{};
  std::uint64_t count = 0;
  std::chrono::nanoseconds sum{0};

  HistogramSnapshot& operator+=(const HistogramSnapshot& other) noexcept;
  // Estimate of the q-quantile (0 < q <= 1): linear inside the bucket holding it, as
  // Prometheus's histogram_quantile(); the lower bound of the last bucket when it falls in +Inf;
  // 0 when empty.
  [[nodiscard]] std::chrono::nanoseconds quantile(double q) const noexcept;
};

// A duration histogram over kDurationBucketsSeconds. Thread: any (see the file comment).
class Histogram {
public:
  // A negative value counts as 0.
  void record(std::chrono::nanoseconds value) noexcept;
  // The same for a histogram written by one thread only (no locked instruction).
  void recordSingleWriter(std::chrono::nanoseconds value) noexcept;
  [[nodiscard]] HistogramSnapshot snapshot() const noexcept;
  // The bucket of `value` (0 .. kHistogramBuckets - 1).
  [[nodiscard]] static std::size_t bucketOf(std::chrono::nanoseconds value) noexcept;

private:
  std::array<std::atomic<std::uint64_t>, kHistogramBuckets> counts_{};
  std::atomic<std::int64_t> sumNs_{0};
};

// Label values in the order of the metric's label names.
using LabelValues = std::initializer_list<std::string_view>;

// The samples of one scrape. Each call checks its sample against the catalogue and throws
// std::invalid_argument naming the metric (and label) for a name not in it, the wrong type, the
// wrong number of label values, or a value outside the label's set; then nothing is recorded.
// Samples with the same name and label values add up. Thread: one at a time.
class MetricsWriter {
public:
  explicit MetricsWriter(std::span<const MetricDef> catalogue = metricCatalogue());

  void counter(std::string_view name, double value, LabelValues labels = {});
  void gauge(std::string_view name, double value, LabelValues labels = {});
  void histogram(std::string_view name, const HistogramSnapshot& value, LabelValues labels = {});

  // The sum recorded for a counter or gauge series; 0 when none was written.
  [[nodiscard]] double value(std::string_view name, LabelValues labels = {}) const;
  // The histogram recorded for a series; empty when none was written.
  [[nodiscard]] HistogramSnapshot histogramValue(std::string_view name,
                                                 LabelValues labels = {}) const;

  // Format 0.0.4: for every catalogue metric, in catalogue order, `# HELP` and `# TYPE` once,
  // then its series sorted by label values (histograms: cumulative `_bucket` lines ending with
  // le="+Inf", then `_sum` in seconds and `_count`). Label values escaped (\\, \", \n). Ends with
  // a newline.
  [[nodiscard]] std::string prometheusText() const;

private:
  struct Series {
    double value = 0;
    HistogramSnapshot histogram;
  };
  using Key = std::vector<std::string>;  // label values
  std::size_t find(std::string_view name, MetricType type, LabelValues labels) const;
  Series& series(std::size_t metric, LabelValues labels);

  std::span<const MetricDef> catalogue_;
  std::vector<std::map<Key, Series>> series_;  // per catalogue entry
};

class AppMetric;
class Counter;
class Gauge;
class DurationHistogram;

// Where the layers register their collectors, and the application makes its own metrics
// (app_metrics.h). Thread: any (see the file comment).
class MetricsRegistry {
public:
  // Writes the collector's samples at each scrape, on the scraping thread. It must not throw
  // (a throw is logged, and the samples it wrote before stay) nor call its registry.
  using Collector = std::function<void(MetricsWriter&)>;

  // Removes its collector when reset or destroyed: after that returns, the collector is not
  // running and never runs again (so it may read objects destroyed right after). Not from inside
  // a collector. May outlive the registry.
  class Registration {
  public:
    Registration() = default;
    ~Registration() { reset(); }
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    void reset() noexcept;

  private:
    friend class MetricsRegistry;
    struct State;
    Registration(std::weak_ptr<State> state, std::uint64_t id) noexcept
        : state_(std::move(state)), id_(id) {}
    std::weak_ptr<State> state_;
    std::uint64_t id_ = 0;
  };

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Throws std::invalid_argument for an empty collector.
  [[nodiscard]] Registration add(Collector collector);
  // Runs every collector (in the order they were added) into one writer.
  [[nodiscard]] MetricsWriter collect() const;
  // collect().prometheusText(), then the application's metrics (app_metrics.h).
  [[nodiscard]] std::string prometheusText() const;

  // The application's own metrics (app_metrics.h: rules, errors, exposition). The reference
  // stays valid as long as this registry. Throws std::invalid_argument for a name or labels
  // against the rules, or a name made before with another type, help or labels.
  Counter& counter(std::string_view name, std::string_view help,
                   std::initializer_list<std::string_view> labels = {});
  Gauge& gauge(std::string_view name, std::string_view help,
               std::initializer_list<std::string_view> labels = {});
  DurationHistogram& histogram(std::string_view name, std::string_view help,
                               std::initializer_list<std::string_view> labels = {});

private:
  template <typename M>
  M& make(std::string_view name, std::string_view help,
          std::initializer_list<std::string_view> labels, MetricType type);

  std::shared_ptr<Registration::State> state_;
};

}  // namespace wheelbeat::core
