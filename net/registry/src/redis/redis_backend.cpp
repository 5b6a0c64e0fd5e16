// The data half of RedisBackend (see redis_backend.h and redis_engine.h for the model): calls,
// notifications, renewal, expiry sweeps. Loop thread, except the do* entries.
#include "redis_backend.h"

#include "../service_url.h"

#include <wheelbeat/core/log.h>

#include <algorithm>
#include <charconv>
#include <utility>

namespace wheelbeat::registry {

namespace {

using detail::RedisReply;
using tasks::CallResult;

std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The urls of an HGETALL reply whose expiry is after `nowMs`, sorted. A value that is not a
// number (another writer's) is neither listed nor swept.
std::vector<std::string> liveProviders(const RedisReply& all, std::int64_t nowMs) {
  std::vector<std::string> live;
  for (std::size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    const std::string& v = all.elements[i + 1].str;
    std::int64_t expiry = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), expiry);
    if (ec == std::errc() && end == v.data() + v.size() && expiry > nowMs) {
      live.push_back(all.elements[i].str);
    }
  }
  std::sort(live.begin(), live.end());
  return live;
}

// Atomic compare-and-delete: a renewal landing between a read and an HDEL of the client would
// otherwise be deleted although live.
constexpr const char* kSweepScript = R"lua(
local removed = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local e = tonumber(all[i + 1])
  if e and e <= tonumber(ARGV[1]) then
    redis.call('HDEL', KEYS[1], all[i])
    removed = removed + 1
  end
end
if removed > 0 then redis.call('PUBLISH', KEYS[1], 'unregister') end
return removed)lua";

void ignoreResult(const CallResult& /*result*/, const RedisReply& /*reply*/) {}

// The backend contract: `done` exactly once. A loop that no longer runs posts answers it here.
void refuse(const tasks::Completion& done) {
  done(CallResult::failure("disconnected", "the event loop is stopped"));
}

}  // namespace

std::string RedisBackend::keyOf(const std::string& service) const {
  return providersKey(config_.group, service);
}

std::string RedisBackend::expiryFromNow() const {
  const auto sessionMs = std::chrono::duration_cast<std::chrono::milliseconds>(config_.session);
  return std::to_string(wallMs() + sessionMs.count());
}

void RedisBackend::publish(const std::string& key, const char* message, tasks::Completion done) {
  cmd_->command({"PUBLISH", key, message},
                [done = std::move(done)](const CallResult& r, const RedisReply&) {
                  if (done) done(r.ok ? CallResult::success() : r);
                });
}

void RedisBackend::doRegister(const std::string& url, tasks::Completion done) {
  const bool posted = post([url, done](RedisBackend& self) {
    const std::string key = self.keyOf(serviceOfUrl(url));
    self.cmd_->command({"HSET", key, url, self.expiryFromNow()},
                       [&self, key, done](const CallResult& r, const RedisReply&) {
                         if (!r.ok) return done(r);
                         self.publish(key, "register", done);
                       });
  });
  if (!posted) refuse(done);
}

void RedisBackend::doUnregister(const std::string& url, tasks::Completion done) {
  const bool posted = post([url, done](RedisBackend& self) {
    const std::string key = self.keyOf(serviceOfUrl(url));
    self.cmd_->command({"HDEL", key, url},
                       [&self, key, done](const CallResult& r, const RedisReply&) {
                         if (!r.ok) return done(r);
                         self.publish(key, "unregister", done);
                       });
  });
  if (!posted) refuse(done);
}

// The listener joins at once (wanted state); the call succeeds once the channel is subscribed
// and the list was read and delivered — in that order, so no change between them is missed.
void RedisBackend::doSubscribe(const std::string& service, std::shared_ptr<NotifyListener> listener,
                               tasks::Completion done) {
  const bool posted = post([service, listener, done](RedisBackend& self) {
    const std::string key = self.keyOf(service);
    self.listeners_[service].insert(listener);
    self.serviceOfChannel_[key] = service;
    self.sub_->subscribe(key,
                         [&self, service, listener, done](const CallResult& r, const RedisReply&) {
                           if (!r.ok) return done(r);
                           self.refresh(service, listener, done);
                         });
  });
  if (!posted) refuse(done);
}

// Succeeds once the local state changed: a subscription dies with its connection anyway, and no
// listener left means the channel is not subscribed again after a reconnect.
void RedisBackend::doUnsubscribe(const std::string& service,
                                 std::shared_ptr<NotifyListener> listener, tasks::Completion done) {
  const bool posted = post([service, listener, done](RedisBackend& self) {
    const auto it = self.listeners_.find(service);
    if (it != self.listeners_.end()) {
      it->second.erase(listener);
      if (it->second.empty()) {
        const std::string key = self.keyOf(service);
        self.listeners_.erase(it);
        self.lastNotified_.erase(service);
        self.serviceOfChannel_.erase(key);
        self.sub_->unsubscribe(key);
      }
    }
    done(CallResult::success());
  });
  if (!posted) refuse(done);
}

void RedisBackend::onPush(const RedisReply& reply) {
  if (reply.type != RedisReply::Type::Array || reply.elements.size() < 3) return;
  if (reply.elements[0].str != "message") return;
  const auto it = serviceOfChannel_.find(reply.elements[1].str);
  if (it != serviceOfChannel_.end()) refresh(it->second, nullptr, nullptr);
}

// HGETALL, then deliver. `forListener` (after a subscribe) is told even if nothing changed.
void RedisBackend::refresh(const std::string& service,
                           const std::shared_ptr<NotifyListener>& forListener,
                           const tasks::Completion& done) {
  cmd_->command({"HGETALL", keyOf(service)},
                [this, service, forListener, done](const CallResult& r, const RedisReply& all) {
                  if (!r.ok) {
                    if (done) done(r);
                    return;
                  }
                  deliver(service, liveProviders(all, wallMs()), forListener);
                  if (done) done(CallResult::success());
                });
}

void RedisBackend::deliver(const std::string& service, const std::vector<std::string>& live,
                           const std::shared_ptr<NotifyListener>& forListener) {
  const auto it = listeners_.find(service);
  if (it == listeners_.end()) return;  // unsubscribed meanwhile
  const auto last = lastNotified_.find(service);
  const bool changed = last == lastNotified_.end() || last->second != live;
  // Built by the constructor, not assign() on an empty vector: GCC 12 at -O3 reports a potential
  // null dereference inside the inlined assign() (-Wnull-dereference, a false positive).
  using Targets = std::vector<std::shared_ptr<NotifyListener>>;
  Targets targets = changed ? Targets(it->second.begin(), it->second.end()) : Targets();
  if (!changed && forListener && it->second.contains(forListener)) targets.push_back(forListener);
  lastNotified_[service] = live;
  for (const auto& l : targets) {
    try {
      l->notify(service, live);
    } catch (const std::exception& e) {
      core::log(core::LogLevel::Warn, "redis registry: a listener of {} threw: {}", service,
                e.what());
    }
  }
}

// The sweep task's work (every session / 2).
void RedisBackend::sweepAll() {
  if (phase() != Phase::Up) return;  // the next period tries again; recover() re-reads anyway
  std::vector<std::string> services;
  for (const auto& [service, set] : listeners_) services.push_back(service);
  for (const auto& service : services) sweep(service);
}

// The renewal task's work (every session / 2). HSET returns 1 for a field it created: the server
// had lost the registration (restart, a sweep after a long outage), so the subscribers are told
// too. A renewal that fails is simply made again next period.
void RedisBackend::renew() {
  if (phase() != Phase::Up || !events_) return;
  const std::string expiry = expiryFromNow();
  for (const auto& url : events_->registered()) {
    std::string key;
    try {
      key = keyOf(serviceOfUrl(url));
    } catch (const RegistryProtocolError&) {
      continue;  // cannot happen: the Registry checks every url before it is wanted
    }
    cmd_->command({"HSET", key, url, expiry},
                  [this, key](const CallResult& r, const RedisReply& created) {
                    if (r.ok && created.integer == 1) publish(key, "register", nullptr);
                  });
  }
}

void RedisBackend::sweep(const std::string& service) {
  cmd_->command({"EVAL", kSweepScript, "1", keyOf(service), std::to_string(wallMs())},
                &ignoreResult);
  // Re-read even when nothing was removed here: another client's sweep or a missed message
  // (a subscriber link that died quietly) is caught up within one period.
  refresh(service, nullptr, nullptr);
}

}  // namespace wheelbeat::registry
