// TcpServer (tcp_server.h): the public face over one ServerCore per loop (server_core.h).
#include "address.h"
#include "server_core.h"

#include <wheelbeat/net/tcp_server.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {

// TcpServer

TcpServer::TcpServer(EventLoop& loop, core::HashedWheelTimer& timer, ServerOptions options,
                     ChannelHandler handler) {
  validate(options, timer.tickDuration());
  loops_.push_back(&loop);
  const Endpoint listen = options.listen;
  // Copied out first: `options` moves into the core in the same call.
  auto listener = options.taskListener;
  auto metrics = options.taskMetrics;
  cores_.push_back(std::make_shared<detail::ServerCore>(
      loop, timer, std::move(options), std::make_shared<const ChannelHandler>(std::move(handler)),
      std::move(listener), std::move(metrics), std::make_shared<detail::ServerShared>()));
  registerUses(timer, listen);  // after the cores: the timer's stop handler stops them
}

TcpServer::TcpServer(EventLoopGroup& group, core::HashedWheelTimer& timer,
                     const ServerOptions& options, ChannelHandler handler) {
  validate(options, timer.tickDuration());
  auto shared = std::make_shared<detail::ServerShared>();
  auto sharedHandler = std::make_shared<const ChannelHandler>(std::move(handler));
  for (std::size_t i = 0; i < group.size(); ++i) {
    loops_.push_back(&group.at(i));
    cores_.push_back(std::make_shared<detail::ServerCore>(group.at(i), timer, options,
                                                          sharedHandler, options.taskListener,
                                                          options.taskMetrics, shared));
  }
  cores_.front()->setPeers({cores_.begin() + 1, cores_.end()});
  registerUses(timer, options.listen);
}

void TcpServer::registerUses(core::HashedWheelTimer& timer, const Endpoint& listen) {
  const std::string user = fmt::format("TcpServer {}:{}", listen.host, listen.port);
  for (EventLoop* loop : loops_) uses_.push_back(loop->use(user));
  // The timer stopped under this server: its idle checks would silently stop, so it stops
  // serving (as stop(), without waiting for the loop it is called on, if any).
  uses_.push_back(timer.use(user, [cores = cores_, loops = loops_] {
    for (std::size_t i = 0; i < cores.size(); ++i) {
      if (loops[i]->post([core = cores[i]] { core->stop(); }) && !loops[i]->isLoopThread()) {
        cores[i]->waitStopped();
      }
    }
  }));
}

TcpServer::~TcpServer() { stop(); }

bool TcpServer::onLoopThread() const noexcept {
  return std::any_of(loops_.begin(), loops_.end(),
                     [](const EventLoop* l) { return l->isLoopThread(); });
}

std::uint16_t TcpServer::listen() {
  sockaddr_storage addr{};
  // On the caller's thread: a host name's resolution must not block the loop.
  if (NetError e = detail::resolveBlocking(cores_.front()->endpoint(), addr)) {
    throw NetException(e, cores_.front()->where());
  }
  // Only cores_[0] listens: it hands connections to the others.
  detail::ServerCore::ListenOutcome out;
  if (!loops_.front()->call([&] { out = cores_.front()->listen(addr); })) {
    throw std::runtime_error("wheelbeat: TcpServer::listen(): the event loop is stopped");
  }
  if (!out.misuse.empty()) throw std::logic_error(out.misuse);
  if (out.error) throw NetException(out.error, out.where);
  return out.port;
}

std::uint16_t TcpServer::port() const noexcept {
  return cores_.front()->port.load(std::memory_order_acquire);
}

template <typename T, typename F>
T TcpServer::sum(F field) const noexcept {
  T total = 0;
  for (const auto& core : cores_) total += (core.get()->*field).load(std::memory_order_acquire);
  return total;
}

std::size_t TcpServer::connections() const noexcept { return cores_.front()->openEverywhere(); }
std::uint64_t TcpServer::rejected() const noexcept {
  return sum<std::uint64_t>(&detail::ServerCore::rejected);
}
std::uint64_t TcpServer::accepted() const noexcept {
  return sum<std::uint64_t>(&detail::ServerCore::accepted);
}

ShutdownReport TcpServer::shutdown() { return shutdown(cores_.front()->options().shutdownGrace); }

ShutdownReport TcpServer::shutdown(std::chrono::nanoseconds grace) {
  if (grace < std::chrono::nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("TcpServer::shutdown: grace = {} (expected: >= 0)", grace));
  }
  const auto start = std::chrono::steady_clock::now();
  ShutdownReport report;
  if (onLoopThread()) {
    beginShutdownOnLoop(grace, report);
    return report;
  }
  // The accepting core first: once its listener is closed, no connection is handed over to a
  // core that has begun draining (one still travelling there is closed, as a backlog would be).
  std::vector<bool> begun(cores_.size(), false);
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    ShutdownReport part;
    begun[i] = loops_[i]->call([&] { cores_[i]->shutdown(grace, part); });
    report.notified += part.notified;
    report.inFlightAtStart += part.inFlightAtStart;
  }
  bool any = false;
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (!begun[i]) continue;  // that loop is stopping: its own shutdown closes its channels
    any = true;
    cores_[i]->waitStopped();
    report.abandoned += cores_[i]->abandoned.load(std::memory_order_acquire);
  }
  if (!any) return {};
  report.elapsed = std::chrono::steady_clock::now() - start;
  return report;
}

// On one of the loops (inside a handler): this loop's core begins inline (its counts are the
// report's), the others' are posted.
void TcpServer::beginShutdownOnLoop(std::chrono::nanoseconds grace, ShutdownReport& report) {
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (loops_[i]->isLoopThread()) {
      cores_[i]->shutdown(grace, report);
    } else {
      (void)loops_[i]->post([core = cores_[i], grace] {
        ShutdownReport ignored;
        core->shutdown(grace, ignored);
      });
    }
  }
}

std::int64_t TcpServer::unanswered() const noexcept {
  return std::max<std::int64_t>(0, sum<std::int64_t>(&detail::ServerCore::unanswered));
}

void TcpServer::stop() {
  for (auto& use : uses_) use.quiet();  // stopped: a timer or loop stopped later need not say so
  std::vector<bool> posted(cores_.size(), false);
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    // A refused post: that loop is stopping, and its own shutdown closes its channels.
    posted[i] = loops_[i]->post([core = cores_[i]] { core->stop(); });
  }
  if (onLoopThread()) return;  // waiting here could wait for this very loop
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (posted[i]) cores_[i]->waitStopped();
  }
}

}  // namespace wheelbeat::net
