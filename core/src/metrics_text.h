// The pieces of the text format 0.0.4 that MetricsWriter and the application's metrics share.
// Private to core/.
#pragma once

#include <wheelbeat/core/metrics.h>

#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::core::detail {

// HELP text escapes backslash and line feed; label values (quote) also the double quote.
void appendEscaped(std::string& out, std::string_view text, bool quote);
// "# HELP name help\n# TYPE name type\n".
void appendHeader(std::string& out, std::string_view name, std::string_view help, MetricType type);
// One sample line of metric `m` (its label names) with label `values`.
void appendSample(std::string& out, std::string_view name, std::string_view suffix,
                  const MetricDef& m, const std::vector<std::string>& values, double v,
                  std::string_view extraName = {}, std::string_view extraValue = {});
// A histogram's _bucket (cumulative), _sum (seconds) and _count lines.
void appendHistogram(std::string& out, const MetricDef& m, const std::vector<std::string>& values,
                     const HistogramSnapshot& h);

}  // namespace wheelbeat::core::detail
