// R1's raw-epoll floor (r1.h): the wheelbeat roles' bytes and pipelining on plain sockets.
// Level-triggered epoll sets holding stdin (the driver's commands) and the sockets (raw_io.h):
// the client has one thread; the server one per --loops (RawR1Server below). Frames are made with
// wheelbeat::net::encodeFrame (a pure function), so the bytes on the wire are exactly wheelbeat's.
//
// Server: one listener on listenAddress(0), connections spread over the threads as wheelbeat's
// EventLoopGroup spreads them over its loops. Per readable event, one read(); each complete
// request (checked: magic, two-way hessian2 request flags, status 0, 64-byte body) gets its
// response (hessian2, status 20, same id, the same body), and all of that read's responses
// leave in one write(). Anything else, EOF or an error: close (counted in "errors" unless EOF).
//
// Client: `conns` connections, connected in batches of 128; then `depth` requests on each (one
// write), and per readable event one read(): each response must be, byte for byte, the answer
// to the oldest request out on its connection (the server answers in order); it is timed and
// replaced by the next request, all of that read's requests in one write(). A mismatch, a short
// write, EOF: the connection is dropped (its requests out count in "closed", the cause in
// "errors"). No timeouts: nothing waits on a timer. "drain" stops new requests and replies once
// none is out (or after 10 s).
#include "r1.h"
#include "raw_io.h"
#include "rtt_histogram.h"

#include <wheelbeat/net/codec.h>

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using raw::Epoll;
using raw::Kind;
using raw::Tag;
using raw::UniqueFd;

constexpr int kBacklog = 4096;
constexpr int kAcceptsPerEvent = 64;
// One read takes what 16 requests in flight can have sent (1 280 bytes) several times over.
constexpr std::size_t kReadBytes = 16384;

using Cutter = raw::FixedFrameCutter<kR1FrameBytes>;

std::uint64_t idOf(std::string_view frame) noexcept {
  std::uint64_t id = 0;
  for (std::size_t i = 4; i < 12; ++i) id = (id << 8) | static_cast<std::uint8_t>(frame[i]);
  return id;
}

// One read(): the byte count, 0 at EOF or on an error, -1 if nothing was there after all.
ssize_t readSome(int fd, char* buf) {
  ssize_t n = -1;
  do {
    n = ::read(fd, buf, kReadBytes);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN ? -1 : 0;
  return n;
}

[[noreturn]] void unknownCommand(std::string_view command) {
  throw std::runtime_error(fmt::format("unknown command '{}'", command));
}

struct Conn {
  UniqueFd fd;
  Cutter cutter;
};

// One epoll thread's share of the connections, served as described at the top. Its counters are
// relaxed atomics: the stats command reads them from thread 0 (no ordering between them needed).
class Worker {
public:
  explicit Worker(std::vector<Conn>& conns) : conns_(conns) {
    expected_.reserve(net::kHeaderSize);
    net::encodeFrame(expected_, kR1RequestFlags, 0, 0, std::string(kR1BodyBytes, '\0'));
  }

  Epoll& epoll() noexcept { return epoll_; }

  // Thread 0: the connection in `slot` (already stored there) is this worker's from now on.
  void adopt(std::uint32_t slot) {
    open_.fetch_add(1, std::memory_order_relaxed);
    epoll_.add(conns_[slot].fd.get(), EPOLLIN, Tag{Kind::Conn, slot});
  }

  // Connections are indexed by their descriptor.
  void serve(std::uint32_t slot) {
    Conn& c = conns_[slot];
    if (!c.fd) return;
    char buf[kReadBytes];
    const ssize_t n = readSome(c.fd.get(), buf);
    if (n < 0) return;
    out_.clear();
    std::int64_t answers = 0;
    const bool framed =
        n > 0 && c.cutter.feed(std::string_view(buf, static_cast<std::size_t>(n)),
                               [&](std::string_view frame) { return answer(frame, answers); });
    const bool written = framed && (out_.empty() || raw::writeFrame(c.fd.get(), out_));
    if (written) {
      handled_.fetch_add(answers, std::memory_order_relaxed);
      return;
    }
    if (n > 0) errors_.fetch_add(1, std::memory_order_relaxed);  // EOF is the client's end
    // The slot is cleared before the descriptor closes: thread 0 may reuse both once it has.
    c.cutter = Cutter{};
    c.fd.reset();  // also leaves the epoll set
    open_.fetch_sub(1, std::memory_order_relaxed);
  }

  void addStats(Kv& s) const {
    s["conns"] += open_.load(std::memory_order_relaxed);
    s["handled"] += handled_.load(std::memory_order_relaxed);
    s["errors"] += errors_.load(std::memory_order_relaxed);
  }

private:
  // A request's header is the expected one but for its id; its body is echoed.
  bool answer(std::string_view frame, std::int64_t& answers) {
    if (frame.substr(0, 4) != std::string_view(expected_).substr(0, 4) ||
        frame.substr(12, 4) != std::string_view(expected_).substr(12, 4)) {
      return false;
    }
    net::encodeFrame(out_, net::kHessian2, net::kStatusOk, idOf(frame),
                     frame.substr(net::kHeaderSize));
    ++answers;
    return true;
  }

  std::vector<Conn>& conns_;
  Epoll epoll_;
  std::string expected_;  // a request frame with id 0: the header bytes a request must have
  std::string out_;       // one read's responses (keeps its capacity)
  std::atomic<std::int64_t> open_{0};
  std::atomic<std::int64_t> handled_{0};
  std::atomic<std::int64_t> errors_{0};
};

// `loops` epoll threads behind one listener, the shape of wheelbeat's EventLoopGroup server:
// thread 0 (the process's main thread) also reads stdin and accepts, and hands connection k to
// thread k mod loops. The descriptor table is shared and sized up front, so a hand-over is a
// store into the new descriptor's slot and an epoll_ctl on the receiving thread's set; from then
// on only that thread touches the slot, until it closes the descriptor.
class RawR1Server {
public:
  RawR1Server(int loops, std::int64_t nofileLimit)
      : conns_(static_cast<std::size_t>(std::min<std::int64_t>(nofileLimit, kMaxDescriptors))) {
    for (int i = 0; i < loops; ++i) workers_.push_back(std::make_unique<Worker>(conns_));
    Epoll& main = workers_[0]->epoll();
    main.add(STDIN_FILENO, EPOLLIN, Tag{Kind::Stdin, 0});
    listener_ = raw::listenOn(listenAddress(0), kBacklog, port_);
    main.add(listener_.get(), EPOLLIN, Tag{Kind::Listener, 0});
  }

  [[nodiscard]] int port() const noexcept { return port_; }

  // Serves until stdin closes, then stops and joins the other threads.
  void run() {
    std::vector<std::thread> threads;
    std::vector<UniqueFd> stops;
    for (std::size_t i = 1; i < workers_.size(); ++i) {
      stops.emplace_back(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
      if (!stops.back()) throw raw::sysError("eventfd");
      workers_[i]->epoll().add(stops.back().get(), EPOLLIN, Tag{Kind::Stdin, 0});
      threads.emplace_back([w = workers_[i].get()] { serveUntilStop(*w); });
    }
    for (bool open = true; open;) {
      for (const auto& e : workers_[0]->epoll().wait(-1)) open = handle(Epoll::tagOf(e)) && open;
    }
    for (auto& fd : stops) {
      const std::uint64_t one = 1;
      if (::write(fd.get(), &one, sizeof one) != sizeof one) throw raw::sysError("eventfd write");
    }
    for (auto& t : threads) t.join();
  }

private:
  // More descriptors than any R1 case opens (1 000 connections), and a bound on the table.
  static constexpr std::int64_t kMaxDescriptors = 65536;

  // Threads 1..loops-1: their connections until thread 0 signals the end (tagged Stdin: it is
  // the driver's end of input, relayed).
  static void serveUntilStop(Worker& w) {
    for (bool open = true; open;) {
      for (const auto& e : w.epoll().wait(-1)) {
        const Tag tag = Epoll::tagOf(e);
        if (tag.kind == Kind::Conn) w.serve(tag.index);
        if (tag.kind == Kind::Stdin) open = false;
      }
    }
  }

  bool handle(Tag tag) {
    switch (tag.kind) {
      case Kind::Stdin: return commands_.readAvailable([this](std::string_view c) { command(c); });
      case Kind::Listener: acceptSome(); return true;
      case Kind::Conn: workers_[0]->serve(tag.index); return true;
      case Kind::Timer: return true;
    }
    return true;
  }

  void command(std::string_view command) {
    if (command != "stats") unknownCommand(command);
    Kv s = selfUsage();
    s["conns"] = 0;
    s["handled"] = 0;
    s["errors"] = refused_;
    for (const auto& w : workers_) w->addStats(s);
    reply(formatKv("stats", s));
  }

  void acceptSome() {
    for (int i = 0; i < kAcceptsPerEvent; ++i) {
      UniqueFd fd = raw::acceptOne(listener_.get());
      if (!fd) return;
      const auto slot = static_cast<std::size_t>(fd.get());
      if (slot >= conns_.size()) {
        ++refused_;  // beyond the table: closed, and the run fails its self-check
        continue;
      }
      conns_[slot] = Conn{std::move(fd), {}};
      workers_[accepted_++ % workers_.size()]->adopt(static_cast<std::uint32_t>(slot));
    }
  }

  std::vector<Conn> conns_;  // by descriptor; never resized after the constructor
  std::vector<std::unique_ptr<Worker>> workers_;
  raw::CommandReader commands_;
  UniqueFd listener_;
  int port_ = 0;
  std::size_t accepted_ = 0;
  std::int64_t refused_ = 0;
};

}  // namespace

int r1RawServerMain(const BenchConfig& config) {
  const std::int64_t limit = raiseNofile(kServerReservedFds + 1);
  RawR1Server server(config.loops.at(0), limit);
  Kv ready = selfUsage();
  ready["port0"] = server.port();
  ready["capacity"] = serverCapacity(limit);
  reply(formatKv("ready", ready));
  server.run();
  return 0;
}

}  // namespace wheelbeat::bench::netbench
