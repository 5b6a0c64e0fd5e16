// Consumer: Dubbo 2 calls to Java, Node or wheelbeat providers — by interface, method,
// descriptor (or Java type names), arguments and attachments — over one net::Channel or a
// cluster::ServiceClient (which picks the provider, retries and hedges as its options say).
//
//   dubbo::Call call{.interface = "org.example.Greeter", .method = "sayHello",
//                    .descriptor = dubbo::descriptorOf("java.lang.String"),
//                    .args = {hessian::Value::string("world")}};
//   dubbo::invoke(client, call, [](const dubbo::Outcome& o) {
//     if (o.kind == dubbo::OutcomeKind::Value) use(o.value);
//     else if (o.kind == dubbo::OutcomeKind::Exception) log(o.exceptionClass, o.message);
//     else log(o.error, o.message);                  // transport or status error
//   });
//
// Generic invocation (Dubbo's $invoke, for a consumer without the provider's classes):
// genericCall() turns (method, Java types, args) into the $invoke call.
//
// Threads: invoke() from any thread; `done` runs once, on the loop thread (or not at all when
// invoke() throws). Encoding happens on the calling thread.
#pragma once

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/net/channel.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace wheelbeat::dubbo {

/// One call to make.
struct Call {
  std::string interface {};  ///< also the request's path
  std::string method{};
  std::string descriptor{};  ///< descriptorOf(Java type names); "" for no parameter
  std::vector<hessian::Value> args{};
  std::string version{};  ///< "" = none (written as null)
  std::string group{};    ///< "" = none
  /// The request's timeout on one channel; also the "timeout" attachment. > 0.
  std::chrono::milliseconds timeout{1000};
  std::string application = "wheelbeat";
  /// More attachments (path, interface, version, group, timeout, application are set from the
  /// fields above unless given here).
  Attachments attachments{};
};

/// The $invoke call of `method` with parameters of Java types `types` (e.g. "java.lang.String")
/// and `args`, on `service` (whose version, group, timeout and attachments are kept).
Call genericCall(Call service, std::string method, std::vector<std::string> types,
                 std::vector<hessian::Value> args);

/// The request body of `call`: Request fields and attachments as Dubbo writes them. Throws
/// std::invalid_argument (an args count other than the descriptor's, a malformed descriptor,
/// an empty interface or method) or hessian::EncodeError.
Request makeRequest(const Call& call);

enum class OutcomeKind : std::uint8_t {
  Value,      ///< the method returned `value` (maybe null)
  Exception,  ///< the method threw: exceptionClass, message, value (the Throwable)
  Error,      ///< no answer, or a status other than 20: error, status, message
};
/// "value", "exception", "error".
std::string_view outcomeKindName(OutcomeKind kind) noexcept;

struct Outcome {
  OutcomeKind kind = OutcomeKind::Error;
  hessian::Value value;
  Attachments attachments;  ///< the response's, when it carried any
  std::string exceptionClass;
  /// Exception: its message. Error: what happened ("no response within 1000ms", the
  /// provider's error message, the refused body's error).
  std::string message;
  /// Error: the shared error name (tasks/error_names.h): "timeout", "disconnected",
  /// "bad-request", "rejected", "overloaded", "no-endpoint", ...
  std::string error;
  std::uint8_t status = 0;  ///< the response's status byte (0 when none arrived)
  /// invoke() over a cluster::ServiceClient only (empty / zero over one channel): the url of
  /// the provider whose answer decided (may be empty), the attempts made, whether a hedge won,
  /// and the whole call's latency, every attempt included.
  std::string provider;
  std::uint32_t attempts = 0;
  bool hedgeWon = false;
  std::chrono::nanoseconds latency{0};
};
using OutcomeCallback = std::function<void(const Outcome&)>;

/// The outcome of one response (status, body) or its absence, as a channel's request() gives
/// it. A status-20 body that does not decode is an Error "rejected" with status 50 (Dubbo's
/// bad response) naming why. Pure; any thread.
Outcome interpret(const net::CallResult& result, const BodyLimits& limits = {});

/// Calls over one channel (its request() with call.timeout). A refused send ends the call at
/// once with the send's error name ("disconnected", "overloaded", "bad-request"), on the
/// calling thread. Throws what makeRequest() throws.
void invoke(net::Channel& channel, const Call& call, OutcomeCallback done,
            const BodyLimits& limits = {});
/// Calls over a cluster client (its deadline: `options.deadline`, else the client's). Throws
/// what makeRequest() or ServiceClient::call() throws.
void invoke(cluster::ServiceClient& client, const Call& call, OutcomeCallback done,
            cluster::CallOptions options = {}, const BodyLimits& limits = {});

}  // namespace wheelbeat::dubbo
