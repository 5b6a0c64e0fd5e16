#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/core/option_error.h>

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
  try {
    tasks::validate(o.budget);
  } catch (const core::OptionError& e) {
    throw e.within("ClusterOptions", "budget");
  }
  try {
    tasks::validate(o.failback);
  } catch (const core::OptionError& e) {
    throw e.within("ClusterOptions", "failback");
  }
  registry::validate(o.directory);
  if (!(o.maxExtraPercent >= 0 && o.maxExtraPercent <= 100)) {
    throw core::OptionError("ClusterOptions", "maxExtraPercent",
                            fmt::format("{}", o.maxExtraPercent), "0..100");
  }
  // A hedge is sent only with a token of the budget: one that never holds a token would leave
  // hedging on in name only.
  if (o.hedge && o.budget.ratio == 0 && o.budget.minRetriesPerSecond == 0) {
    throw core::OptionError(
        "ClusterOptions", "hedge", "true",
        "a budget that can give a token (a ratio or a per-second reserve above 0)", "budget",
        "a budget that can give a token while hedging is on (a ratio or a per-second reserve "
        "above 0)");
  }
  // Nor one that the load cap never lets through.
  if (o.hedge && o.maxExtraPercent == 0) {
    throw core::OptionError("ClusterOptions", "hedge", "true", "maxExtraPercent > 0",
                            "maxExtraPercent", "> 0 while hedging is on");
  }
}

}  // namespace wheelbeat::cluster
