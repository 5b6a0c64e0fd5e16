// Scenario D1: the fixed idle rule (Dubbo's: reconnect once read idle >= idleTimeout = 3 ×
// heartbeat) against the phi-accrual detector (tasks/failure_detector.h), at the same heartbeat,
// under three faults injected into a live loopback TCP setup:
//   dead   the server stops answering without closing its sockets (an nftables rule drops every
//          packet to and from its ports): the time from the rule to each client's reconnect
//          decision (ReconnectTimerTask's onReconnect with a "read idle" or "phi" reason), per
//          trial at a random phase of the heartbeat cycle;
//   pause  the server process is stopped (SIGSTOP) for 0.5–2.5 heartbeats, then resumed: every
//          reconnect decision or server close-idle meanwhile is false;
//   loss   10 % of the packets to and from the server's ports are dropped for a window: every
//          reconnect decision or server close-idle is false.
//
// Processes: the driver (d1_driver.cpp) runs this binary again as one server process (one
// TcpServer per detector group, each with that group's HeartbeatOptions) and one client process
// (`conns` TcpClients per group, started one heartbeat / conns apart so that their heartbeat and
// check phases spread over the cycle). Every group sees the same faults at the same instants on
// the same loop and wheel: the comparison is paired. Timestamps are CLOCK_MONOTONIC nanoseconds
// (std::chrono::steady_clock), the same clock in every process.
//
// Pipe protocol (proto.h lines). Both children: "events since=NS" -> "events n=K" and K lines
// "ev group=G ch=ID t=NS rule=R" (rule 0: a reconnect after a disconnect, 1: the fixed idle rule,
// 2: phi). Client: "await-ready samples=S timeout_ms=T" -> "ready-state ok= connected= not_ready="
// (every client connected, every phi channel's detector holding >= S inter-arrival samples);
// "await-decided since=NS timeout_ms=T" -> "decided ok= missing=" (every client has a decision
// of rule 1 or 2 at or after NS). Server: "await-closes since=NS n=N timeout_ms=T" -> "closes
// ok= n=" (every group closed >= N channels by its close-idle task since NS).
#pragma once

#include "net_bench.h"

#include <wheelbeat/tasks/heartbeat_tasks.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {

struct DetectorGroup {
  tasks::DetectorKind kind = tasks::DetectorKind::Fixed;
  double threshold = tasks::PhiOptions{}.threshold;  // phi only
  int acceptablePauseMs = static_cast<int>(          // phi only
      std::chrono::duration_cast<std::chrono::milliseconds>(tasks::PhiOptions{}.acceptablePause)
          .count());
  int idleTimeoutMs = 0;  // 0: 3 × heartbeat (Dubbo's); also the server's closeTimeout
  bool extra = false;     // a --phi-extra variant (not the library's defaults)
};

// fixed, phi with the library's defaults, then one per --phi-extra.
std::vector<DetectorGroup> d1Groups(const BenchConfig& config);
// "fixed;phi:8:0:0:0;phi:8:500:4000:1" (threshold, pause, idle, extra) and back (--groups).
std::string encodeGroups(const std::vector<DetectorGroup>& groups);
std::vector<DetectorGroup> decodeGroups(std::string_view text);
// Parses a --phi-extra value "THRESHOLD:PAUSE_MS[:IDLE_TIMEOUT_MS]"; throws
// std::invalid_argument.
DetectorGroup parsePhiExtra(std::string_view text);

// The group's heartbeat options at --heartbeat-ms (idle and close timeouts: 3 × heartbeat).
tasks::HeartbeatOptions d1Heartbeat(const BenchConfig& config, const DetectorGroup& group);

// Event rules (the "rule" of an "ev" line).
inline constexpr int kRuleDisconnected = 0;
inline constexpr int kRuleIdle = 1;
inline constexpr int kRulePhi = 2;
// The rule a task's reason names: "phi ..." -> 2, "read idle" / "write idle" -> 1, else 0.
int ruleOf(std::string_view reason);

int d1ServerMain(const BenchConfig& config);
int d1ClientMain(const BenchConfig& config);
int d1DriverMain(const BenchConfig& config);

}  // namespace wheelbeat::bench::netbench
