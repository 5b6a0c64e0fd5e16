// MetricsWriter::prometheusText(): the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
#include "metrics_text.h"

#include <wheelbeat/core/metrics.h>

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace wheelbeat::core {
namespace detail {

void appendEscaped(std::string& out, std::string_view text, bool quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace detail

namespace {

using detail::appendEscaped;

// Integral values as integers (counters read "12", not "12.0"); others in the shortest form
// that reads back exactly; the special values as the format spells them.
void appendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {  // 2^53
    fmt::format_to(std::back_inserter(out), "{}", static_cast<std::int64_t>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

// {a="x",b="y"} with `extra` (le="...") appended; nothing for no labels at all.
void appendLabels(std::string& out, const MetricDef& m, const std::vector<std::string>& values,
                  std::string_view extraName = {}, std::string_view extraValue = {}) {
  if (values.empty() && extraName.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += m.labels[i].name;
    out += "=\"";
    appendEscaped(out, values[i], true);
    out += '"';
  }
  if (!extraName.empty()) {
    if (!values.empty()) out += ',';
    out += extraName;
    out += "=\"";
    out += extraValue;
    out += '"';
  }
  out += '}';
}

}  // namespace

namespace detail {

void appendSample(std::string& out, std::string_view name, std::string_view suffix,
                  const MetricDef& m, const std::vector<std::string>& values, double v,
                  std::string_view extraName, std::string_view extraValue) {
  out += name;
  out += suffix;
  appendLabels(out, m, values, extraName, extraValue);
  out += ' ';
  appendValue(out, v);
  out += '\n';
}

void appendHistogram(std::string& out, const MetricDef& m, const std::vector<std::string>& values,
                     const HistogramSnapshot& h) {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kDurationBucketsSeconds.size(); ++i) {
    cumulative += h.counts[i];
    const std::string le = fmt::format("{}", kDurationBucketsSeconds[i]);
    appendSample(out, m.name, "_bucket", m, values, static_cast<double>(cumulative), "le", le);
  }
  // +Inf holds every sample: the count, whatever a racing snapshot saw in the buckets.
  appendSample(out, m.name, "_bucket", m, values, static_cast<double>(h.count), "le", "+Inf");
  appendSample(out, m.name, "_sum", m, values, static_cast<double>(h.sum.count()) / 1e9);
  appendSample(out, m.name, "_count", m, values, static_cast<double>(h.count));
}

void appendHeader(std::string& out, std::string_view name, std::string_view help, MetricType type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  appendEscaped(out, help, false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += metricTypeName(type);
  out += '\n';
}

}  // namespace detail

std::string MetricsWriter::prometheusText() const {
  std::string out;
  for (std::size_t i = 0; i < catalogue_.size(); ++i) {
    const MetricDef& m = catalogue_[i];
    detail::appendHeader(out, m.name, m.help, m.type);
    for (const auto& [values, s] : series_[i]) {  // std::map: sorted by label values
      if (m.type == MetricType::Histogram) {
        detail::appendHistogram(out, m, values, s.histogram);
      } else {
        detail::appendSample(out, m.name, "", m, values, s.value);
      }
    }
  }
  return out;
}

}  // namespace wheelbeat::core
