// One row's JSON line: the same keys, in the same order, as the wheelbeat side's T0 / T1 lines.
//   {"scenario","impl":"grpc","config","providers","rate","duration_s","offered","ok","failed",
//    "failed_by_error":{"<status name>":n},"attempts","extra_attempts_ratio","error_rate",
//    "p50_us","p99_us","p999_us","max_us","achieved_rate","client_cpu_us_per_call","cpu_model"}
// offered: calls scheduled in the measured window (= ok + failed); attempts: the requests of those
// calls the providers handled (first attempts and retries; an attempt abandoned while its provider
// was SIGSTOPped never reaches the service, so under T1 this is a lower bound, and the driver says
// on stderr how many at least were lost); extra_attempts_ratio = attempts / offered - 1; error_rate
// = failed / offered; latencies: every measured call, ok or failed, from its scheduled time to its
// end (nearest-rank percentiles); achieved_rate = ok / duration_s; client_cpu_us_per_call: the
// consumer process's user + system CPU over the measured calls / offered.
#pragma once

#include "grpc_bench.h"

#include <cstdint>
#include <string>

namespace wheelbeat::bench::grpcbench {

struct Row {
  Scenario scenario = Scenario::T0;
  ChannelConfig config = ChannelConfig::RoundRobin;
  int providers = 0;
  double rate = 0;
  double durationS = 0;
  std::uint64_t attempts = 0;
  ConsumerResult result;
};

std::string rowJson(const Row& row);
// "model name" of /proc/cpuinfo ("unknown" when absent).
std::string cpuModel();

}  // namespace wheelbeat::bench::grpcbench
