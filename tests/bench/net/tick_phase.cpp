// tickPhaseStart() (net_bench.h): where each H1 / H2 client process starts its ticks.
#include "net_bench.h"

#include <algorithm>

namespace wheelbeat::bench::netbench {

std::chrono::steady_clock::time_point tickPhaseStart(const BenchConfig& config) {
  using std::chrono::nanoseconds;
  const nanoseconds tick = std::chrono::milliseconds(std::max(1, config.tickMs));
  const int procs = std::max(1, config.clientProcs);
  const nanoseconds offset = tick * (config.procIndex % procs) / procs;
  const nanoseconds now = std::chrono::steady_clock::now().time_since_epoch();
  // The first time after now that lies `offset` past a multiple of the tick.
  nanoseconds at = now - now % tick + offset;
  if (at <= now) at += tick;
  return std::chrono::steady_clock::time_point(at);
}

}  // namespace wheelbeat::bench::netbench
