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
}

}  // namespace wheelbeat::cluster
