#include <wheelbeat/cluster/service_client.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::cluster {

void validate(const ClusterOptions& o) {
  tasks::cluster::CallPolicy p;
  p.mode = o.mode;
  p.retries = o.retries;
  p.forks = o.forks;
  p.deadline = o.deadline;
  p.attemptTimeout = o.attemptTimeout;
  p.hedge = o.hedge;
  tasks::cluster::validate(p);
  tasks::cluster::validate(o.outlier);
  tasks::cluster::validate(o.hedgeDelay);
  tasks::validate(o.budget);
  tasks::validate(o.failback);
  registry::validate(o.directory);
  if (!(o.maxExtraPercent >= 0 && o.maxExtraPercent <= 100)) {
    throw std::invalid_argument(
        fmt::format("ClusterOptions.maxExtraPercent = {} (expected: 0..100)", o.maxExtraPercent));
  }
  // A hedge needs a token and room under the cap: with neither ever given, `hedge` would be a
  // setting that silently does nothing.
  if (o.hedge && o.budget.ratio == 0 && o.budget.minRetriesPerSecond == 0) {
    throw std::invalid_argument(
        "ClusterOptions.hedge = true with budget.ratio = 0 and budget.minRetriesPerSecond = 0 "
        "(expected: a budget that gives tokens: ratio > 0 or minRetriesPerSecond > 0)");
  }
  if (o.hedge && o.maxExtraPercent == 0) {
    throw std::invalid_argument(
        "ClusterOptions.hedge = true with maxExtraPercent = 0 (expected: maxExtraPercent > 0)");
  }
}

}  // namespace wheelbeat::cluster
