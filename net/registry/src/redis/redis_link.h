// RedisLink: one hiredis async connection (hiredis 0.14 + its libuv adapter, with the upstream
// fix for poll errors: see redis_link.cpp) on an EventLoop.
// Private to the registry layer: the only place that talks to hiredis, so its quirks stay here.
//
//   - Every call, every hook and every handler: the loop thread only.
//   - connect() starts a non-blocking connect (hiredis resolves the host with getaddrinfo on the
//     loop thread: use an IP literal or a name /etc/hosts answers). hooks.onConnected /
//     hooks.onLost are POSTED, never run inside a hiredis callback: hiredis 0.14 calls the connect
//     callback outside its IN_CALLBACK guard, so freeing the context there would be a
//     use-after-free.
//   - command(): a reply within `timeout` → handler(success, reply); an error reply →
//     ("rejected", its text); no reply in time → ("timeout"); the link is down, dies or is closed
//     first → ("disconnected"). Exactly one handler call per command, possibly synchronously
//     (link down).
//   - subscribe(): the ack is handled like a command reply (same timeout / failure rules); later
//     messages go to hooks.onPush. A channel already subscribed on this connection acks at once.
//   - close() frees the context and fails what is pending; onLost is not called (the owner knows).
//     A context hiredis frees itself (peer closed, connect refused) is only detached: `lost`.
//   - lastRead() / lastWrite(): the timer's clock at the last reply or message / the last command
//     handed to hiredis (both stamped by connect() and by the TCP connect), for the owner's
//     tasks::Channel; hasUnreadInput(): bytes wait in the socket's receive buffer. These three:
//     any thread (the wheel thread reads them).
#pragma once

#include "uv_handle.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/core/timeout.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/loop_handle.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/tasks/failback.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct redisAsyncContext;

namespace wheelbeat::registry::detail {

// The transport this link lives on (EventLoop::stop() closes a link still open: LoopHandle).
using net::Endpoint;
using net::EventLoop;
using net::LoopHandle;

// A hiredis reply, copied out of hiredis' memory (which it frees once the callback returns).
struct RedisReply {
  enum class Type { Nil, Status, String, Integer, Array, Error };
  Type type = Type::Nil;
  std::string str;        // Status, String, Error
  long long integer = 0;  // NOLINT(google-runtime-int): hiredis' redisReply::integer, as is
  std::vector<RedisReply> elements;  // Array
};

// Success: the reply. Failure: error "disconnected" / "timeout" / "rejected", reply Nil.
using ReplyHandler = std::function<void(const tasks::CallResult&, const RedisReply&)>;

class RedisLink final : public LoopHandle, public std::enable_shared_from_this<RedisLink> {
public:
  struct Hooks {
    std::function<void()> onConnected;               // the TCP connect completed
    std::function<void(const std::string&)> onLost;  // connect failed, or the link died
    std::function<void(const RedisReply&)> onPush;   // subscribe-mode messages
  };

  // `name` is for logs ("redis cmd"); `timeout` bounds each command (> 0).
  RedisLink(EventLoop& loop, core::HashedWheelTimer& timer, std::string name,
            std::chrono::nanoseconds timeout);
  ~RedisLink() override;
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  void setHooks(Hooks hooks) { hooks_ = std::move(hooks); }
  // Starts connecting. False: failed at once (the reason is in lastError()); no hook is called.
  bool connect(const Endpoint& to);
  void command(const std::vector<std::string>& args, ReplyHandler done);
  void subscribe(const std::string& channel, ReplyHandler ack);
  void unsubscribe(const std::string& channel);
  void close(const std::string& reason);

  [[nodiscard]] bool isOpen() const noexcept { return ctx_ != nullptr; }
  [[nodiscard]] bool isConnected() const noexcept { return ctx_ != nullptr && connected_; }
  [[nodiscard]] std::chrono::nanoseconds lastRead() const noexcept {
    return std::chrono::nanoseconds(lastRead_.load(std::memory_order_acquire));
  }
  [[nodiscard]] std::chrono::nanoseconds lastWrite() const noexcept {
    return std::chrono::nanoseconds(lastWrite_.load(std::memory_order_acquire));
  }
  [[nodiscard]] bool hasUnreadInput() const noexcept;
  [[nodiscard]] const std::string& lastError() const noexcept { return lastError_; }

  // EventLoop::stop() with the link still open: free the context (its poll handle closes).
  void closeForShutdown() noexcept override;

private:
  struct Pending {
    ReplyHandler done;
    core::Timeout timeout;
  };

  static void onConnect(const redisAsyncContext* ac, int status);
  static void onDisconnect(const redisAsyncContext* ac, int status);
  static void onReply(redisAsyncContext* ac, void* reply, void* privdata);
  static void onPushReply(redisAsyncContext* ac, void* reply, void* privdata);

  std::uint64_t track(ReplyHandler done);
  void complete(std::uint64_t id, const tasks::CallResult& result, const RedisReply& reply);
  void expire(std::uint64_t id);
  void push(const RedisReply& reply);
  void lost(const std::string& reason);
  redisAsyncContext* detach() noexcept;
  void failAll(const std::string& reason);
  template <typename Fn>
  void postHook(Fn fn);
  void stampRead() noexcept;
  void stampWrite() noexcept;
  void setFd(int fd) noexcept;

  EventLoop& loop_;
  core::HashedWheelTimer& timer_;
  const std::string name_;
  const std::chrono::nanoseconds timeout_;
  Hooks hooks_;

  redisAsyncContext* ctx_ = nullptr;
  bool connected_ = false;
  std::uint64_t incarnation_ = 0;  // one per connect(): a posted hook of an older one is dropped
  std::atomic<std::int64_t> lastRead_{0};   // ns on the timer's clock
  std::atomic<std::int64_t> lastWrite_{0};  // ns on the timer's clock
  // The socket while the context is ours, for hasUnreadInput() on the wheel thread; cleared
  // under the lock before hiredis closes it, so a reused descriptor number is never asked.
  mutable std::mutex fdMutex_;
  int fd_ = -1;
  std::string lastError_;
  std::uint64_t nextId_ = 1;
  std::map<std::uint64_t, Pending> pending_;
  std::map<std::string, bool> channels_;            // channel → acked, on this connection
  std::multimap<std::string, std::uint64_t> acks_;  // channel → waiting subscribe ids
};

}  // namespace wheelbeat::registry::detail
