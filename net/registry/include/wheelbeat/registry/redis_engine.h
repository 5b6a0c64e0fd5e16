// RedisEngine: the registry engine for a fleet, on a redis-server (Dubbo's RedisRegistry data
// model), through hiredis' libuv adapter (hiredis 1.0's poll-error fix applied) on the EventLoop.
// No hiredis or libuv header here.
//
//   auto registry = registry::makeRegistry(loop, timer, "redis://10.0.0.2:6379", setup);
//   registry->start();                                   // waits for the first connect
//   registry->registerUrl("wheelbeat://10.0.0.7:20880/greeter");
//   registry->subscribe("greeter", listener);
//   auto& redis = dynamic_cast<registry::RedisEngine&>(registry->engine());  // stats()
//
// Data model (per service S, group G; key K = "/G/S/providers")
//   K is a hash: field = provider url, value = its expiry, wall-clock milliseconds since the Unix
//   epoch (as Dubbo). register = HSET K url now+session, then PUBLISH K "register"; unregister =
//   HDEL K url, then PUBLISH K "unregister". Each change is published on channel K.
//   Clock skew: expiries are written with the provider's wall clock and compared with the
//   subscriber's; a skew of d moves every bound below by d. Keep clocks synchronised (NTP) to
//   well under session / 2.
//
// Liveness of registrations (session = RegistryOptions::session, >= 1 s)
//   Every session / 2 a PeriodicTask on the shared wheel re-HSETs every url this client wants
//   registered (EngineEvents::registered()) with a fresh expiry; a url the HSET creates (the
//   server lost it) is PUBLISHed too. A renewal that fails is simply retried next period; none is
//   made while disconnected (recover() re-registers after the reconnect).
//   Every session / 2 (a second PeriodicTask) each subscribing client sweeps each subscribed
//   service: one atomic Lua script HDELs the fields whose expiry has passed and PUBLISHes K
//   "unregister" if it removed any; then the client re-reads K. Bound: a provider whose client dies
//   without unregistering (at time D) stays listed at least until D + session / 2 (its last renewal
//   was less than session / 2 + one wheel tick before D) and is gone for every subscriber by D
//   + 1.5 × session + one wheel tick + two round trips (expiry <= D + session, then at most one
//   sweep period): removalBound() = 1.5 × session.
//
// Notifications
//   On each message of K, and once after each (re)subscribe, the client HGETALLs K, drops the
//   fields whose expiry passed, and calls the NotifyListeners of S with the sorted live list on
//   the loop thread: after a subscribe always (the subscribing listener at least, all of them if
//   the list changed); after a message or a sweep only if the list changed since the last one.
//
// Connection (two connections: commands, and one in subscribe mode)
//   Connected = both TCP connects done, PING answered and this client's heartbeat channel
//   subscribed, within ClientOptions::connectTimeout (else torn down as a failed attempt).
//   The pair is kept by the same tasks as a TcpClient's connection (tasks/heartbeat_tasks.h), on
//   the shared wheel with client.heartbeat's options, the two links seen as one channel: its last
//   read is the older of the two links' last reads (alive = both answer), its last write the
//   command link's, connected = the handshake above done, connecting = an attempt in flight.
//   Heartbeat (HeartbeatTimerTask, checked every heartbeat / 3): once the pair is read- or
//   write-idle for client.heartbeat.interval, the client PUBLISHes on its own heartbeat channel
//   "/G/-heartbeat/<random>" — the reply proves the command link alive, the message the
//   subscriber link.
//   Half-open (ReconnectTimerTask, checked every idleTimeout / 3): a link silent for idleTimeout
//   (default 3 × heartbeat) while no input waits unread on either socket gets both torn down and
//   connected again at once (retry error name "read-idle"); found within idleTimeout +
//   idleTimeout / 3 + one wheel tick of the last answer.
//   A lost link, or a failed attempt (refused, handshake error, connect timeout), tears both down:
//   pending calls fail "disconnected"; the next attempt waits client.heartbeat.reconnect's
//   next delay counted from the loss (error name "disconnected"), the first one after an outage
//   its initial delay; an attempt in flight is never doubled nor counted as failed. A policy that
//   gives up leaves the engine down (logged as an error). Every successful connect is reported
//   (EngineEvents::connected()), and after each reconnect (not the first connect) the Registry
//   recover()s: every registration and subscription is re-sent (a restarted server may be empty).
//   Each call is bounded by RegistrySetup::requestTimeout ("timeout"). Error replies (e.g.
//   WRONGTYPE) fail the call with "rejected"; like every error they go through FailbackOptions'
//   policy (retried unless registryRetry.ignore names "rejected"; with check = true a first
//   attempt's rejection is reported, not retried).
//
// Threads: as Engine (engine.h); stats(), removalBound(): any thread. NotifyListener::notify runs
// on the loop thread. Close every Registry before stopping its EventLoop (EventLoop::stop() frees
// a connection still open, but the registry is then dead).
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/registry/engine.h>
#include <wheelbeat/registry/options.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace wheelbeat::registry {

class RedisEngine : public Engine {
public:
  struct Stats {
    std::uint64_t connects = 0;     // attempts that completed the handshake (the first included)
    std::uint64_t reconnects = 0;   // of which after the first (each followed by recover())
    std::uint64_t disconnects = 0;  // connections torn down after being up (lost, idle)
  };
  [[nodiscard]] virtual Stats stats() const noexcept = 0;

  // 1.5 × session: see "Liveness of registrations".
  [[nodiscard]] virtual std::chrono::nanoseconds removalBound() const noexcept = 0;
  // "/{group}/{service}/providers": the hash and the channel of a service.
  [[nodiscard]] static std::string providersKey(std::string_view group, std::string_view service);
};

// Throws std::invalid_argument for an invalid setup (validate(RegistrySetup): RegistryOptions,
// ClientOptions — whose `server` is replaced by registry.address — FailbackOptions,
// requestTimeout <= 0) or a kind other than Redis. The loop and the timer must outlive the engine.
[[nodiscard]] std::unique_ptr<RedisEngine> makeRedisEngine(net::EventLoop& loop,
                                                           core::HashedWheelTimer& timer,
                                                           const RegistrySetup& setup);

}  // namespace wheelbeat::registry
