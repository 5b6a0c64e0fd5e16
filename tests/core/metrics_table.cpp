// Prints the metric catalogue as README.md's Markdown table (core::metricCatalogueMarkdown()):
// paste its output into README's "Metrics" section after changing the catalogue.
#include <wheelbeat/core/metrics.h>

#include <fmt/format.h>

int main() {
  fmt::print("{}", wheelbeat::core::metricCatalogueMarkdown());
  return 0;
}
