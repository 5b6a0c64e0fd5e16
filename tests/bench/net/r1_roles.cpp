// R1's wheelbeat roles (r1.h): a TcpServer whose handler echoes each request's body in its
// reply (hessian2 bodies: a dubbo::Provider serving echo(String)), and a client process of
// `conns` TcpClients keeping `depth` Channel::request() calls in flight on each.
//
// Threads: the main thread reads the driver's commands from stdin; the handlers and the request
// callbacks run on the loop thread(s). The server's counters are relaxed atomics (the driver
// reads them between two snapshots: no ordering between counters is needed). The client issues
// every request on its loop thread, which alone writes its counters: a relaxed load and store
// each, no locked instruction per request (four per request cost this client what the raw
// client, single-threaded with plain counters, does not pay); drain() synchronises through the
// loop and the mutex (see there).
#include "r1.h"
#include "rtt_histogram.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kConnectBatch = 128;  // as H1's client

struct ServerCounters {
  std::atomic<std::int64_t> handled{0};
  std::atomic<std::int64_t> refused{0};
};

// Every two-way application request gets its body back (64 bytes out as in), or with `answer`
// set (raw-sized bodies) that body: the hessian2 response's length, nothing decoded.
net::ChannelHandler echoHandler(const std::shared_ptr<ServerCounters>& c, std::string answer = {}) {
  return net::ChannelHandler{
      .onConnected = {},
      .onFrame =
          [c, answer = std::move(answer)](net::Channel& ch, const net::FrameView& f) {
            if (!f.isRequest() || !f.isTwoWay() || f.isEvent()) return;
            const std::string_view body = answer.empty() ? f.body : std::string_view(answer);
            auto& counter = ch.reply(f, body) == net::SendResult::Queued ? c->handled : c->refused;
            counter.fetch_add(1, std::memory_order_relaxed);
          },
      .onClosed = {},
  };
}

// The server side of one R1 case: `loops` event loops behind one listener. Everything that
// depends on the loop count is in here, so that switching to net::EventLoopGroup (N loops,
// TcpServer(EventLoopGroup&, ...)) touches this class and r1ServerSupportsLoops() only.
class R1Server {
public:
  R1Server(const BenchConfig& config, net::ChannelHandler handler)
      : timer_(core::WheelOptions{.tickDuration = std::chrono::milliseconds(config.tickMs)}),
        group_(static_cast<std::size_t>(config.loops.at(0))) {
    timer_.start();
    net::ServerOptions o;
    o.listen = net::Endpoint{listenAddress(0), 0};
    o.backlog = 4096;  // 1 000 clients connect at once (as H1's server)
    // A group of 1 is the single-loop server (no hand-over); with more, loop 0 accepts and
    // hands connection k to loop k mod n.
    server_ = std::make_unique<net::TcpServer>(group_, timer_, o, std::move(handler));
  }

  std::uint16_t listen() { return server_->listen(); }
  [[nodiscard]] std::int64_t connections() const {
    return static_cast<std::int64_t>(server_->connections());
  }
  // Closes every channel, then stops the loop(s) and the wheel. True when all went cleanly.
  bool stop() {
    server_->stop();
    const int rc = group_.stop();
    timer_.stop();
    return rc == 0;
  }

private:
  core::HashedWheelTimer timer_;
  net::EventLoopGroup group_;
  std::unique_ptr<net::TcpServer> server_;
};

class R1Client {
  // One connection as its request callbacks see it (a client's channel lives as long as it).
  struct Conn {
    R1Client* owner;
    net::Channel* channel;
  };

public:
  explicit R1Client(const BenchConfig& c)
      : config_(c),
        timer_(core::WheelOptions{.tickDuration = std::chrono::milliseconds(c.tickMs)}),
        loop_("r1-client"),
        hessian2_(c.r1Bodies.at(0) != R1Bodies::Raw),
        body_(r1RequestBody(c.r1Bodies.at(0))),
        expected_(hessian2_ ? r1ResponseBody(c.r1Bodies.at(0)) : std::string()) {
    timer_.start();
    clients_.reserve(static_cast<std::size_t>(c.conns));
  }

  // Starts the clients batch by batch; throws if they are not all connected in time.
  void connectAll() {
    const auto deadline = Clock::now() + 30s + config_.conns * 5ms;
    net::ClientOptions o;
    o.server = net::Endpoint{listenAddress(0), static_cast<std::uint16_t>(config_.port)};
    for (int started = 0; started < config_.conns;) {
      const int n = std::min(kConnectBatch, config_.conns - started);
      for (int i = 0; i < n; ++i) {
        // Counted in the handler's onConnected, not the state callback: that one runs before the
        // channel takes sends (a request issued right after it is refused as not connected).
        clients_.push_back(std::make_unique<net::TcpClient>(
            loop_, timer_, o,
            net::ChannelHandler{.onConnected = [this](net::Channel&) { onConnected(); }}));
        clients_.back()->start();
      }
      started += n;
      std::unique_lock lock(mutex_);
      if (!changed_.wait_until(lock, deadline, [&] { return connected_ >= started; })) {
        throw std::runtime_error(
            fmt::format("R1 client: {} of {} connected in time", connected_, started));
      }
    }
  }

  // `depth` requests on every connection, issued on the loop thread; each answer sends the next
  // (issue()).
  void startRequests() {
    conns_.reserve(clients_.size());  // never reallocated after: callbacks hold &conns_[i]
    for (auto& client : clients_) conns_.push_back(Conn{this, &client->channel()});
    const bool ran = loop_.call([this] {
      for (auto& conn : conns_) {
        for (int d = 0; d < config_.depth; ++d) issue(conn, Clock::now());
      }
    });
    if (!ran) throw std::runtime_error("R1 client: the loop is stopped");
  }

  Kv stats() {
    Kv s = selfUsage();
    {
      std::lock_guard lock(mutex_);
      s["connected"] = connected_;
    }
    s["sent"] = sent_.load(std::memory_order_relaxed);
    s["answered"] = answered_.load(std::memory_order_relaxed);
    s["timeouts"] = timeouts_.load(std::memory_order_relaxed);
    s["closed"] = closed_.load(std::memory_order_relaxed);
    s["errors"] = errors_.load(std::memory_order_relaxed);
    s["in_flight"] = inFlight_.load();
    return s;
  }

  // Stops sending new requests and waits (at most the request timeout + 10 s) until every
  // request out has ended. stopping_ is set on the loop thread, the writer of inFlight_: from
  // then on the callback that brings it to 0 notifies under the mutex (or the post itself, if it
  // is 0 already); this thread re-reads it under the mutex.
  Kv drain() {
    (void)loop_.post([this] {
      stopping_ = true;
      if (inFlight_.load(std::memory_order_relaxed) == 0) notifyDrained();
    });
    std::unique_lock lock(mutex_);
    const auto bound = std::chrono::milliseconds(config_.requestTimeoutMs) + 10s;
    (void)changed_.wait_for(lock, bound, [&] { return inFlight_.load() == 0; });
    lock.unlock();
    return stats();
  }

  const RttHistogram& histogram() const { return rtt_; }

  bool shutdown() {
    clients_.clear();  // each destructor closes its client
    const int rc = loop_.stop();
    timer_.stop();
    return rc == 0;
  }

private:
  void onConnected() {
    std::lock_guard lock(mutex_);
    ++connected_;
    changed_.notify_all();
  }

  // Loop thread (startRequests() issues there too). The callback captures 16 trivially copyable
  // bytes: std::function keeps them inline (no allocation of ours per request; what the library
  // allocates is part of the measure).
  // `sentAt`: the caller's clock read, which in done() is also the answer's arrival (as the raw
  // client stamps a read's answers and the requests they release with one read of the clock).
  void issue(Conn& conn, Clock::time_point sentAt) {
    bump(inFlight_, 1);
    Conn* c = &conn;
    const auto r = conn.channel->request(
        body_, std::chrono::milliseconds(config_.requestTimeoutMs),
        [c, sentAt](const net::CallResult& result) { c->owner->done(*c, sentAt, result); });
    if (r.sent == net::SendResult::Queued) {
      bump(sent_, 1);
      return;
    }
    bump(errors_, 1);
    finishOne();
  }

  // Loop thread. The next request goes out before this one leaves inFlight_, so the count never
  // touches 0 while the pipeline runs.
  void done(Conn& conn, Clock::time_point sentAt, const net::CallResult& r) {
    if (r.status == net::CallStatus::Ok) {
      // An answer completes inside its read callback, and the channel stamped that read once
      // (lastRead(): the steady clock, as Clock): the arrival of every answer of the read, as the
      // raw client takes one clock read per read. A clock read per answer here cost this client
      // 4.6 % of its CPU (perf, 64 x 16), which the floor's client does not pay.
      const Clock::time_point now{
          std::chrono::duration_cast<Clock::duration>(conn.channel->lastRead())};
      rtt_.record(std::chrono::duration_cast<std::chrono::nanoseconds>(now - sentAt).count());
      bump(answered_, 1);
      // Raw bodies: the size only (as the floor's client); hessian2, raw-sized: the exact answer.
      const bool good = hessian2_ ? r.body == expected_ : r.body.size() == kR1BodyBytes;
      if (r.frameStatus != net::kStatusOk || !good) {
        bump(errors_, 1);
      } else if (!stopping_) {
        issue(conn, now);
      }
    } else {
      bump(r.status == net::CallStatus::Timeout ? timeouts_ : closed_, 1);
    }
    finishOne();
  }

  // Loop thread.
  void finishOne() {
    bump(inFlight_, -1);
    if (stopping_ && inFlight_.load(std::memory_order_relaxed) == 0) notifyDrained();
  }
  void notifyDrained() {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  }
  // Loop thread, the only writer: other threads read a recent value.
  static void bump(std::atomic<std::int64_t>& counter, std::int64_t by) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_release);
  }

  const BenchConfig& config_;
  core::HashedWheelTimer timer_;
  net::EventLoop loop_;
  const bool hessian2_;  // or raw-sized: an exact answer expected
  const std::string body_;
  const std::string expected_;  // hessian2, raw-sized: the exact response body
  std::vector<std::unique_ptr<net::TcpClient>> clients_;
  std::vector<Conn> conns_;
  RttHistogram rtt_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::int64_t connected_ = 0;  // guarded by mutex_
  bool stopping_ = false;       // loop thread
  std::atomic<std::int64_t> inFlight_{0};
  std::atomic<std::int64_t> sent_{0};
  std::atomic<std::int64_t> answered_{0};
  std::atomic<std::int64_t> timeouts_{0};
  std::atomic<std::int64_t> closed_{0};
  std::atomic<std::int64_t> errors_{0};
};

}  // namespace

// The server's counters as the driver reads them: raw bodies (and raw-sized), the echo handler's;
// hessian2, the
// Provider's (every request answered with a value, or an error or exception).
struct ServerSide {
  std::shared_ptr<ServerCounters> counters = std::make_shared<ServerCounters>();
  std::unique_ptr<dubbo::Provider> provider;  // hessian2 bodies: outlives the server

  net::ChannelHandler handler(R1Bodies bodies) {
    if (bodies == R1Bodies::Raw) return echoHandler(counters);
    if (bodies == R1Bodies::RawSized) return echoHandler(counters, r1ResponseBody(bodies));
    provider = std::make_unique<dubbo::Provider>();
    const dubbo::ServiceId service{.interface = std::string(kR1Service)};
    if (bodies == R1Bodies::Hessian2InPlace) {
      provider->addInPlace(service, "echo", "Ljava/lang/String;",
                           [](const dubbo::CallView& call, dubbo::Answer& answer) {
                             if (const auto s = call.stringArg(0)) {
                               answer.string(*s);
                             } else {
                               answer.value(call.arg(0));
                             }
                           });
    } else {
      provider->add(service, "echo", "Ljava/lang/String;",
                    [](const dubbo::Request& request) { return request.args[0]; });
    }
    return provider->channelHandler();
  }
  std::int64_t handled() const {
    if (!provider) return counters->handled.load(std::memory_order_relaxed);
    return static_cast<std::int64_t>(provider->stats().values);
  }
  std::int64_t errors() const {
    if (!provider) return counters->refused.load(std::memory_order_relaxed);
    const auto s = provider->stats();
    return static_cast<std::int64_t>(s.errors + s.exceptions);
  }
};

int r1ServerMain(const BenchConfig& config) {
  raiseNofile(kServerReservedFds + 1);
  ServerSide side;
  R1Server server(config, side.handler(config.r1Bodies.at(0)));
  Kv ready = selfUsage();
  ready["port0"] = server.listen();
  reply(formatKv("ready", ready));
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command != "stats") throw std::runtime_error(fmt::format("unknown command '{}'", command));
    Kv s = selfUsage();
    s["conns"] = server.connections();
    s["handled"] = side.handled();
    s["errors"] = side.errors();
    reply(formatKv("stats", s));
  }
  return server.stop() ? 0 : 1;
}

int r1ClientMain(const BenchConfig& config) {
  raiseNofile(config.conns + 64);
  R1Client client(config);
  reply(formatKv("ready", selfUsage()));
  client.connectAll();
  reply(formatKv("connected", Kv{{"n", config.conns}}));
  client.startRequests();
  std::string command;
  while (std::getline(std::cin, command)) {
    if (command == "stats") {
      reply(formatKv("stats", client.stats()));
    } else if (command == "rtt") {
      reply(formatCounts(client.histogram().snapshot()));
    } else if (command == "drain") {
      reply(formatKv("drained", client.drain()));
    } else {
      throw std::runtime_error(fmt::format("unknown command '{}'", command));
    }
  }
  return client.shutdown() ? 0 : 1;
}

}  // namespace wheelbeat::bench::netbench
