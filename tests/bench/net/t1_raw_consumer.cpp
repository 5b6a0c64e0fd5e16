// T0's floor (t1_raw_consumer.h).
#include "t1_raw_consumer.h"

#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace wheelbeat::bench::netbench {
namespace {

constexpr std::uint32_t kStopIndex = 0xffffffff;

raw::UniqueFd connectTo(std::uint16_t port) {
  raw::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw raw::sysError("socket");
  const timeval tv{.tv_sec = 10, .tv_usec = 0};
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const sockaddr_in to = raw::loopbackAddress("127.0.0.1", port);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    throw raw::sysError(fmt::format("connect to 127.0.0.1:{}", port));
  }
  const int one = 1;
  (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

struct RawConsumer::Conn {
  raw::UniqueFd fd;
  net::FrameDecoder decoder;
};

RawConsumer::RawConsumer(const std::vector<std::uint16_t>& ports)
    : stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!stop_) throw raw::sysError("eventfd");
  epoll_.add(stop_.get(), EPOLLIN, raw::Tag{raw::Kind::Stdin, kStopIndex});
  for (const std::uint16_t port : ports) {
    auto conn = std::make_unique<Conn>();
    conn->fd = connectTo(port);
    epoll_.add(conn->fd.get(), EPOLLIN,
               raw::Tag{raw::Kind::Conn, static_cast<std::uint32_t>(conns_.size())});
    conns_.push_back(std::move(conn));
  }
  if (conns_.empty()) throw std::invalid_argument("RawConsumer: no provider port");
  reader_ = std::thread([this] { read(); });
}

RawConsumer::~RawConsumer() {
  const std::uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (reader_.joinable()) reader_.join();
  failAll();
}

void RawConsumer::call(const std::string& body, const cluster::CallOptions& /*options*/,
                       cluster::CallDone done) {
  const std::uint64_t id = nextId_++;
  {
    const std::lock_guard lock(mutex_);
    pending_.emplace(id, std::move(done));
  }
  out_.clear();
  net::encodeFrame(out_, net::flag::kRequest | net::flag::kTwoWay | net::kHessian2, 0, id, body);
  Conn& conn = *conns_[next_++ % conns_.size()];
  const ssize_t n = ::send(conn.fd.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
  if (n == static_cast<ssize_t>(out_.size())) return;
  cluster::CallDone failed;
  {
    const std::lock_guard lock(mutex_);
    const auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered already (cannot be: nothing was sent whole)
    failed = std::move(it->second);
    pending_.erase(it);
  }
  cluster::CallOutcome o;
  o.error = std::string(tasks::errors::kDisconnected);
  o.attempts = 1;
  failed(o);
}

void RawConsumer::answer(const net::FrameView& frame) {
  if (frame.isRequest() || frame.isEvent()) return;  // a heartbeat: the provider is not idle
  cluster::CallDone done;
  {
    const std::lock_guard lock(mutex_);
    const auto it = pending_.find(frame.id);
    if (it == pending_.end()) return;
    done = std::move(it->second);
    pending_.erase(it);
  }
  cluster::CallOutcome o;
  o.ok = frame.status == net::kStatusOk;
  if (!o.ok) o.error = "rejected";
  o.attempts = 1;
  done(o);
}

void RawConsumer::read() {
  struct Sink : net::FrameSink {
    RawConsumer* self;
    bool onFrame(const net::FrameView& f) override {
      self->answer(f);
      return true;
    }
  } sink;
  sink.self = this;
  std::array<char, 65536> buffer{};
  for (;;) {
    for (const epoll_event& e : epoll_.wait(1000)) {
      const raw::Tag tag = raw::Epoll::tagOf(e);
      if (tag.index == kStopIndex) return;
      Conn& conn = *conns_[tag.index];
      const ssize_t n = ::read(conn.fd.get(), buffer.data(), buffer.size());
      if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        epoll_.modify(conn.fd.get(), 0, tag);  // closed: its calls end in the destructor
        continue;
      }
      (void)conn.decoder.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), sink);
    }
  }
}

void RawConsumer::failAll() {
  std::unordered_map<std::uint64_t, cluster::CallDone> left;
  {
    const std::lock_guard lock(mutex_);
    left.swap(pending_);
  }
  cluster::CallOutcome o;
  o.error = std::string(tasks::errors::kDisconnected);
  o.attempts = 1;
  for (auto& [id, done] : left) done(o);
}

}  // namespace wheelbeat::bench::netbench
