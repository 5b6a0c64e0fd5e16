#include <wheelbeat/cluster/service_client.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::cluster {

void validate(const ClusterOptions& o) {
  // The failback mode's hand-off (a failed call held and retried later by a FailbackInvoker) is
  // not wired into ServiceClient yet: refused rather than answered with an empty success that
  // nothing retries.
  if (o.mode == tasks::cluster::Mode::Failback) {
    throw std::invalid_argument(
        "ClusterOptions.mode = failback (expected: failover, failfast, failsafe, forking or "
        "broadcast; for failback, give failed calls to a tasks::FailbackInvoker)");
  }
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
  registry::validate(o.directory);
  if (!(o.maxExtraPercent >= 0 && o.maxExtraPercent <= 100)) {
    throw std::invalid_argument(
        fmt::format("ClusterOptions.maxExtraPercent = {} (expected: 0..100)", o.maxExtraPercent));
  }
}

}  // namespace wheelbeat::cluster
