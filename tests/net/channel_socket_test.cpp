// The socket stage (net/src/channel/socket.h) on one end of a local socket pair: attach, the
// direct and the queued write, the descriptor behind hasUnreadInput(), close.
#include "channel_core.h"
#include "support.h"

#include <sys/socket.h>

#include <memory>

namespace wbnet {

using wheelbeat::net::detail::ChannelConfig;
using wheelbeat::net::detail::ChannelCore;
using wheelbeat::net::detail::ChannelSocket;
using wheelbeat::net::detail::Stream;

namespace {

// The Stream's owner: its own socket stage never holds the stream under test, so reads that
// reach it are ignored; its write completions are counted in `counters`.
class OwnerChannel final : public ChannelCore {
public:
  explicit OwnerChannel(const ChannelConfig& config) : ChannelCore(config) {}
  void reconnect(std::string_view) override {}
  void close(std::string_view) override {}
};

struct Pair {
  Env env;
  int fds[2] = {-1, -1};
  std::shared_ptr<ChannelMetrics> counters = std::make_shared<ChannelMetrics>();
  wheelbeat::tasks::HeartbeatOptions heartbeat;
  std::shared_ptr<OwnerChannel> owner;
  ChannelSocket socket;
  Stream* stream = nullptr;

  Pair() {
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    owner = std::make_shared<OwnerChannel>(
        ChannelConfig{env.loop, env.timer, nullptr, {}, 1 << 20, heartbeat, counters});
  }
  ~Pair() {
    if (fds[1] >= 0) ::close(fds[1]);
  }
  // On the loop thread: a Stream over fds[0], attached to `socket`.
  void attach() {
    stream = Stream::create(env.loop.native(), owner, CodecOptions{});
    REQUIRE(uv_tcp_open(stream->tcp(), fds[0]) == 0);
    fds[0] = -1;  // the stream owns it
    CHECK_FALSE(static_cast<bool>(socket.attach(*stream)));
  }
  std::string peerRead() {
    char buf[256];
    const ssize_t n = ::recv(fds[1], buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
};

}  // namespace

TEST_SUITE("net") {

TEST_CASE("socket: attach connects and a direct write reaches the peer") {
  Pair p;
  CHECK(p.env.loop.call([&] {
    CHECK_FALSE(p.socket.isConnected());
    CHECK_FALSE(p.socket.writable());
    p.attach();
    CHECK(p.socket.isConnected());
    CHECK(p.socket.writable());
    CHECK(p.socket.current() == p.stream);
    char data[] = "hello";
    CHECK(p.socket.tryWrite(data, 5) == 5);
    CHECK(p.peerRead() == "hello");
    p.socket.released(*p.stream);  // not closed: released() of the current stream still clears it
    CHECK(p.socket.current() == nullptr);
    CHECK_FALSE(p.socket.isConnected());
    p.stream->close(CloseReason{CloseKind::ClosedByOwner, {}, "test over"});
  }));
}

TEST_CASE("socket: unread input is seen until the descriptor is forgotten") {
  Pair p;
  CHECK(p.env.loop.call([&] {
    p.attach();
    CHECK_FALSE(p.socket.hasUnreadInput());
    REQUIRE(::send(p.fds[1], "ping", 4, 0) == 4);
    CHECK(p.socket.hasUnreadInput());  // the loop cannot read while this call runs
    p.socket.forgetDescriptor(*p.stream);
    CHECK_FALSE(p.socket.hasUnreadInput());
    p.socket.close(*p.stream, CloseReason{CloseKind::ClosedByOwner, {}, "test over"});
    CHECK_FALSE(p.socket.isConnected());
    CHECK_FALSE(p.socket.writable());  // closing
    p.socket.released(*p.stream);
  }));
}

TEST_CASE("socket: a queued write reaches the peer and its completion goes to the owner") {
  Pair p;
  CHECK(p.env.loop.call([&] {
    p.attach();
    CHECK(p.socket.queueWrite(std::string("queued")) == 0);
  }));
  std::string got;
  CHECK(waitFor([&] {
    got += p.peerRead();
    return got.size() >= 6;
  }));
  CHECK(got == "queued");
  CHECK(waitFor([&] { return p.counters->bytesOut.load() == 6; }));
  CHECK(p.env.loop.call([&] {
    CHECK(p.socket.closeCurrent(CloseReason{CloseKind::ClosedByOwner, {}, "test over"}));
    p.socket.released(*p.stream);
    CHECK_FALSE(p.socket.closeCurrent(CloseReason{CloseKind::ClosedByOwner, {}, "again"}));
  }));
}

TEST_CASE("socket: closed for good once") {
  ChannelSocket socket;
  CHECK_FALSE(socket.isClosed());
  CHECK(socket.markClosed());
  CHECK_FALSE(socket.markClosed());
  CHECK(socket.isClosed());
}

}  // TEST_SUITE("net")

}  // namespace wbnet
