// The server of the hostile-peers memory test (memory_test.cpp), as a process of its own so that it
// can run under an address-space limit: a TcpServer on 127.0.0.1 (an ephemeral port) answering
// every two-way request with "pong", which, once listening, limits its own address space to what
// it uses then plus --headroom-mib (RLIMIT_AS) and reports on stdout:
//   ready port=P baseline_kib=B limit_kib=L
//   stats accepted=A rejected=J open=O resource=R idle=I protocol=X other=Y
//         resource_text=<the first Resource close reason, or ->
// A "stats" line on stdin prints the stats; "quit" or EOF stops the server and the loop, prints
// the stats once more and exits 0 (1 if the loop did not close cleanly).
//
// Usage: wheelbeat_memory_server [--max-partial-bytes N] [--headroom-mib M] [--close-timeout-ms T]
#include <wheelbeat/net/net.h>

#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>

using namespace wheelbeat;
using namespace std::chrono_literals;

namespace {

struct Args {
  std::size_t maxPartialBytes = net::LoopOptions{}.maxPartialBytes;
  std::size_t headroomMib = 64;
  std::chrono::milliseconds closeTimeout{3000};
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const auto value = std::stoull(argv[i + 1]);
    if (flag == "--max-partial-bytes") {
      a.maxPartialBytes = value;
    } else if (flag == "--headroom-mib") {
      a.headroomMib = value;
    } else if (flag == "--close-timeout-ms") {
      a.closeTimeout = std::chrono::milliseconds(value);
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  return a;
}

// VmSize of this process in KiB (/proc/self/status).
std::size_t vmSizeKib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      std::size_t kib = 0;
      status >> kib;
      return kib;
    }
  }
  return 0;
}

class Closes {
public:
  void add(const net::CloseReason& why) {
    std::lock_guard lock(mutex_);
    switch (why.kind) {
      case net::CloseKind::Resource:
        if (resource_++ == 0) resourceText_ = why.text;
        break;
      case net::CloseKind::Idle: ++idle_; break;
      case net::CloseKind::Protocol: ++protocol_; break;
      default: ++other_; break;
    }
  }
  void print(const net::TcpServer& server) {
    std::lock_guard lock(mutex_);
    fmt::print(
        "stats accepted={} rejected={} open={} resource={} idle={} protocol={} other={} "
        "resource_text={}\n",
        server.accepted(), server.rejected(), server.connections(), resource_, idle_, protocol_,
        other_, resourceText_.empty() ? "-" : resourceText_);
    std::fflush(stdout);
  }

private:
  std::mutex mutex_;
  std::size_t resource_ = 0, idle_ = 0, protocol_ = 0, other_ = 0;
  std::string resourceText_;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  core::HashedWheelTimer timer(core::WheelOptions{.tickDuration = 10ms, .ticksPerWheel = 512});
  net::EventLoop loop("memory-server", net::LoopOptions{.maxPartialBytes = args.maxPartialBytes});
  Closes closes;
  net::ServerOptions so;
  so.listen = {"127.0.0.1", 0};
  so.heartbeat.interval = 1s;
  so.heartbeat.closeTimeout = args.closeTimeout;
  net::ChannelHandler handler;
  handler.onFrame = [](net::Channel& ch, const net::FrameView& f) {
    if (f.isRequest() && f.isTwoWay())
      (void)ch.send(f.serialization(), net::kStatusOk, f.id, "pong");
  };
  handler.onClosed = [&closes](net::Channel&, const net::CloseReason& why) { closes.add(why); };
  net::TcpServer server(loop, timer, so, std::move(handler));
  const std::uint16_t port = server.listen();
  // Both threads have allocated (their malloc arenas exist) before the baseline is taken.
  loop.call([] { static thread_local std::string warm(100000, 'x'); });
  timer.newTimeout([] {}, 1ms);
  const std::size_t baseline = vmSizeKib();
  const std::size_t limit = baseline + args.headroomMib * 1024;
  const rlimit rl{limit * 1024, limit * 1024};
  if (setrlimit(RLIMIT_AS, &rl) != 0) return 2;
  fmt::print("ready port={} baseline_kib={} limit_kib={}\n", port, baseline, limit);
  std::fflush(stdout);

  std::string line;
  while (std::getline(std::cin, line) && line != "quit") {
    if (line == "stats") closes.print(server);
  }
  server.stop();
  closes.print(server);
  return loop.stop() == 0 ? 0 : 1;
}
