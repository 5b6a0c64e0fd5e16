// ZkSession (zk_session.h): its life — the handle, the loop's poll and timer driving the C client,
// what the C client reports (recorded, then dispatched) and expiry. The requests are in
// zk_operations.cpp.
#include "zk_session.h"

#include "zk_session_records.h"

#include <wheelbeat/core/log.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace wheelbeat::registry::zk {

using detail::asHandle;

// The poll handle watches a duplicate of the client's socket, owned by the box: the C client
// closes its own descriptor whenever it likes (errors, reconnects), and libuv must never be left
// polling — or later epoll_ctl-ing — a number that another open() may have taken meanwhile. The
// duplicate is closed only after libuv has let go of it (the close callback).
struct ZkSession::PollBox {
  uv_poll_t handle{};
  ZkSession* self = nullptr;  // null once closing: a callback still queued does nothing
  int fd = -1;                // the duplicate
  ~PollBox() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

void onGlobalEvent(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* ctx) {
  if (type != ZOO_SESSION_EVENT || ctx == nullptr) return;
  static_cast<ZkSession*>(ctx)->recordSession(state);
}

void onClientLog(const char* message) {
  std::string_view m = message != nullptr ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.remove_suffix(1);
  core::log(core::LogLevel::Debug, "zookeeper client: {}", m);
}

bool unrecoverable(int zstate) noexcept {
  return zstate == ZOO_EXPIRED_SESSION_STATE || zstate == ZOO_AUTH_FAILED_STATE;
}

WatchEvent toWatchEvent(int type) noexcept {
  if (type == ZOO_CREATED_EVENT) return WatchEvent::Created;
  if (type == ZOO_DELETED_EVENT) return WatchEvent::Deleted;
  if (type == ZOO_CHANGED_EVENT) return WatchEvent::DataChanged;
  if (type == ZOO_CHILD_EVENT) return WatchEvent::ChildrenChanged;
  return WatchEvent::Lost;  // ZOO_NOTWATCHING_EVENT: the server dropped the watch
}

}  // namespace

std::string_view stateName(SessionState s) noexcept {
  switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Connecting: return "connecting";
    case SessionState::Connected: return "connected";
    case SessionState::Expired: return "expired";
    case SessionState::Closed: return "closed";
  }
  return "?";
}

std::string_view watchEventName(WatchEvent e) noexcept {
  switch (e) {
    case WatchEvent::Created: return "created";
    case WatchEvent::Deleted: return "deleted";
    case WatchEvent::DataChanged: return "data changed";
    case WatchEvent::ChildrenChanged: return "children changed";
    case WatchEvent::Lost: return "lost";
  }
  return "?";
}

ZkSession::ZkSession(net::EventLoop& loop, Options options, StateCallback onState)
    : loop_(loop), options_(std::move(options)), onState_(std::move(onState)) {}

ZkSession::~ZkSession() {
  if (closed_ || !started_) return;
  if (loop_.isLoopThread()) {
    try {
      close();
    } catch (const std::exception& e) {  // a destructor must not throw: log and go on
      core::log(core::LogLevel::Error, "zookeeper session {:#x}: close() in the destructor: {}",
                sessionId_, e.what());
    }
    return;
  }
  // Closing from here would race the loop thread; the loop's stop() closes it otherwise.
  core::log(core::LogLevel::Error,
            "zookeeper session {:#x} destroyed off the loop thread while open (leaked)",
            sessionId_);
}

void ZkSession::requireLoopThread(const char* what) const {
  if (!loop_.isLoopThread()) {
    throw std::logic_error(fmt::format("ZkSession::{} called off the loop thread", what));
  }
}

bool ZkSession::connect() {
  requireLoopThread("connect");
  if (started_) return zh_ != nullptr;
  started_ = true;
  if (!openHandle(options_.resume ? &*options_.resume : nullptr)) return false;
  setState(SessionState::Connecting, 0);
  return true;
}

bool ZkSession::openHandle(const Credentials* resume) {
  static std::once_flag quiet;
  std::call_once(quiet, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_WARN); });
  clientid_t id{};
  if (resume != nullptr) {
    id.client_id = resume->sessionId;
    std::memcpy(id.passwd, resume->password.data(), sizeof(id.passwd));
  }
  zh_ = zookeeper_init2(
      options_.hosts.c_str(), &onGlobalEvent, static_cast<int>(options_.sessionTimeout.count()),
      resume != nullptr ? &id : nullptr, this, ZOO_NO_LOG_CLIENTENV, &onClientLog);
  if (zh_ == nullptr) {
    // generic_category().message() is strerror's thread-safe equivalent.
    const int error = errno;
    lastError_ = fmt::format("zookeeper_init({}): {}", options_.hosts,
                             std::generic_category().message(error));
    return false;
  }
  ++generation_;
  expiryQueued_ = false;
  handleConnected_ = false;
  lastZState_ = zoo_state(zh_);
  uv_loop_t* loop = loop_.native();
  if (timer_ == nullptr) {
    timer_ = new uv_timer_t;
    uv_timer_init(loop, timer_);
    timer_->data = this;
  }
  if (!registered_) {
    net::registerHandle(loop, this);
    registered_ = true;
  }
  rearm();
  return true;
}

void ZkSession::closeHandle(int rc) {
  if (zh_ == nullptr) return;
  zhandle_t* zh = std::exchange(zh_, nullptr);
  // Taken out first: whatever the C client still reports while closing finds nothing to
  // complete, yet every Op and Watch it may point to stays alive until zookeeper_close returns.
  auto ops = std::exchange(ops_, {});
  auto watches = std::exchange(watches_, {});
  // libuv must stop polling the socket before the C client closes it.
  if (poll_ != nullptr) {
    poll_->self = nullptr;
    uv_close(asHandle(&poll_->handle),
             [](uv_handle_t* h) { delete static_cast<PollBox*>(h->data); });
    poll_ = nullptr;
    pollFd_ = -1;
  }
  if (timer_ != nullptr) uv_timer_stop(timer_);
  const int closeRc = zookeeper_close(zh);
  if (closeRc != ZOK) {
    core::log(core::LogLevel::Debug, "zookeeper_close({}): {}", options_.hosts, zerror(closeRc));
  }
  for (auto& [id, op] : ops) op->done(rc, {});
  for (auto& [id, w] : watches) w->callback(WatchEvent::Lost, w->path);
}

void ZkSession::close() {
  requireLoopThread("close");
  if (closed_) return;
  closed_ = true;
  closeHandle(ZCLOSING);
  if (timer_ != nullptr) {
    uv_close(asHandle(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    timer_ = nullptr;
  }
  if (registered_) {
    net::unregisterHandle(loop_.native(), this);
    registered_ = false;
  }
  if (started_) setState(SessionState::Closed, sessionId_);
}

void ZkSession::closeForShutdown() noexcept {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): must not break the loop's shutdown
  }
}

void ZkSession::setState(SessionState s, std::int64_t id, bool newSession) {
  if (s == state_) return;
  if (state_ == SessionState::Connected) disconnectedAtMs_ = uv_now(loop_.native());
  state_ = s;
  core::log(core::LogLevel::Info, "zookeeper {} session {:#x}: {}", options_.hosts, id,
            stateName(s));
  if (onState_) onState_(StateEvent{s, id, newSession});
}

// --- driving the C client ---------------------------------------------------------------------

void ZkSession::drive(int zkEvents) {
  if (zh_ == nullptr) return;
  const int rc = zookeeper_process(zh_, zkEvents);
  if (rc != ZOK && rc != ZNOTHING) socketSuspect_ = true;
  // In the single-threaded client an expiry seen in the handshake may return before its session
  // event is delivered (and an unrecoverable handle delivers nothing more): the state says it.
  if (const int zstate = zoo_state(zh_); unrecoverable(zstate)) recordSession(zstate);
  dispatch();
  if (givenUp()) {
    core::log(core::LogLevel::Warn,
              "zookeeper {}: no server for the session timeout ({} ms): session {:#x} "
              "taken as expired",
              options_.hosts, negotiatedTimeoutMs_, sessionId_);
    expire();
  }
  rearm();
}

bool ZkSession::givenUp() const noexcept {
  // The server cannot have kept a session it has not heard from for its whole timeout; waiting
  // on would only wait for a server that refuses us (one restarted without its data refuses any
  // client that saw a newer transaction, forever). Curator does the same.
  return zh_ != nullptr && handleConnected_ && state_ == SessionState::Connecting &&
         uv_now(loop_.native()) - disconnectedAtMs_ >=
             static_cast<std::uint64_t>(std::max<std::int64_t>(negotiatedTimeoutMs_, 1));
}

void ZkSession::dispatch() {
  while (!queue_.empty()) {
    auto batch = std::exchange(queue_, {});
    for (auto& fn : batch) fn();
  }
}

void ZkSession::rearm() {
  if (zh_ == nullptr || timer_ == nullptr) return;
  int fd = -1;
  int interest = 0;
  timeval tv{};
  const int rc = zookeeper_interest(zh_, &fd, &interest, &tv);
  const int zstate = zoo_state(zh_);
  if (rc != ZOK) {
    // The client has just dropped its socket (its error path closed it) yet may still report the
    // old descriptor: poll nothing, and call it again at once to reconnect or deliver the loss.
    fd = -1;
    tv = timeval{};
  }
  if (unrecoverable(zstate)) {
    // Let drive() see it and expire, outside whatever called us.
    updatePoll(-1, 0, true);
    uv_timer_start(
        timer_, [](uv_timer_t* t) { static_cast<ZkSession*>(t->data)->drive(0); }, 0, 0);
    return;
  }
  // The client closes and reopens its socket on errors and on every (re)connect; the new socket
  // may reuse the old number, and epoll forgets a closed descriptor: a new poll handle then.
  const bool reset = rc != ZOK || socketSuspect_ || zstate != lastZState_;
  socketSuspect_ = false;
  lastZState_ = zstate;
  updatePoll(fd, interest, reset);
  const auto ms = static_cast<std::uint64_t>(tv.tv_sec) * 1000 +
                  static_cast<std::uint64_t>((tv.tv_usec + 999) / 1000);
  uv_timer_start(
      timer_, [](uv_timer_t* t) { static_cast<ZkSession*>(t->data)->drive(0); },
      std::max<std::uint64_t>(ms, 1), 0);
}

void ZkSession::updatePoll(int fd, int interest, bool reset) {
  if (poll_ != nullptr && (fd < 0 || reset || fd != pollFd_)) {
    poll_->self = nullptr;
    uv_close(asHandle(&poll_->handle),
             [](uv_handle_t* h) { delete static_cast<PollBox*>(h->data); });
    poll_ = nullptr;
    pollFd_ = -1;
  }
  if (fd < 0) return;
  if (poll_ == nullptr) {
    auto box = std::make_unique<PollBox>();
    box->fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    const int err = box->fd < 0 ? uv_translate_sys_error(errno)
                                : uv_poll_init(loop_.native(), &box->handle, box->fd);
    if (err != 0) {
      // The timer still drives the client (it retries on its own deadlines).
      core::log(core::LogLevel::Warn, "zookeeper: cannot poll fd {}: {}", fd, uv_strerror(err));
      return;
    }
    box->self = this;
    box->handle.data = box.get();
    poll_ = box.release();
    pollFd_ = fd;
  }
  const int events = ((interest & ZOOKEEPER_READ) != 0 ? UV_READABLE : 0) |
                     ((interest & ZOOKEEPER_WRITE) != 0 ? UV_WRITABLE : 0);
  if (events == 0) {
    uv_poll_stop(&poll_->handle);
    return;
  }
  uv_poll_start(&poll_->handle, events, [](uv_poll_t* h, int status, int ready) {
    auto* box = static_cast<PollBox*>(h->data);
    if (box->self == nullptr) return;
    // An error (POLLERR: refused, reset) is handed to the client as readiness: its next read or
    // write fails and runs its own error path.
    const int uvEvents = status < 0 ? (UV_READABLE | UV_WRITABLE) : ready;
    const int zk = ((uvEvents & UV_READABLE) != 0 ? ZOOKEEPER_READ : 0) |
                   ((uvEvents & UV_WRITABLE) != 0 ? ZOOKEEPER_WRITE : 0);
    box->self->drive(zk);
  });
}

// --- what the C client reports (recorded only; run by dispatch()) -----------------------------

void ZkSession::record(Op* op, int rc, Reply reply) {
  const auto it = ops_.find(op->id);
  if (it == ops_.end()) return;  // its handle is being closed: closeHandle() fails it
  std::shared_ptr<Op> owned(std::move(it->second));
  ops_.erase(it);
  // The C client arms a child watch only on success, an exists watch on success or ZNONODE.
  if (owned->watchId != 0 && !(rc == ZOK || (owned->existsWatch && rc == ZNONODE))) {
    watches_.erase(owned->watchId);
  }
  queue_.emplace_back(
      [owned, rc, reply = std::move(reply)]() mutable { owned->done(rc, std::move(reply)); });
}

void ZkSession::recordWatch(Watch* w, int type) {
  const auto it = watches_.find(w->id);
  if (it == watches_.end()) return;
  std::shared_ptr<Watch> owned(std::move(it->second));
  watches_.erase(it);
  queue_.emplace_back([owned, type] { owned->callback(toWatchEvent(type), owned->path); });
}

void ZkSession::recordSession(int zstate) {
  if (zh_ == nullptr) return;
  Credentials creds;
  if (zstate == ZOO_CONNECTED_STATE) {
    if (const clientid_t* id = zoo_client_id(zh_); id != nullptr) {
      creds.sessionId = id->client_id;
      std::memcpy(creds.password.data(), id->passwd, creds.password.size());
    }
  }
  if (unrecoverable(zstate)) {
    if (expiryQueued_) return;
    expiryQueued_ = true;
  }
  queue_.emplace_back([this, gen = generation_, zstate, creds] { onSession(gen, zstate, creds); });
}

void ZkSession::onSession(std::uint64_t generation, int zstate, const Credentials& creds) {
  if (generation != generation_ || closed_) return;
  if (zstate == ZOO_CONNECTED_STATE) {
    const bool fresh = creds.sessionId != sessionId_;
    sessionId_ = creds.sessionId;
    credentials_ = creds;
    handleConnected_ = true;
    negotiatedTimeoutMs_ = zoo_recv_timeout(zh_);
    setState(SessionState::Connected, sessionId_, fresh);
  } else if (unrecoverable(zstate)) {
    expire();
  } else if (zstate == ZOO_CONNECTING_STATE || zstate == ZOO_NOTCONNECTED_STATE) {
    setState(SessionState::Connecting, sessionId_);
  }  // ASSOCIATING: the handshake, not a state of ours
}

void ZkSession::expire() {
  const std::int64_t old = sessionId_;
  closeHandle(ZSESSIONEXPIRED);
  setState(SessionState::Expired, old);
  if (closed_ || !options_.reopenOnExpiry) return;
  if (!openHandle(nullptr)) {
    core::log(core::LogLevel::Error, "zookeeper: cannot open a new session: {}", lastError_);
    return;
  }
  setState(SessionState::Connecting, old);
}

}  // namespace wheelbeat::registry::zk
