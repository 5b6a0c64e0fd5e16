// Engine: what a Registry (registry.h) needs of a registry engine — embedded, Redis, ZooKeeper,
// or one of your own. The Registry owns everything engines have in common (URL checks, the
// FailbackRegistry and its retries, recover() after a reconnect, start()'s wait for the first
// attempt); an engine only moves registrations and subscriptions to and from its server and
// reports the state of its connection through EngineEvents.
//
// Life of an engine inside a Registry (one Registry per engine, never shared):
//   constructed (by a factory, not connected)  →  start(events) once  →  do-calls, isConnected()
//   any time  →  close() once (also without start()), then destroyed once the last in-flight
//   completion is gone (the FailbackRegistry shares ownership). The Registry owns its engine
//   through a std::shared_ptr<Engine>, so weak_from_this() / shared_from_this() work from start()
//   on (callbacks that may outlive the engine hold a weak_ptr).
#pragma once

#include <wheelbeat/registry/backend.h>

#include <memory>
#include <string>
#include <vector>

namespace wheelbeat::registry {

// What an engine reports to its Registry, and may ask of it. Implemented by Registry; every
// member: any thread (engines call them from their loop thread), never blocks, safe to call
// during and after Registry::close() (then a no-op / empty).
class EngineEvents {
public:
  // The connection is up: the engine can serve calls now. The first one ends the wait of
  // Registry::start(); every later one is a reconnect, after which the Registry re-sends every
  // registration and subscription (FailbackRegistry::recover()): the server may have restarted
  // empty. Report it once per connection, after the engine is ready to take those calls.
  virtual void connected() = 0;
  // A connect attempt failed or a connection was lost (the engine reconnects by itself, with
  // its own backoff). Before the first connected() this ends the wait of Registry::start() too.
  virtual void disconnected() = 0;
  // The urls the application wants registered now (FailbackRegistry::registered(), sorted), for
  // engines that renew their registrations periodically (Redis). Every url is valid.
  [[nodiscard]] virtual std::vector<std::string> registered() const = 0;

protected:
  ~EngineEvents() = default;
};

// RegistryBackend's do-calls (backend.h) are the engine's data path. Their contract:
// called by the Registry's FailbackRegistry from any thread, with valid arguments (a url that
// passes the Registry's checks, a valid service name, a non-null listener); asynchronous, never
// blocking; `done` called exactly once, from any thread (possibly before returning), with
// CallResult::failure(error, message) on failure — error names the policy can match:
// "disconnected" (no connection, or it died before the answer), "timeout" (no answer within
// RegistrySetup::requestTimeout), "rejected" (the server refused the request); a call after
// close() fails "disconnected". doSubscribe: the listener joins at once; its NotifyListener gets
// the service's full sorted provider list on the engine's loop thread, once after each
// successful subscribe and after each change; doUnsubscribe: the listener hears nothing more
// once it has completed.
class Engine : public RegistryBackend, public std::enable_shared_from_this<Engine> {
public:
  ~Engine() override = default;

  // Starts connecting and returns at once (never waits for the connection). Called once, before
  // any do-call, not from the engine's loop thread. `events` is valid until close() returns; the
  // engine keeps it and reports every connect, failed attempt and loss through it.
  virtual void start(std::shared_ptr<EngineEvents> events) = 0;
  // Stops reconnecting and closes the connection(s); calls in flight fail "disconnected".
  // Registrations are not withdrawn (the engine's liveness rule removes them). Called once,
  // after the Registry stopped its retries, not from the engine's loop thread; once it returns,
  // `events` is not called any more.
  virtual void close() = 0;
  // The connection is up now (between connected() and the next disconnected()). Any thread.
  [[nodiscard]] virtual bool isConnected() const noexcept = 0;
};

}  // namespace wheelbeat::registry
