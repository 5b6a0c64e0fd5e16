// wheelbeat_net_bench: heartbeat-at-scale benchmarks H1 and H2 over loopback TCP.
//
// One binary, three roles. The driver (no --role) spawns a server process and client processes
// (this binary again, --role server|client) and talks to each over a pipe pair: the child's
// stdin carries commands ("stats", "rtt", "quit"), its stdout one reply line per command (see
// kv_line.h). Separate processes keep CPU and RSS per process, as a deployment would see them.
// Each process runs one EventLoop and one shared HashedWheelTimer: the library's model.
#pragma once

#include <string>

namespace wheelbeat::bench::netbench {

enum class Scenario { H1, H2 };

struct BenchConfig {
  Scenario scenario = Scenario::H1;
  // < 0: the scenario's default. H2: 0 = as many as the server process can hold.
  int conns = -1;
  double windowS = -1;
  double warmupS = -1;
  int clientProcs = -1;
  // 100 ms is the wheel's (and Netty's) default tick: what a production user runs. A 1 s
  // heartbeat checks every 333 ms, i.e. every 4th tick, so a finer tick buys nothing here.
  int tickMs = 100;
  int heartbeatMs = 1000;
  bool quick = false;
  bool selfCheck = false;

  // Children only (set by the driver).
  std::string role;  // "server" | "client"
  int port = 0;
  int procIndex = 0;
};

// Fills every field left < 0 with the scenario's default (quick or full).
void applyDefaults(BenchConfig& config);

// The loopback address of the server's listener for client process `index`: 127.0.0.1, .2, ...
// Each client process connects to its own address, so the kernel picks ephemeral ports per
// destination: 20 000 connections to one address make every connect() scan for a free port
// (__inet_hash_connect / __inet_check_established led the profile and starved the loops).
std::string listenAddress(int index);

int serverMain(const BenchConfig& config);
int clientMain(const BenchConfig& config);
int driverMain(const BenchConfig& config);

}  // namespace wheelbeat::bench::netbench
