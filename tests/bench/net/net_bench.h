// wheelbeat_net_bench: heartbeat-at-scale benchmarks H1 and H2 over loopback TCP, and D1 (the
// fixed idle rule against the phi-accrual detector under faults: d1.h), and R1 (request /
// response throughput against a raw-epoll floor: r1.h).
//
// One binary, three roles. The driver (no --role) spawns a server process and client processes
// (this binary again, --role server|client, --impl wheelbeat|raw) and talks to each over a pipe
// pair: the child's stdin carries commands ("stats"; clients also "rtt", and H1 / H2 clients
// "rtt-decision": heartbeat round trips from the tick that decided them), its stdout one reply
// line per command (proto.h: "tag key=value ..."; rtt_histogram.h for "rtt"); EOF on its stdin
// tells it to quit. Separate processes keep CPU and RSS per process, as a deployment would see
// them. Replies, in order:
//   server: "ready port0=P0 port1=P1 ... capacity=C cpu_ns= rss= heap=" once listening, then
//           "stats conns= cpu_ns= rss= heap= idle_closes= other_closes= loop_wakeups= ..."
//   client: "ready cpu_ns= rss= heap=" before any connection (the RSS baseline), "connected n=N"
//           once all are connected, then "stats connected= disconnects= hb_sent= reconnects=
//           rtt_samples= loop_wakeups= cpu_ns= rss= heap= ..." and "rtt i:c ...".
//
// Two implementations of the roles, compared in one run by --impl both (the default):
//   wheelbeat  each process runs one EventLoop and one shared HashedWheelTimer, with the
//              library's per-connection heartbeat / reconnect / close-idle tasks: its model.
//   wheelbeat-loopwheel  the same, each process's wheel driven by its loop (net::LoopWheel):
//              one thread per process, as the floor's.
//   raw-epoll  (--impl raw, raw_roles.cpp) the floor: the same sockets (loopback TCP, TCP_NODELAY,
//              the same addresses), the same 17-byte Dubbo heartbeat frames on the same schedule
//              (each connection once per heartbeat period, in bursts on the 100 ms ticks), and
//              nothing but the syscalls: one thread, a level-triggered epoll, one write per
//              heartbeat and per answer, a timerfd for the ticks. No timer wheel, no tasks, no
//              idle detection. What it costs is the kernel's share; wheelbeat's CPU per heartbeat
//              divided by it (cpu_per_heartbeat_vs_raw) is what the library adds on top.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

enum class Scenario { H1, H2, D1, R1 };
// Both: the driver runs Raw, then Wheelbeat (H1 / H2: then LoopWheel too). Children get one of
// the others. LoopWheel (H1 / H2 only): the library with each process's wheel advanced by its
// event loop (net::LoopWheel, no wheel thread) instead of the wheel's own thread.
enum class Impl { Wheelbeat, Raw, Both, LoopWheel };

// "wheelbeat", "raw-epoll" (the JSON lines' "impl"), "both", "wheelbeat-loopwheel".
const char* implName(Impl impl);

// R1 (r1.h): one case, `conns` connections with `depth` requests in flight on each.
struct R1Case {
  int conns = 0;
  int depth = 0;
};
// R1's request and response bodies (the line's "bodies"): Raw, 64 bytes echoed as they came;
// Hessian2, a Dubbo call echo(String) of a 64-character string, decoded and answered by
// dubbo::Provider (r1.h); Hessian2InPlace, the same bodies served by an in-place handler
// (Provider::addInPlace); RawSized, raw bytes of the hessian2 bodies' lengths.
enum class R1Bodies { Raw, Hessian2, RawSized, Hessian2InPlace };

struct BenchConfig {
  Scenario scenario = Scenario::H1;
  // < 0: the scenario's default. H2: 0 = as many as the server process can hold.
  int conns = -1;
  double windowS = -1;
  double warmupS = -1;
  // H1 / H2: runs of each implementation, interleaved (raw, wheelbeat, raw, ...); each line is
  // the implementation's median run. < 0: 3 with Impl::Both (not quick), else 1.
  int rounds = -1;
  int clientProcs = -1;
  // 100 ms is the wheel's (and Netty's) default tick: what a production user runs. A 1 s
  // heartbeat checks every 333 ms, i.e. every 4th tick, so a finer tick buys nothing here.
  int tickMs = 100;
  int heartbeatMs = 1000;
  bool quick = false;
  bool selfCheck = false;
  Impl impl = Impl::Both;
  // H1 / H2, wheelbeat's clients: "even" connects connection i in the tick slot i % (heartbeat /
  // tick), so that its heartbeats (which follow its connect) come on the floor's schedule, an
  // equal share in every tick; "connect": batches as fast as they connect, the heartbeats then
  // clustered in the few ticks the connects took (before 2026-11-27's sixth session, always).
  std::string schedule = "even";

  // D1 only (d1.h). --conns is per detector there, --window the packet-loss window.
  int trials = -1;                     // dead-peer trials
  int pauses = -1;                     // SIGSTOP/SIGCONT pauses
  std::vector<std::string> phiExtras;  // --phi-extra THRESHOLD:PAUSE_MS, each an extra detector
  std::uint64_t seed = 0;              // 0: a fresh one (printed in the lines)

  // R1 only (r1.h).
  std::vector<R1Case> r1Cases;  // the driver's cases (--cases)
  std::vector<int> loops;       // server event loops per case (--loops); a child gets one
  int depth = 1;                // client child: requests in flight per connection
  int requestTimeoutMs = 5000;  // wheelbeat client: each request's timeout
  // The driver's body modes (--bodies), run in this order; a child gets one.
  std::vector<R1Bodies> r1Bodies{R1Bodies::Raw};

  // Children only (set by the driver).
  std::string role;  // "server" | "client"
  int port = 0;
  int procIndex = 0;
  std::string groups;  // D1: the detector groups (d1.h: encodeGroups())
  std::string ports;   // D1 client: the server's port per group, comma-separated
};

// Fills every field left < 0 with the scenario's default (quick or full).
void applyDefaults(BenchConfig& config);

// The loopback address of the server's listener for client process `index`: 127.0.0.1, .2, ...
// Each client process connects to its own address, so the kernel picks ephemeral ports per
// destination: 20 000 connections to one address make every connect() scan for a free port
// (__inet_hash_connect / __inet_check_established led the profile and starved the loops).
std::string listenAddress(int index);

// H1 / H2 client processes, both implementations: when client process procIndex starts its
// ticks (the wheel's start, or the floor's first timerfd expiry). Process i ticks at i / P of a
// tick (P = clientProcs) past the steady clock's tick grid, so the P processes' bursts are spread
// over the tick as a fleet's are (each process's wheel starts when it does). Started together,
// their wheels would tick in step and every tick's bursts would reach the server at once, while
// the floor's clients, arming their timers only once connected, ticked apart: H2 compared a
// worst case with a spread one (README, "Heartbeats at scale"). Never more than a tick ahead.
std::chrono::steady_clock::time_point tickPhaseStart(const BenchConfig& config);

int serverMain(const BenchConfig& config);
int clientMain(const BenchConfig& config);
// The raw-epoll roles (raw_roles.cpp): the same replies; the raw client's stats also have
// "hb_skipped" (heartbeats not sent because the previous one's answer had not arrived).
int rawServerMain(const BenchConfig& config);
int rawClientMain(const BenchConfig& config);
int driverMain(const BenchConfig& config);

}  // namespace wheelbeat::bench::netbench
