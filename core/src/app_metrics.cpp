// The application's metrics (app_metrics.h): the naming rules, the series, the exposition.
#include "metrics_text.h"

#include <wheelbeat/core/app_metrics.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wheelbeat::core {
namespace {

bool nameChar(char c, bool first, bool colon) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return letter || (colon && c == ':') || (!first && c >= '0' && c <= '9');
}

bool validName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!nameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

[[noreturn]] void refuse(std::string_view name, std::string_view what) {
  throw std::invalid_argument(fmt::format("metric {}: {}", name, what));
}

}  // namespace

void validateAppMetric(std::string_view name, MetricType type,
                       const std::vector<std::string>& labels) {
  if (!validName(name, true)) {
    refuse(name, "not a Prometheus metric name (expected: [a-zA-Z_:][a-zA-Z0-9_:]*)");
  }
  if (name.starts_with("wheelbeat_")) {
    refuse(name,
           "the prefix wheelbeat_ is wheelbeat's own (expected: a name of the application's)");
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& l = labels[i];
    if (!validName(l, false) || l.starts_with("__")) {
      refuse(name, fmt::format("label \"{}\" is not a Prometheus label name (expected: "
                               "[a-zA-Z_][a-zA-Z0-9_]*, not starting with __)",
                               l));
    }
    if (type == MetricType::Histogram && l == "le") {
      refuse(name, "label \"le\" is the histogram's bucket label (expected: another name)");
    }
    if (std::find(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(i), l) !=
        labels.begin() + static_cast<std::ptrdiff_t>(i)) {
      refuse(name, fmt::format("label \"{}\" given twice (expected: distinct labels)", l));
    }
  }
}

AppMetric::AppMetric(std::string name, std::string help, MetricType type,
                     std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), type_(type), labels_(std::move(labels)) {}

std::vector<std::string> AppMetric::key(LabelValues values) const {
  if (values.size() != labels_.size()) {
    refuse(name_, fmt::format("{} label value(s) for the labels ({}) (expected: one per label)",
                              values.size(), fmt::join(labels_, ", ")));
  }
  return {values.begin(), values.end()};
}

void AppMetric::appendText(std::string& out) const {
  std::vector<LabelDef> labelDefs;
  for (const std::string& l : labels_) labelDefs.push_back({l, {}});
  const MetricDef def{name_, type_, help_, labelDefs};
  detail::appendHeader(out, name_, help_, type_);
  std::lock_guard lock(mutex_);
  if (type_ == MetricType::Histogram) {
    for (const auto& [values, h] : histograms_)
      detail::appendHistogram(out, def, values, h->snapshot());
  } else {
    for (const auto& [values, v] : values_) detail::appendSample(out, name_, "", def, values, v);
  }
}

void Counter::inc(LabelValues labels, double by) {
  if (!(by >= 0) || std::isinf(by)) {
    refuse(name(), fmt::format("inc({}) (expected: a finite amount >= 0)", by));
  }
  addTo(labels, by, false);
}

double AppMetric::valueOf(LabelValues labels) const {
  const auto k = key(labels);
  std::lock_guard lock(mutex_);
  const auto it = values_.find(k);
  return it == values_.end() ? 0 : it->second;
}

void AppMetric::addTo(LabelValues labels, double by, bool replace) {
  auto k = key(labels);
  std::lock_guard lock(mutex_);
  double& v = values_[std::move(k)];
  v = replace ? by : v + by;
}

void Gauge::set(LabelValues labels, double v) { addTo(labels, v, true); }

void Gauge::add(LabelValues labels, double by) { addTo(labels, by, false); }

void DurationHistogram::record(LabelValues labels, std::chrono::nanoseconds d) {
  auto k = key(labels);
  std::lock_guard lock(mutex_);
  auto& h = histograms_[std::move(k)];
  if (!h) h = std::make_unique<Histogram>();
  h->record(d);
}

HistogramSnapshot DurationHistogram::snapshot(LabelValues labels) const {
  const auto k = key(labels);
  std::lock_guard lock(mutex_);
  const auto it = histograms_.find(k);
  return it == histograms_.end() ? HistogramSnapshot{} : it->second->snapshot();
}

}  // namespace wheelbeat::core
