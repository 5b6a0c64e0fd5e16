#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace wheelbeat::bench::grpcbench {
namespace {

// Nearest rank: the smallest value with at least p of the values at or below it.
std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// A JSON string: the status names and the CPU model need only quotes and backslashes escaped
// (control characters are dropped).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string failedByJson(const std::map<std::string, std::uint64_t>& failedBy) {
  std::string out = "{";
  for (const auto& [name, n] : failedBy) {
    if (out.size() > 1) out += ",";
    out += fmt::format("{}:{}", quoted(name), n);
  }
  return out + "}";
}

}  // namespace

std::string rowJson(const Row& row) {
  const ConsumerResult& r = row.result;
  std::vector<std::int64_t> sorted = r.latencyUs;
  std::sort(sorted.begin(), sorted.end());
  const std::uint64_t offered = sorted.size();
  const std::uint64_t failed = offered - r.ok;
  const double offeredD = offered > 0 ? static_cast<double>(offered) : 1.0;
  return fmt::format(
      R"({{"scenario":"{}","impl":"grpc","config":"{}","providers":{},"rate":{},)"
      R"("duration_s":{},"offered":{},"ok":{},"failed":{},"failed_by_error":{},"attempts":{},)"
      R"("extra_attempts_ratio":{:.6f},"error_rate":{:.6f},"p50_us":{},"p99_us":{},)"
      R"("p999_us":{},"max_us":{},"achieved_rate":{:.1f},"client_cpu_us_per_call":{:.1f},)"
      R"("cpu_model":{}}})",
      scenarioName(row.scenario), configName(row.config), row.providers, row.rate, row.durationS,
      offered, r.ok, failed, failedByJson(r.failedBy), row.attempts,
      static_cast<double>(row.attempts) / offeredD - 1.0, static_cast<double>(failed) / offeredD,
      percentile(sorted, 0.50), percentile(sorted, 0.99), percentile(sorted, 0.999),
      sorted.empty() ? 0 : sorted.back(), static_cast<double>(r.ok) / row.durationS,
      static_cast<double>(r.cpuUs) / offeredD, quoted(cpuModel()));
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

}  // namespace wheelbeat::bench::grpcbench
