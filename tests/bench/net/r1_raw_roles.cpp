// R1's raw-epoll floor (r1.h): the wheelbeat roles' bytes and pipelining on plain sockets. One
// thread and one level-triggered epoll set per process, holding stdin (the driver's commands)
// and the sockets (raw_io.h). Frames are made with wheelbeat::net::encodeFrame (a pure function),
// so the bytes on the wire are exactly wheelbeat's.
//
// Server: one listener on listenAddress(0). Per readable event, one read(); each complete
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

constexpr int kBacklog = 4096;
constexpr int kAcceptsPerEvent = 64;
constexpr std::size_t kConnectBatch = 128;
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

class RawR1Server {
public:
  RawR1Server() {
    epoll_.add(STDIN_FILENO, EPOLLIN, Tag{Kind::Stdin, 0});
    listener_ = raw::listenOn(listenAddress(0), kBacklog, port_);
    epoll_.add(listener_.get(), EPOLLIN, Tag{Kind::Listener, 0});
    expected_.reserve(net::kHeaderSize);
    net::encodeFrame(expected_, kR1RequestFlags, 0, 0, std::string(kR1BodyBytes, '\0'));
  }

  [[nodiscard]] int port() const noexcept { return port_; }

  // Serves until stdin closes.
  void run() {
    for (bool open = true; open;) {
      for (const auto& e : epoll_.wait(-1)) open = handle(Epoll::tagOf(e)) && open;
    }
  }

private:
  struct Conn {
    UniqueFd fd;
    Cutter cutter;
  };

  bool handle(Tag tag) {
    switch (tag.kind) {
      case Kind::Stdin: return commands_.readAvailable([this](std::string_view c) { command(c); });
      case Kind::Listener: acceptSome(); return true;
      case Kind::Conn: serve(tag.index); return true;
      case Kind::Timer: return true;
    }
    return true;
  }

  void command(std::string_view command) {
    if (command != "stats") unknownCommand(command);
    Kv s = selfUsage();
    s["conns"] = open_;
    s["handled"] = handled_;
    s["errors"] = errors_;
    reply(formatKv("stats", s));
  }

  void acceptSome() {
    for (int i = 0; i < kAcceptsPerEvent; ++i) {
      UniqueFd fd = raw::acceptOne(listener_.get());
      if (!fd) return;
      const auto slot = static_cast<std::size_t>(fd.get());
      if (slot >= conns_.size()) conns_.resize(std::max(slot + 1, conns_.size() * 2));
      epoll_.add(fd.get(), EPOLLIN, Tag{Kind::Conn, static_cast<unsigned>(slot)});
      conns_[slot] = Conn{std::move(fd), {}};
      ++open_;
    }
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
      handled_ += answers;
      return;
    }
    if (n > 0) ++errors_;  // a bad frame or a short write; EOF is the client's normal end
    c = Conn{};            // closes the socket, which also leaves the epoll set
    --open_;
  }

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

  Epoll epoll_;
  raw::CommandReader commands_;
  UniqueFd listener_;
  int port_ = 0;
  std::string expected_;  // a request frame with id 0: the header bytes a request must have
  std::string out_;       // one read's responses (keeps its capacity)
  std::vector<Conn> conns_;
  std::int64_t open_ = 0;
  std::int64_t handled_ = 0;
  std::int64_t errors_ = 0;
};

}  // namespace

int r1RawServerMain(const BenchConfig& /*config*/) {
  const std::int64_t limit = raiseNofile(kServerReservedFds + 1);
  RawR1Server server;
  Kv ready = selfUsage();
  ready["port0"] = server.port();
  ready["capacity"] = serverCapacity(limit);
  reply(formatKv("ready", ready));
  server.run();
  return 0;
}

}  // namespace wheelbeat::bench::netbench
