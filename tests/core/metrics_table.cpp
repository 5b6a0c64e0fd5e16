// Prints the metric catalogue as docs/metrics.md's Markdown table
// (core::metricCatalogueMarkdown()): paste its output there after changing the catalogue.
#include <wheelbeat/core/metrics.h>

#include <fmt/format.h>

int main() {
  fmt::print("{}", wheelbeat::core::metricCatalogueMarkdown());
  return 0;
}
