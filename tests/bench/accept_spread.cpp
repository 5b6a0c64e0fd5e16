// wheelbeat_accept_spread: how a TcpServer on an EventLoopGroup spreads connections (the design
// note "Loop group" in tcp_server.h).
//   wheelbeat_accept_spread [--loops N] [--connections N] [--trials N]
// 1. Rate: one thread opens `connections` blocking loopback connections (kept open) and the
//    server's accepted() is awaited; prints connections/s and the per-loop counts.
// 2. Few connections: `trials` times, open `loops` connections at once, count the loops that got
//    one, close them; prints the share of trials where every loop got exactly one.
#include "command_line_cli11.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/net.h>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace wheelbeat;
using Clock = std::chrono::steady_clock;

struct Spread {
  std::mutex mutex;
  std::map<std::thread::id, int> perThread;  // connections whose onConnected ran there
};

int dial(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool waitUntil(const std::function<bool()>& pred) {
  const auto deadline = Clock::now() + 30s;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(200us);
  }
  return true;
}

std::vector<int> perLoop(net::EventLoopGroup& group, Spread& spread) {
  std::vector<std::thread::id> ids(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    // Not under spread.mutex: the loop may be waiting for it in onConnected.
    (void)group.at(i).call([&ids, i] { ids[i] = std::this_thread::get_id(); });
  }
  std::vector<int> counts(group.size(), 0);
  std::lock_guard lock(spread.mutex);
  for (std::size_t i = 0; i < group.size(); ++i) counts[i] = spread.perThread[ids[i]];
  return counts;
}

void closeAll(std::vector<int>& fds, net::TcpServer& server) {
  for (int fd : fds) ::close(fd);
  fds.clear();
  (void)waitUntil([&] { return server.connections() == 0; });
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t loops = 4;
  int connections = 1000;
  int trials = 200;
  wheelbeat::cli::CommandLine cmd(
      "wheelbeat_accept_spread",
      "usage: wheelbeat_accept_spread [--loops N] [--connections N] [--trials N]\n"
      "       wheelbeat_accept_spread --help | --version",
      "How a TcpServer on an EventLoopGroup spreads accepted connections over its loops: the "
      "accept rate of --connections loopback connections, then --trials rounds of one "
      "connection per loop. Exit status: 0 every connection was accepted, 1 otherwise, 2 bad "
      "usage.",
      "  wheelbeat_accept_spread --loops 4 --connections 1000\n");
  wheelbeat::cli::cli11App(cmd)
      .add_option("--loops", loops, "event loops in the group")
      ->check(CLI::Range(std::size_t{1}, net::kMaxIoThreads).description(""))
      ->capture_default_str();
  wheelbeat::cli::cli11App(cmd)
      .add_option("--connections", connections, "connections of the rate test")
      ->check(CLI::Range(1, 8000).description(""))
      ->capture_default_str();
  wheelbeat::cli::cli11App(cmd)
      .add_option("--trials", trials, "rounds of the few-connections test")
      ->check(CLI::Range(1, 100000).description(""))
      ->capture_default_str();
  if (const auto status = cmd.parse(argc, argv)) return *status;
  core::HashedWheelTimer timer;
  net::EventLoopGroup group(loops);
  Spread spread;
  net::ServerOptions options;
  options.listen = net::Endpoint{"127.0.0.1", 0};
  net::TcpServer server(group, timer, options,
                        net::ChannelHandler{.onConnected = [&](net::Channel&) {
                          std::lock_guard lock(spread.mutex);
                          ++spread.perThread[std::this_thread::get_id()];
                        }});
  const std::uint16_t port = server.listen();

  std::vector<int> fds;
  const auto start = Clock::now();
  for (int i = 0; i < connections; ++i) fds.push_back(dial(port));
  const bool all = waitUntil([&] { return server.accepted() == std::uint64_t(connections); });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::vector<int> counts = perLoop(group, spread);
  fmt::print(
      "loops={} connections={} all_accepted={} seconds={:.4f} rate={:.0f}/s "
      "per_loop=[{}] min={} max={}\n",
      loops, connections, all, seconds, connections / seconds, fmt::join(counts, ","),
      *std::min_element(counts.begin(), counts.end()),
      *std::max_element(counts.begin(), counts.end()));
  closeAll(fds, server);

  int perfect = 0;
  int idleLoops = 0;
  for (int t = 0; t < trials; ++t) {
    const std::vector<int> before = perLoop(group, spread);
    const std::uint64_t accepted = server.accepted();
    for (std::size_t i = 0; i < loops; ++i) fds.push_back(dial(port));
    (void)waitUntil([&] { return server.accepted() == accepted + loops; });
    const std::vector<int> after = perLoop(group, spread);
    int used = 0;
    for (std::size_t i = 0; i < loops; ++i) used += after[i] > before[i] ? 1 : 0;
    perfect += used == static_cast<int>(loops) ? 1 : 0;
    idleLoops += static_cast<int>(loops) - used;
    closeAll(fds, server);
  }
  fmt::print("loops={} few: trials={} every_loop_one={} ({:.1f}%) idle_loops_mean={:.2f}\n", loops,
             trials, perfect, 100.0 * perfect / trials, static_cast<double>(idleLoops) / trials);
  server.stop();
  return group.stop() == 0 && all ? 0 : 1;
}
