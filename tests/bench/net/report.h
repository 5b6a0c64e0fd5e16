// What one H1/H2 run measured, the JSON line it prints (issue shape first, then extra keys:
// breakdowns, the machine's load, the targets and whether each was met), and --self-check.
//
// A raw-epoll run (config.impl Raw) prints the same line with "impl":"raw-epoll", without the
// targets and reference figures (they judge the library, not the floor) and with the skipped
// heartbeats. A wheelbeat run measured after one (--impl both) ends its line with the floor and
// the ratio to it: "raw_cpu_us_per_heartbeat", "cpu_per_heartbeat_vs_raw". With rounds, every
// line ends with "rounds" and "cpu_us_per_heartbeat_rounds" (and wheelbeat's with
// "cpu_per_heartbeat_vs_raw_rounds"): the line is the median run's, the ratio the medians'.
#pragma once

#include "net_bench.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

struct Measurement {
  BenchConfig config;          // after applyDefaults()
  std::int64_t conns = 0;      // connections the clients opened (all were connected)
  std::int64_t capacity = 0;   // connections the server process could hold (RLIMIT_NOFILE)
  std::int64_t connsHeld = 0;  // connected at the window's end, on both sides (the smaller)
  double windowS = 0;          // measured, between the two stats snapshots
  double heartbeatsPerS = 0;
  double cpuServerS = 0;
  double cpuClientsS = 0;        // all client processes
  double rssPerConnServer = 0;   // (RSS at window end - RSS before any connection) / conns
  double rssPerConnClient = 0;   // summed over client processes
  double heapPerConnServer = 0;  // the same for malloc'd bytes in use (mallinfo2)
  double heapPerConnClient = 0;
  double rttP50Us = 0;
  double rttP99Us = 0;
  double rttMaxUs = 0;
  double rttDecisionP50Us = 0;  // from the tick's decision to send, not from the write
  double rttDecisionP99Us = 0;
  std::uint64_t rttSamples = 0;
  // From "all connected" to the window's end.
  std::int64_t serverIdleCloses = 0;
  std::int64_t serverOtherCloses = 0;
  std::int64_t clientReconnects = 0;
  std::int64_t clientDisconnects = 0;
  // wheelbeat only: idle-looking checks deferred for unread input (a loop behind, not a dead peer).
  std::int64_t serverIdleDeferred = 0;
  std::int64_t clientIdleDeferred = 0;
  double serverWakeupsPerS = 0;  // EventLoop async wake-ups (posts) per second, in the window
  double clientWakeupsPerS = 0;
  double loadStart = 0;
  double loadEnd = 0;
  double connectS = 0;  // from spawning the clients to all connected
  // raw-epoll only: heartbeats not sent, their connection's previous answer still out.
  std::int64_t clientHbSkipped = 0;
  // wheelbeat after raw-epoll runs (--impl both): their median cpuUsPerHeartbeat().
  std::optional<double> rawCpuUsPerHeartbeat;
  // With rounds (config.rounds > 1): this implementation's CPU per heartbeat in every round, in
  // run order (this measurement is the median one), and on wheelbeat's line each round's ratio
  // to the raw-epoll run just before it.
  std::vector<double> roundsCpuUsPerHeartbeat;
  std::vector<double> roundsVsRaw;
};

// CPU of every process (server + clients) per heartbeat round trip in the window, in µs.
double cpuUsPerHeartbeat(const Measurement& m);

std::string resultLine(const Measurement& m);

// Each value rounded to 3 decimals (the lines' per-round lists; R1's too).
std::vector<double> rounded3(const std::vector<double>& values);

// The item whose key(item) is the median: the lower middle of an even count. `items` is not empty.
template <typename T, typename Key>
const T& medianBy(const std::vector<T>& items, Key key) {
  std::vector<const T*> sorted;
  sorted.reserve(items.size());
  for (const auto& item : items) sorted.push_back(&item);
  std::sort(sorted.begin(), sorted.end(),
            [&](const T* a, const T* b) { return key(*a) < key(*b); });
  return *sorted[(sorted.size() - 1) / 2];
}

// Problems with the printed line (shape, key order, types) and with the run (no heartbeats,
// no RTT samples, any close or reconnect, not every connection held). Empty: all good.
std::vector<std::string> selfCheck(const std::string& line, const Measurement& m);

}  // namespace wheelbeat::bench::netbench
