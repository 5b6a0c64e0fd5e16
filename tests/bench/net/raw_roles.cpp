// --role server|client --impl raw: the raw-epoll floor (net_bench.h). The wheelbeat roles'
// workload and pipe replies with nothing but syscalls: one thread per process, one
// level-triggered epoll set holding stdin (the driver's commands, answered between socket events),
// the sockets and, in the client, a timerfd for the ticks. No libuv, no timer wheel, no tasks.
//
// Server: one listener per client process on listenAddress(i), port 0 (reported in "ready"),
// capacity as the wheelbeat server computes it. Each complete heartbeat request read is answered
// at once by one write() of the heartbeat response. EOF, an error, or a frame that is not a
// heartbeat request: close, counted in other_closes. No idle detection: idle_closes is always 0.
//
// Client: `conns` connections, connected in batches of 128 like the wheelbeat client, within
// 30 s + 5 ms per connection. Then a timerfd every tick: connection i sends its heartbeat request
// (one write()) on the ticks where tick % P == i % P, P = heartbeat / tick, so each connection
// sends once per heartbeat period and the sends come in bursts on the ticks, as the wheel's
// expirations do. The round trip is steady-clock time from just before the write to just after
// the read that completed the answer. A connection whose previous answer has not arrived does
// not send (counted in hb_skipped). Nothing reconnects: a closed connection counts in
// disconnects and stays closed.
//
// Their stats lines carry the wheelbeat roles' keys (loop_wakeups 0: no other thread posts to
// the loop; reconnects 0) and a few of their own: epoll_waits, hb_answered (server), hb_skipped
// (client). Both run until their stdin closes (the driver's finish(); PR_SET_PDEATHSIG covers
// the driver's death).
#include "net_bench.h"
#include "proto.h"
#include "raw_io.h"
#include "rtt_histogram.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using raw::Epoll;
using raw::Kind;
using raw::Tag;
using raw::UniqueFd;

constexpr int kBacklog = 4096;  // as the wheelbeat server (serverOptions() in server_role.cpp)
constexpr int kAcceptsPerEvent = 64;  // then back to epoll: established sockets are served too
constexpr int kConnectBatch = 128;    // as the wheelbeat client
constexpr std::size_t kReadBytes = 4096;

[[noreturn]] void unknownCommand(std::string_view command) {
  throw std::runtime_error(fmt::format("unknown command '{}'", command));
}

int msUntil(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1000));
}

// One read of what the socket holds (level-triggered: the rest comes with the next event).
// Returns the byte count, 0 at EOF or on an error, -1 if nothing was there after all.
ssize_t readSome(int fd, char* buf) {
  ssize_t n = -1;
  do {
    n = ::read(fd, buf, kReadBytes);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN ? -1 : 0;
  return n;
}

struct ServerConn {
  UniqueFd fd;
  raw::FrameCutter cutter;
};

class RawServer {
public:
  explicit RawServer(const BenchConfig& config) {
    epoll_.add(STDIN_FILENO, EPOLLIN, Tag{Kind::Stdin, 0});
    for (int i = 0; i < config.clientProcs; ++i) {
      int port = 0;
      listeners_.push_back(raw::listenOn(listenAddress(i), kBacklog, port));
      ports_.push_back(port);
      epoll_.add(listeners_.back().get(), EPOLLIN, Tag{Kind::Listener, static_cast<unsigned>(i)});
    }
  }

  Kv ready(std::int64_t nofileLimit) const {
    Kv r = selfUsage();
    for (std::size_t i = 0; i < ports_.size(); ++i) r[fmt::format("port{}", i)] = ports_[i];
    r["capacity"] = serverCapacity(nofileLimit);
    return r;
  }

  // Serves until stdin closes.
  void run() {
    for (bool open = true; open;) {
      ++waits_;
      for (const auto& e : epoll_.wait(-1)) open = handle(Epoll::tagOf(e)) && open;
    }
  }

private:
  // False once stdin is closed.
  bool handle(Tag tag) {
    switch (tag.kind) {
      case Kind::Stdin: return commands_.readAvailable([this](std::string_view c) { command(c); });
      case Kind::Listener: acceptSome(listeners_[tag.index].get()); return true;
      case Kind::Conn: serve(tag.index); return true;
      case Kind::Timer: return true;
    }
    return true;
  }

  void command(std::string_view command) {
    if (command != "stats") unknownCommand(command);
    Kv s = selfUsage();
    s["conns"] = open_;
    s["accepted"] = accepted_;
    s["idle_closes"] = 0;
    s["other_closes"] = otherCloses_;
    s["loop_wakeups"] = 0;  // no thread posts to the loop: there is no other thread
    s["epoll_waits"] = waits_;
    s["hb_answered"] = answered_;
    reply(formatKv("stats", s));
  }

  void acceptSome(int listener) {
    for (int i = 0; i < kAcceptsPerEvent; ++i) {
      UniqueFd fd = raw::acceptOne(listener);
      if (!fd) return;
      const auto slot = static_cast<std::size_t>(fd.get());
      if (slot >= conns_.size()) conns_.resize(std::max(slot + 1, conns_.size() * 2));
      epoll_.add(fd.get(), EPOLLIN, Tag{Kind::Conn, static_cast<unsigned>(slot)});
      conns_[slot] = ServerConn{std::move(fd), {}};
      ++open_;
      ++accepted_;
    }
  }

  // Connections are indexed by their descriptor.
  void serve(std::uint32_t slot) {
    ServerConn& c = conns_[slot];
    if (!c.fd) return;  // closed earlier in this batch of events
    char buf[kReadBytes];
    const ssize_t n = readSome(c.fd.get(), buf);
    if (n < 0) return;
    const bool ok =
        n > 0 && c.cutter.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                               [&](std::string_view frame) { return answer(c, frame); });
    if (ok) return;
    c = ServerConn{};  // closes the socket, which also leaves the epoll set
    --open_;
    ++otherCloses_;
  }

  bool answer(const ServerConn& c, std::string_view frame) {
    const auto id = frames_.requestId(frame);
    if (!id || !raw::writeFrame(c.fd.get(), frames_.response(*id))) return false;
    ++answered_;
    return true;
  }

  Epoll epoll_;
  raw::CommandReader commands_;
  raw::HeartbeatFrames frames_;
  std::vector<UniqueFd> listeners_;
  std::vector<int> ports_;
  std::vector<ServerConn> conns_;
  std::int64_t open_ = 0;
  std::int64_t accepted_ = 0;
  std::int64_t otherCloses_ = 0;
  std::int64_t answered_ = 0;
  std::int64_t waits_ = 0;
};

struct ClientConn {
  UniqueFd fd;
  raw::FrameCutter cutter;
  bool connected = false;
  bool awaiting = false;  // a heartbeat is out, its answer not in yet
  std::uint64_t id = 0;   // of that heartbeat
  Clock::time_point sentAt;
  Clock::time_point decidedAt;  // the tick that sent it (its burst's start)
};

class RawClient {
public:
  explicit RawClient(const BenchConfig& config)
      : config_(config),
        server_(raw::loopbackAddress(listenAddress(config.procIndex), config.port)),
        period_(static_cast<std::size_t>(std::max(1, config.heartbeatMs / config.tickMs))) {
    epoll_.add(STDIN_FILENO, EPOLLIN, Tag{Kind::Stdin, 0});
  }

  // Connects every connection, a batch at a time, answering commands meanwhile. Throws when a
  // connect fails or they are not all connected in time; false if stdin closed first.
  bool connectAll() {
    const auto deadline = Clock::now() + 30s + config_.conns * 5ms;
    // Allocated here, after "ready": the per-connection state is part of the per-connection RSS.
    conns_.resize(static_cast<std::size_t>(config_.conns));
    for (std::size_t started = 0; started < conns_.size();) {
      started = startBatch(started);
      while (connected_ < static_cast<std::int64_t>(started)) {
        if (Clock::now() >= deadline) {
          throw std::runtime_error(fmt::format("client process {}: {} of {} connected in time",
                                               config_.procIndex, connected_, started));
        }
        if (!pump(msUntil(deadline))) return false;
      }
    }
    return true;
  }

  void startHeartbeats() {
    timer_ = raw::periodicTimer(config_.tickMs, tickPhaseStart(config_));
    epoll_.add(timer_.get(), EPOLLIN, Tag{Kind::Timer, 0});
  }

  // Runs until stdin closes.
  void run() {
    while (pump(-1)) {
    }
  }

private:
  // One epoll wait and its events. False once stdin is closed.
  bool pump(int timeoutMs) {
    ++waits_;
    bool open = true;
    for (const auto& e : epoll_.wait(timeoutMs)) open = handle(Epoll::tagOf(e)) && open;
    return open;
  }

  bool handle(Tag tag) {
    switch (tag.kind) {
      case Kind::Stdin: return commands_.readAvailable([this](std::string_view c) { command(c); });
      case Kind::Timer: onTick(); return true;
      case Kind::Conn: onSocket(conns_[tag.index], tag.index); return true;
      case Kind::Listener: return true;
    }
    return true;
  }

  void command(std::string_view command) {
    if (command == "rtt") return reply(formatCounts(rtt_.snapshot()));
    if (command == "rtt-decision") return reply(formatCounts(rttDecision_.snapshot()));
    if (command != "stats") unknownCommand(command);
    Kv s = selfUsage();
    s["connected"] = connected_;
    s["disconnects"] = disconnects_;
    s["hb_sent"] = sent_;
    s["hb_skipped"] = skipped_;
    s["reconnects"] = 0;
    s["rtt_samples"] = samples_;
    s["loop_wakeups"] = 0;  // no thread posts to the loop: there is no other thread
    s["epoll_waits"] = waits_;
    reply(formatKv("stats", s));
  }

  std::size_t startBatch(std::size_t started) {
    const std::size_t end = std::min(started + kConnectBatch, conns_.size());
    for (std::size_t i = started; i < end; ++i) {
      conns_[i].fd = raw::startConnect(server_);
      // Writable = the handshake is over (or failed): then the socket waits for answers.
      epoll_.add(conns_[i].fd.get(), EPOLLOUT, Tag{Kind::Conn, static_cast<unsigned>(i)});
    }
    return end;
  }

  void onSocket(ClientConn& c, std::uint32_t index) {
    if (!c.fd) return;  // closed earlier in this batch of events
    if (c.connected) return receive(c);
    if (const int error = raw::connectResult(c.fd.get()); error != 0) {
      throw std::runtime_error(fmt::format("connect {}:{}: {}", listenAddress(config_.procIndex),
                                           config_.port, std::strerror(error)));
    }
    c.connected = true;
    ++connected_;
    epoll_.modify(c.fd.get(), EPOLLIN, Tag{Kind::Conn, index});
  }

  void receive(ClientConn& c) {
    char buf[kReadBytes];
    const ssize_t n = readSome(c.fd.get(), buf);
    if (n < 0) return;
    const auto now = Clock::now();
    const bool ok =
        n > 0 && c.cutter.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                               [&](std::string_view frame) { return settle(c, frame, now); });
    if (!ok) drop(c);
  }

  // The answer to the heartbeat out, or a protocol error (false: the connection is dropped).
  bool settle(ClientConn& c, std::string_view frame, Clock::time_point now) {
    const auto id = frames_.responseId(frame);
    if (!id || !c.awaiting || *id != c.id) return false;
    c.awaiting = false;
    rtt_.record(std::chrono::duration_cast<std::chrono::nanoseconds>(now - c.sentAt).count());
    rttDecision_.record(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - c.decidedAt).count());
    ++samples_;
    return true;
  }

  void drop(ClientConn& c) {
    c = ClientConn{};  // closes the socket, which also leaves the epoll set
    --connected_;
    ++disconnects_;
  }

  // A loop that fell behind catches up on the ticks it missed, each connection at most once.
  void onTick() {
    const std::uint64_t expired = raw::readExpirations(timer_.get());
    const std::uint64_t catchUp = std::min<std::uint64_t>(expired, period_);
    tickAt_ = Clock::now();  // the decision, as the wheel's tick is wheelbeat's
    for (std::uint64_t k = 0; k < catchUp; ++k) sendSlot(++tick_ % period_);
    tick_ += expired - catchUp;
  }

  void sendSlot(std::uint64_t slot) {
    for (auto i = static_cast<std::size_t>(slot); i < conns_.size(); i += period_) send(conns_[i]);
  }

  void send(ClientConn& c) {
    if (!c.connected) return;  // dropped: already counted in disconnects
    if (c.awaiting) {
      ++skipped_;
      return;
    }
    c.id = nextId_++;
    c.decidedAt = tickAt_;
    c.sentAt = Clock::now();
    if (!raw::writeFrame(c.fd.get(), frames_.request(c.id))) return drop(c);
    c.awaiting = true;
    ++sent_;
  }

  const BenchConfig& config_;
  const sockaddr_in server_;
  const std::size_t period_;  // ticks per heartbeat period
  Epoll epoll_;
  UniqueFd timer_;
  raw::CommandReader commands_;
  raw::HeartbeatFrames frames_;
  std::vector<ClientConn> conns_;
  Clock::time_point tickAt_;  // when the current tick's sends began
  RttHistogram rtt_;          // from each request's write
  RttHistogram rttDecision_;  // from its tick
  std::uint64_t tick_ = 0;
  std::uint64_t nextId_ = 1;
  std::int64_t connected_ = 0;
  std::int64_t disconnects_ = 0;
  std::int64_t sent_ = 0;
  std::int64_t skipped_ = 0;
  std::int64_t samples_ = 0;
  std::int64_t waits_ = 0;
};

}  // namespace

int rawServerMain(const BenchConfig& config) {
  const std::int64_t limit = raiseNofile(kServerReservedFds + 1);
  RawServer server(config);
  reply(formatKv("ready", server.ready(limit)));
  server.run();
  return 0;
}

int rawClientMain(const BenchConfig& config) {
  raiseNofile(config.conns + 64);
  RawClient client(config);
  reply(formatKv("ready", selfUsage()));
  if (!client.connectAll()) return 0;
  reply(formatKv("connected", Kv{{"n", config.conns}}));
  client.startHeartbeats();
  client.run();
  return 0;
}

}  // namespace wheelbeat::bench::netbench
