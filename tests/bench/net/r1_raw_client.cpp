// R1's raw-epoll client (the floor's other half; r1_raw_roles.cpp has the file comment).
#include "r1.h"
#include "raw_io.h"
#include "rtt_histogram.h"

#include <wheelbeat/net/codec.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using raw::Epoll;
using raw::Kind;
using raw::Tag;
using raw::UniqueFd;

constexpr std::size_t kConnectBatch = 128;  // as the wheelbeat client
constexpr std::size_t kReadBytes = 16384;
constexpr auto kDrainBound = 10s;

// Cuts the answers, all of one size known at run time (raw bodies: kR1FrameBytes; hessian2: the
// header and r1HessianResponse()), from a connection's reads. A frame split across reads waits
// in `partial_`, whose capacity is kept: no allocation per frame after the first split one.
class Cutter {
public:
  template <class OnFrame>
  bool feed(std::string_view data, std::size_t size, OnFrame&& onFrame) {
    while (!data.empty()) {
      if (partial_.empty() && data.size() >= size) {
        if (!onFrame(data.substr(0, size))) return false;
        data.remove_prefix(size);
        continue;
      }
      const std::size_t take = std::min(size - partial_.size(), data.size());
      partial_.append(data.data(), take);
      data.remove_prefix(take);
      if (partial_.size() == size) {
        const bool ok = onFrame(std::string_view(partial_));
        partial_.clear();
        if (!ok) return false;
      }
    }
    return true;
  }

private:
  std::string partial_;
};

int msUntil(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1000));
}

struct Conn {
  UniqueFd fd;
  Cutter cutter;
  bool connected = false;
  std::uint64_t nextId = 0;               // of the next request sent
  std::uint64_t oldest = 0;               // of the oldest request out (== nextId: none out)
  std::vector<Clock::time_point> sentAt;  // per request out, at id % depth
};

class RawR1Client {
public:
  explicit RawR1Client(const BenchConfig& config)
      : config_(config),
        depth_(static_cast<std::size_t>(config.depth)),
        server_(raw::loopbackAddress(listenAddress(0), config.port)),
        body_(r1RequestBody(config.r1Bodies.at(0))),
        answer_(r1ResponseBody(config.r1Bodies.at(0))),
        answerFrameBytes_(net::kHeaderSize + answer_.size()) {
    epoll_.add(STDIN_FILENO, EPOLLIN, Tag{Kind::Stdin, 0});
  }

  // Connects every connection a batch at a time, answering commands meanwhile. Throws when a
  // connect fails or they are not all connected in time; false if stdin closed first.
  bool connectAll() {
    const auto deadline = Clock::now() + 30s + config_.conns * 5ms;
    conns_.resize(static_cast<std::size_t>(config_.conns));
    for (std::size_t started = 0; started < conns_.size();) {
      const std::size_t end = std::min(started + kConnectBatch, conns_.size());
      for (; started < end; ++started) {
        conns_[started].fd = raw::startConnect(server_);
        conns_[started].sentAt.resize(depth_);
        epoll_.add(conns_[started].fd.get(), EPOLLOUT,
                   Tag{Kind::Conn, static_cast<unsigned>(started)});
      }
      while (connected_ < static_cast<std::int64_t>(started)) {
        if (Clock::now() >= deadline) {
          throw std::runtime_error(
              fmt::format("R1 raw client: {} of {} connected in time", connected_, started));
        }
        if (!pump(msUntil(deadline))) return false;
      }
    }
    return true;
  }

  // `depth` requests on every connection, one write each; then serves until stdin closes.
  void run() {
    const auto now = Clock::now();
    for (auto& c : conns_) {
      out_.clear();
      for (std::size_t d = 0; d < depth_; ++d) queueRequest(c, now);
      flush(c);
    }
    for (bool open = true; open;) {
      open = pump(draining_ ? msUntil(drainDeadline_) : -1);
      if (draining_ && (inFlight_ == 0 || Clock::now() >= drainDeadline_)) {
        draining_ = false;
        reply(formatKv("drained", stats()));
      }
    }
  }

private:
  bool pump(int timeoutMs) {
    bool open = true;
    for (const auto& e : epoll_.wait(timeoutMs)) open = handle(Epoll::tagOf(e)) && open;
    return open;
  }

  bool handle(Tag tag) {
    switch (tag.kind) {
      case Kind::Stdin: return commands_.readAvailable([this](std::string_view c) { command(c); });
      case Kind::Conn: onSocket(conns_[tag.index], tag.index); return true;
      case Kind::Timer:
      case Kind::Listener: return true;
    }
    return true;
  }

  void command(std::string_view command) {
    if (command == "rtt") return reply(formatCounts(rtt_.snapshot()));
    if (command == "stats") return reply(formatKv("stats", stats()));
    if (command != "drain") unknownCommand(command);
    stopping_ = true;
    draining_ = true;  // run() replies once nothing is out
    drainDeadline_ = Clock::now() + kDrainBound;
  }

  [[noreturn]] static void unknownCommand(std::string_view command) {
    throw std::runtime_error(fmt::format("unknown command '{}'", command));
  }

  Kv stats() const {
    Kv s = selfUsage();
    s["connected"] = connected_;
    s["sent"] = sent_;
    s["answered"] = answered_;
    s["timeouts"] = 0;  // nothing waits on a timer
    s["closed"] = closed_;
    s["errors"] = errors_;
    s["in_flight"] = inFlight_;
    return s;
  }

  void onSocket(Conn& c, std::uint32_t index) {
    if (!c.fd) return;  // dropped earlier in this batch of events
    if (c.connected) return receive(c);
    if (const int error = raw::connectResult(c.fd.get()); error != 0) {
      throw std::runtime_error(
          fmt::format("connect {}:{}: {}", listenAddress(0), config_.port, std::strerror(error)));
    }
    c.connected = true;
    ++connected_;
    epoll_.modify(c.fd.get(), EPOLLIN, Tag{Kind::Conn, index});
  }

  // One read; each answer settles the oldest request out and queues the next one; one write.
  void receive(Conn& c) {
    char buf[kReadBytes];
    ssize_t n = -1;
    do {
      n = ::read(c.fd.get(), buf, kReadBytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return;
    const auto now = Clock::now();
    out_.clear();
    const bool ok = n > 0 && c.cutter.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                                           answerFrameBytes_,
                                           [&](std::string_view f) { return settle(c, f, now); });
    if (!ok) {
      if (n != 0 || c.oldest != c.nextId) ++errors_;  // EOF with nothing out is no error
      return drop(c);
    }
    flush(c);
  }

  bool settle(Conn& c, std::string_view frame, Clock::time_point now) {
    if (c.oldest == c.nextId) return false;  // an answer to nothing
    expected_.clear();
    net::encodeFrame(expected_, net::kHessian2, net::kStatusOk, c.oldest, answer_);
    if (frame != expected_) return false;
    rtt_.record(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - c.sentAt[c.oldest % depth_])
            .count());
    ++c.oldest;
    ++answered_;
    --inFlight_;
    if (!stopping_) queueRequest(c, now);
    return true;
  }

  void queueRequest(Conn& c, Clock::time_point now) {
    c.sentAt[c.nextId % depth_] = now;
    net::encodeFrame(out_, kR1RequestFlags, 0, c.nextId++, body_);
    ++sent_;
    ++inFlight_;
  }

  void flush(Conn& c) {
    if (out_.empty() || raw::writeFrame(c.fd.get(), out_)) return;
    ++errors_;
    drop(c);
  }

  void drop(Conn& c) {
    const auto out = static_cast<std::int64_t>(c.nextId - c.oldest);
    closed_ += out;
    inFlight_ -= out;
    c = Conn{};  // closes the socket, which also leaves the epoll set
    --connected_;
  }

  const BenchConfig& config_;
  const std::size_t depth_;
  const sockaddr_in server_;
  const std::string body_;    // every request's body
  const std::string answer_;  // every answer's body (raw: body_ echoed)
  const std::size_t answerFrameBytes_;
  Epoll epoll_;
  raw::CommandReader commands_;
  std::vector<Conn> conns_;
  RttHistogram rtt_;
  std::string out_;       // one read's next requests (keeps its capacity)
  std::string expected_;  // the answer awaited (keeps its capacity)
  bool stopping_ = false;
  bool draining_ = false;
  Clock::time_point drainDeadline_;
  std::int64_t connected_ = 0;
  std::int64_t sent_ = 0;
  std::int64_t answered_ = 0;
  std::int64_t closed_ = 0;
  std::int64_t errors_ = 0;
  std::int64_t inFlight_ = 0;
};

}  // namespace

int r1RawClientMain(const BenchConfig& config) {
  raiseNofile(config.conns + 64);
  RawR1Client client(config);
  reply(formatKv("ready", selfUsage()));
  if (!client.connectAll()) return 0;
  reply(formatKv("connected", Kv{{"n", config.conns}}));
  client.run();
  return 0;
}

}  // namespace wheelbeat::bench::netbench
