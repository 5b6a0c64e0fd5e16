// Provider: serves Dubbo 2 calls on a net::TcpServer — methods by interface, name and JVM
// descriptor, as a Java Dubbo provider does, so Java, Node and wheelbeat consumers can call it.
//
//   dubbo::Provider provider;
//   provider.add({.interface = "org.example.Greeter"}, "sayHello", "Ljava/lang/String;",
//                [](const dubbo::Request& r) {
//                  return hessian::Value::string("hello " + r.args[0].asString());
//                });
//   net::TcpServer server(loop, timer, options, provider.channelHandler());
//   registry->registerUrl(provider.providerUrl(serviceOptions, {host, server.listen()}, hb));
//
// What a request gets (Dubbo's answers, status byte and words):
//   the method's value                  status 20, flag 1/2 (4/5 for clients >= 2.0.2)
//   an ApplicationException thrown      status 20, flag 0/3: the Throwable (exception.h)
//   any other exception thrown          status 20, a java.lang.RuntimeException with its what()
//   "$echo" (Ljava/lang/Object;)        its argument, for every service served
//   "$invoke" (generic: method, types,  the method named, with the Java types given
//    args)
//   a body that does not decode, an     status 40 (bad request): "Fail to decode request due
//   unknown service path or method      to: ...", naming the path, method and descriptor
//   the path served, but not in that    status 70 (service error): "Not found exported service:
//   version / group                     GROUP/PATH:VERSION in [...], may be version or group
//                                       mismatch"
//   another serialization than 2        status 40, naming it
// Versions match as Dubbo's: null, "" and "0.0.0" mean no version; the group comes from the
// "group" attachment ("" none). One-way requests run the method and get no answer.
//
// Threads: add() / addAsync() / addInPlace() before the server starts (not concurrently with
// calls). The handlers run on the loop thread of the call's channel (several at once on a loop
// group): they must not block — an async handler answers later through its Reply, from any thread.
// stats(), methods(), providerUrl(): any thread. The Provider must outlive the servers whose
// ChannelHandler it made.
#pragma once

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/dubbo/call_view.h>
#include <wheelbeat/dubbo/exception.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/registry/service.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::dubbo {

/// A service as Dubbo keys it: interface (the request's path), version, group.
struct ServiceId {
  std::string interface {};
  /// "" and "0.0.0" both mean none.
  std::string version{};
  std::string group{};
};

namespace detail {
struct ReplyState;
}

/// The answer to one call, given once, later, from any thread (an async handler's). Sends
/// nothing if the connection closed meanwhile. A Reply destroyed unanswered answers status 70
/// "the provider dropped the call without an answer". Move-only.
class Reply {
public:
  explicit Reply(std::shared_ptr<detail::ReplyState> state);
  Reply(Reply&&) noexcept;
  Reply& operator=(Reply&&) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  /// A returned value (null: Java's null return). Returns false if nothing was sent (answered
  /// before, one-way call, or the connection is gone).
  bool value(hessian::Value value);
  /// An application exception of class `className` (kRuntimeException when empty).
  bool exception(std::string_view className, std::string_view message);
  /// A response with another status than 20 (status::...), carrying `message`.
  bool error(std::uint8_t status, std::string_view message);

private:
  std::shared_ptr<detail::ReplyState> state_;
};

/// Returns the method's value, or throws ApplicationException (any other exception becomes a
/// java.lang.RuntimeException with its what()). Runs on the loop thread: must not block.
using Handler = std::function<hessian::Value(const Request&)>;
/// Answers through `reply`, now or later (a timeout on the wheel, another thread's work). The
/// Request, as a Handler's, is valid only during the call (the loop thread reuses its storage for
/// the next call): copy what a later answer needs.
using AsyncHandler = std::function<void(const Request&, Reply reply)>;

/// The method name and descriptor that match any method of a service (a catch-all handler).
inline constexpr std::string_view kAnyMethod = "*";

class Provider {
public:
  /// Throws std::invalid_argument for invalid limits.
  explicit Provider(BodyLimits limits = {});
  ~Provider();
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  /// Serves `method` with parameter `descriptor` ("" for none). A descriptor kAnyMethod serves
  /// the name with any descriptor; a method kAnyMethod serves any call of the service not served
  /// otherwise (an exact name and descriptor first, then the name alone, then kAnyMethod). Throws
  /// std::invalid_argument for an empty interface or method, a malformed descriptor, or a method
  /// already served with that descriptor (naming it); nothing changes then.
  void add(const ServiceId& service, std::string method, std::string descriptor, Handler handler);
  void addAsync(const ServiceId& service, std::string method, std::string descriptor,
                AsyncHandler handler);
  /// Serves the method in place (call_view.h): the handler reads the call's strings where the
  /// frame holds them and answers before it returns, the cheapest way to serve a call. The same
  /// rules and throws as add().
  void addInPlace(const ServiceId& service, std::string method, std::string descriptor,
                  InPlaceHandler handler);

  /// The callbacks to give net::TcpServer (they keep a pointer to this Provider).
  net::ChannelHandler channelHandler();
  /// One inbound frame (what channelHandler()'s onFrame does). Loop thread of `channel`.
  void onFrame(net::Channel& channel, const net::FrameView& frame);

  /// The method names served for `service` (sorted, without kAnyMethod), as the registry's
  /// `methods` lists them.
  std::vector<std::string> methods(const ServiceId& service) const;
  /// registry::providerUrl() of `options` with `methods` set to methods() of the service
  /// options names (interface, version, group). Throws std::invalid_argument when this
  /// Provider serves no method of it, or what providerUrl() throws.
  std::string providerUrl(registry::ServiceOptions options, const net::Endpoint& advertised,
                          std::chrono::nanoseconds heartbeat) const;

  struct Stats {
    std::uint64_t requests = 0;    // two-way and one-way requests received
    std::uint64_t values = 0;      // answered with a value (or null)
    std::uint64_t exceptions = 0;  // answered with an application exception
    std::uint64_t errors = 0;      // answered with a status other than 20
  };
  Stats stats() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace wheelbeat::dubbo
