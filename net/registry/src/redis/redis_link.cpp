#include "redis_link.h"

#include <wheelbeat/core/log.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sys/ioctl.h>

#include <cstdint>
#include <utility>

namespace wheelbeat::registry::detail {

namespace {

using Type = RedisReply::Type;

RedisReply copyReply(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_STRING: out.type = Type::String; break;
    case REDIS_REPLY_STATUS: out.type = Type::Status; break;
    case REDIS_REPLY_ERROR: out.type = Type::Error; break;
    case REDIS_REPLY_INTEGER: out.type = Type::Integer; break;
    case REDIS_REPLY_ARRAY: out.type = Type::Array; break;
    default: out.type = Type::Nil; break;
  }
  if (r.str != nullptr) out.str.assign(r.str, r.len);
  out.integer = r.integer;
  for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(copyReply(*r.element[i]));
  return out;
}

// privdata carries the command's id, not a pointer: a late reply finds nothing by that id.
void* idToPrivdata(std::uint64_t id) noexcept {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an opaque token for hiredis, never dereferenced.
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id));
}
std::uint64_t privdataToId(void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

RedisLink* linkOf(const redisAsyncContext* ac) noexcept {
  return static_cast<RedisLink*>(ac->data);
}

int sendArgv(redisAsyncContext* ac, redisCallbackFn* fn, void* privdata,
             const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return redisAsyncCommandArgv(ac, fn, privdata, static_cast<int>(args.size()), argv.data(),
                               lens.data());
}

// hiredis 0.14.1's adapters/libuv.h with the fix upstream made in hiredis 1.0: libuv reports
// POLLERR (a refused connect, a reset connection) as status < 0 and stops the handle, and the
// 0.14 adapter dropped that callback, so hiredis never learnt the connect failed or the link
// died (only our connect / idle timeouts would). Here hiredis retries the operation it waits
// for, which then fails and runs its normal error path.
struct UvEvents {
  redisAsyncContext* context = nullptr;
  uv_poll_t handle{};
  int events = 0;
};

void uvPoll(uv_poll_t* handle, int status, int events) {
  auto* p = static_cast<UvEvents*>(handle->data);
  const int ready = status != 0 ? p->events : events;
  if (p->context != nullptr && (ready & UV_READABLE) != 0) redisAsyncHandleRead(p->context);
  if (p->context != nullptr && (ready & UV_WRITABLE) != 0) redisAsyncHandleWrite(p->context);
}

void uvUpdate(void* privdata, int add, int remove) {
  auto* p = static_cast<UvEvents*>(privdata);
  p->events = (p->events | add) & ~remove;
  if (p->events != 0) {
    uv_poll_start(&p->handle, p->events, &uvPoll);
  } else {
    uv_poll_stop(&p->handle);
  }
}

void uvAddRead(void* p) { uvUpdate(p, UV_READABLE, 0); }
void uvDelRead(void* p) { uvUpdate(p, 0, UV_READABLE); }
void uvAddWrite(void* p) { uvUpdate(p, UV_WRITABLE, 0); }
void uvDelWrite(void* p) { uvUpdate(p, 0, UV_WRITABLE); }

void uvCleanup(void* privdata) {
  auto* p = static_cast<UvEvents*>(privdata);
  p->context = nullptr;  // the context is being freed; a poll callback still queued must not use it
  uv_close(asHandle(&p->handle), [](uv_handle_t* h) { delete static_cast<UvEvents*>(h->data); });
}

int uvAttach(redisAsyncContext* ac, uv_loop_t* loop) {
  if (ac->ev.data != nullptr) return REDIS_ERR;
  auto* p = new UvEvents;
  if (uv_poll_init(loop, &p->handle, ac->c.fd) != 0) {
    delete p;
    return REDIS_ERR;
  }
  p->handle.data = p;
  p->context = ac;
  ac->ev.addRead = &uvAddRead;
  ac->ev.delRead = &uvDelRead;
  ac->ev.addWrite = &uvAddWrite;
  ac->ev.delWrite = &uvDelWrite;
  ac->ev.cleanup = &uvCleanup;
  ac->ev.data = p;
  return REDIS_OK;
}

}  // namespace

RedisLink::RedisLink(EventLoop& loop, core::HashedWheelTimer& timer, std::string name,
                     std::chrono::nanoseconds timeout)
    : loop_(loop), timer_(timer), name_(std::move(name)), timeout_(timeout) {}

RedisLink::~RedisLink() {
  // close() ran on the loop thread (RedisBackend::close) or the loop's stop() freed the context
  // (closeForShutdown); anything else would be a lifetime bug, and freeing here (any thread) a
  // data race with the loop.
  if (ctx_ != nullptr) {
    core::log(core::LogLevel::Error, "{}: destroyed with its connection open (leaked)", name_);
  }
}

bool RedisLink::connect(const Endpoint& to) {
  if (ctx_ != nullptr) close("reconnect");
  redisAsyncContext* ac = redisAsyncConnect(to.host.c_str(), to.port);
  if (ac == nullptr) {
    lastError_ = "cannot allocate a hiredis context";
    return false;
  }
  if (ac->err != 0) {
    lastError_ = ac->errstr;
    redisAsyncFree(ac);
    return false;
  }
  if (uvAttach(ac, loop_.native()) != REDIS_OK) {
    lastError_ = "cannot attach hiredis to the event loop";
    redisAsyncFree(ac);
    return false;
  }
  ac->data = this;
  // After the attach: in hiredis 0.14 setting the connect callback arms the write event.
  redisAsyncSetConnectCallback(ac, &RedisLink::onConnect);
  redisAsyncSetDisconnectCallback(ac, &RedisLink::onDisconnect);
  ctx_ = ac;
  connected_ = false;
  ++incarnation_;
  setFd(ac->c.fd);
  stampRead();
  stampWrite();
  net::registerHandle(loop_.native(), this);
  return true;
}

template <typename Fn>
void RedisLink::postHook(Fn fn) {
  loop_.post([weak = weak_from_this(), inc = incarnation_, fn = std::move(fn)] {
    auto self = weak.lock();
    if (self && self->incarnation_ == inc) fn(*self);
  });
}

void RedisLink::onConnect(const redisAsyncContext* ac, int status) {
  RedisLink* self = linkOf(ac);
  if (self == nullptr) return;
  if (status != REDIS_OK) {
    self->lost(ac->errstr);  // hiredis frees the context after this callback
    return;
  }
  self->connected_ = true;
  self->stampRead();
  self->stampWrite();
  self->postHook([](RedisLink& l) {
    if (l.isConnected() && l.hooks_.onConnected) l.hooks_.onConnected();
  });
}

void RedisLink::onDisconnect(const redisAsyncContext* ac, int status) {
  RedisLink* self = linkOf(ac);
  if (self == nullptr) return;  // our own close(): detached first
  self->lost(status == REDIS_OK ? std::string("closed by the server") : std::string(ac->errstr));
}

void RedisLink::onReply(redisAsyncContext* ac, void* reply, void* privdata) {
  RedisLink* self = linkOf(ac);
  if (self == nullptr) return;
  // A null reply: hiredis is freeing the context (the connection died) and flushes its queue.
  if (reply == nullptr) return self->lost("connection lost");
  self->stampRead();
  const auto& r = *static_cast<redisReply*>(reply);
  if (r.type == REDIS_REPLY_ERROR) {
    self->complete(privdataToId(privdata),
                   tasks::CallResult::failure("rejected", std::string(r.str, r.len)), {});
  } else {
    self->complete(privdataToId(privdata), tasks::CallResult::success(), copyReply(r));
  }
}

void RedisLink::onPushReply(redisAsyncContext* ac, void* reply, void* /*privdata*/) {
  RedisLink* self = linkOf(ac);
  if (self == nullptr) return;
  if (reply == nullptr) return self->lost("connection lost");
  self->stampRead();
  self->push(copyReply(*static_cast<redisReply*>(reply)));
}

std::uint64_t RedisLink::track(ReplyHandler done) {
  const std::uint64_t id = nextId_++;
  auto& p = pending_[id];
  p.done = std::move(done);
  p.timeout = timer_.newTimeout(
      [weak = weak_from_this(), id] {
        auto self = weak.lock();
        if (!self) return;
        self->loop_.post([weak, id] {
          if (auto l = weak.lock()) l->expire(id);
        });
      },
      timeout_);
  return id;
}

void RedisLink::command(const std::vector<std::string>& args, ReplyHandler done) {
  if (!isConnected()) {
    return done(tasks::CallResult::failure("disconnected", name_ + " is not connected"), {});
  }
  const std::uint64_t id = track(std::move(done));
  if (sendArgv(ctx_, &RedisLink::onReply, idToPrivdata(id), args) != REDIS_OK) {
    complete(id, tasks::CallResult::failure("disconnected", name_ + " refused the command"), {});
    return;
  }
  stampWrite();
}

void RedisLink::subscribe(const std::string& channel, ReplyHandler ack) {
  if (!isConnected()) {
    return ack(tasks::CallResult::failure("disconnected", name_ + " is not connected"), {});
  }
  const auto it = channels_.find(channel);
  if (it != channels_.end() && it->second) return ack(tasks::CallResult::success(), {});
  acks_.emplace(channel, track(std::move(ack)));
  if (it != channels_.end()) return;  // a SUBSCRIBE is on its way: wait for its ack
  channels_[channel] = false;
  if (sendArgv(ctx_, &RedisLink::onPushReply, nullptr, {"SUBSCRIBE", channel}) != REDIS_OK) {
    close("SUBSCRIBE refused by hiredis");
    return;
  }
  stampWrite();
}

void RedisLink::unsubscribe(const std::string& channel) {
  if (channels_.erase(channel) == 0 || !isConnected()) return;
  (void)sendArgv(ctx_, nullptr, nullptr, {"UNSUBSCRIBE", channel});
}

void RedisLink::complete(std::uint64_t id, const tasks::CallResult& result,
                         const RedisReply& reply) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;  // timed out or failed already
  Pending p = std::move(it->second);
  pending_.erase(it);
  p.timeout.cancel();
  p.done(result, reply);
}

void RedisLink::expire(std::uint64_t id) {
  if (!pending_.contains(id)) return;
  // A subscribe that timed out: forget the channel, so a retry sends SUBSCRIBE again.
  for (auto it = acks_.begin(); it != acks_.end(); ++it) {
    if (it->second != id) continue;
    if (auto ch = channels_.find(it->first); ch != channels_.end() && !ch->second) {
      channels_.erase(ch);
    }
    acks_.erase(it);
    break;
  }
  complete(id, tasks::CallResult::failure("timeout", name_ + ": no reply in time"), {});
}

void RedisLink::push(const RedisReply& reply) {
  // ["subscribe", channel, count] acks a SUBSCRIBE; anything else is the owner's.
  if (reply.type == Type::Array && reply.elements.size() >= 2 &&
      reply.elements[0].str == "subscribe") {
    const std::string& channel = reply.elements[1].str;
    if (auto ch = channels_.find(channel); ch != channels_.end()) ch->second = true;
    std::vector<std::uint64_t> ids;
    for (auto [b, e] = acks_.equal_range(channel); b != e; ++b) ids.push_back(b->second);
    acks_.erase(channel);
    for (const auto id : ids) complete(id, tasks::CallResult::success(), reply);
    return;
  }
  if (hooks_.onPush) hooks_.onPush(reply);
}

redisAsyncContext* RedisLink::detach() noexcept {
  redisAsyncContext* ac = ctx_;
  if (ac == nullptr) return nullptr;
  ac->data = nullptr;  // later callbacks of this context (hiredis flushing it) find nothing
  ctx_ = nullptr;
  connected_ = false;
  ++incarnation_;
  setFd(-1);  // before hiredis closes it (after this returns)
  net::unregisterHandle(loop_.native(), this);
  return ac;
}

void RedisLink::lost(const std::string& reason) {
  if (detach() == nullptr) return;
  lastError_ = reason;
  failAll(reason);
  postHook([reason](RedisLink& l) {
    if (l.hooks_.onLost) l.hooks_.onLost(reason);
  });
}

void RedisLink::close(const std::string& reason) {
  // Inside one of its own reply callbacks hiredis defers the free until the callback returns.
  if (redisAsyncContext* ac = detach()) redisAsyncFree(ac);
  failAll(reason);
}

void RedisLink::failAll(const std::string& reason) {
  channels_.clear();
  acks_.clear();
  auto pending = std::move(pending_);
  pending_.clear();
  for (auto& [id, p] : pending) {
    p.timeout.cancel();
    p.done(tasks::CallResult::failure("disconnected", name_ + ": " + reason), {});
  }
}

void RedisLink::stampRead() noexcept {
  lastRead_.store(timer_.now().count(), std::memory_order_release);
}

void RedisLink::stampWrite() noexcept {
  lastWrite_.store(timer_.now().count(), std::memory_order_release);
}

void RedisLink::setFd(int fd) noexcept {
  std::lock_guard lock(fdMutex_);
  fd_ = fd;
}

// hiredis reads everything the socket has whenever it is readable: what waits in the kernel is
// input the loop has not got to yet.
bool RedisLink::hasUnreadInput() const noexcept {
  std::lock_guard lock(fdMutex_);
  int unread = 0;
  return fd_ >= 0 && ::ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0;
}

void RedisLink::closeForShutdown() noexcept {
  try {
    close("event loop stopped");
  } catch (...) {  // NOLINT(bugprone-empty-catch): a handler must not break the loop's shutdown
  }
}

}  // namespace wheelbeat::registry::detail
