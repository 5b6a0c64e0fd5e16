// The application's own metrics, served with wheelbeat's by the same registry and endpoint:
//
//   core::MetricsRegistry metrics;                       // the one the scrape endpoint serves
//   core::Counter& requests = metrics.counter("myapp_requests_total", "Requests served.",
//                                             {"method"});
//   requests.inc({"get"});                               // myapp_requests_total{method="get"} 1
//   core::Gauge& queue = metrics.gauge("myapp_queue_depth", "Jobs waiting.");
//   queue.set(12);
//   core::DurationHistogram& latency =
//       metrics.histogram("myapp_latency_seconds", "Time to serve a request.", {"method"});
//   latency.record({"get"}, std::chrono::milliseconds(3));
//
// Names follow Prometheus' rules ([a-zA-Z_:][a-zA-Z0-9_:]*; labels [a-zA-Z_][a-zA-Z0-9_]*, not
// "__"-prefixed, distinct, and no "le" on a histogram); the prefix wheelbeat_ is wheelbeat's
// own and is refused, so an application's metric never collides with the catalogue. Making the
// same name again returns the same metric when type, help and labels match, and throws
// std::invalid_argument otherwise (naming the metric and what differs). Label *values* are the
// application's: any text (escaped in the exposition), as many as it creates; keep them bounded.
// Histograms use the catalogue's duration buckets (kDurationBucketsSeconds, 100 us .. 10 s).
//
// Exposition: after wheelbeat's metrics, each application metric in the order it was made, with
// its HELP and TYPE lines and its series sorted by label values; a metric with no series yet
// shows only HELP and TYPE.
//
// Threads: every member, any thread (one mutex per metric). A metric lives as long as its
// registry; the references the registry hands out stay valid until then.
#pragma once

#include <wheelbeat/core/metrics.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::core {

class AppMetric {
public:
  virtual ~AppMetric() = default;
  AppMetric(const AppMetric&) = delete;
  AppMetric& operator=(const AppMetric&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& help() const noexcept { return help_; }
  [[nodiscard]] MetricType type() const noexcept { return type_; }
  [[nodiscard]] const std::vector<std::string>& labelNames() const noexcept { return labels_; }

  // Appends this metric in the text format 0.0.4 (HELP, TYPE, its series).
  void appendText(std::string& out) const;

protected:
  AppMetric(std::string name, std::string help, MetricType type, std::vector<std::string> labels);
  // The series key of `values`; throws std::invalid_argument unless there is one value per label.
  [[nodiscard]] std::vector<std::string> key(LabelValues values) const;
  // A counter's or gauge's series: its value (0 when never written); += by, or = by (replace).
  [[nodiscard]] double valueOf(LabelValues labels) const;
  void addTo(LabelValues labels, double by, bool replace);

  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, double> values_;                          // counter, gauge
  std::map<std::vector<std::string>, std::unique_ptr<Histogram>> histograms_;  // histogram

private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> labels_;
};

class Counter final : public AppMetric {
public:
  Counter(std::string name, std::string help, std::vector<std::string> labels)
      : AppMetric(std::move(name), std::move(help), MetricType::Counter, std::move(labels)) {}
  // Adds `by` (>= 0 and finite: std::invalid_argument otherwise, nothing added).
  void inc(double by = 1) { inc({}, by); }
  void inc(LabelValues labels, double by = 1);
  [[nodiscard]] double value(LabelValues labels = {}) const { return valueOf(labels); }
};

class Gauge final : public AppMetric {
public:
  Gauge(std::string name, std::string help, std::vector<std::string> labels)
      : AppMetric(std::move(name), std::move(help), MetricType::Gauge, std::move(labels)) {}
  void set(double v) { set({}, v); }
  void set(LabelValues labels, double v);
  void add(double by) { add({}, by); }
  void add(LabelValues labels, double by);
  [[nodiscard]] double value(LabelValues labels = {}) const { return valueOf(labels); }
};

class DurationHistogram final : public AppMetric {
public:
  DurationHistogram(std::string name, std::string help, std::vector<std::string> labels)
      : AppMetric(std::move(name), std::move(help), MetricType::Histogram, std::move(labels)) {}
  void record(std::chrono::nanoseconds d) { record({}, d); }
  void record(LabelValues labels, std::chrono::nanoseconds d);
  [[nodiscard]] HistogramSnapshot snapshot(LabelValues labels = {}) const;
};

// Throws std::invalid_argument naming the metric and the rule when `name` or `labels` break the
// rules of the file comment. Thread: any.
void validateAppMetric(std::string_view name, MetricType type,
                       const std::vector<std::string>& labels);

}  // namespace wheelbeat::core
