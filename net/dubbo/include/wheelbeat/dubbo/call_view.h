// CallView and Answer: a Dubbo call served in place, for the methods where a provider's CPU per
// call matters (Provider::addInPlace). The handler reads the request's strings as views of the
// frame's body and writes its answer straight into the response: nothing is copied into a
// Request, no Value is built for a string argument or result.
//
//   provider.addInPlace({.interface = "org.example.Greeter"}, "sayHello", "Ljava/lang/String;",
//                       [](const dubbo::CallView& call, dubbo::Answer& answer) {
//                         const auto name = call.stringArg(0);
//                         answer.string("hello " + std::string(name.value_or("stranger")));
//                       });
//
// Every body is served: one whose strings are all short ASCII with string arguments and an
// untyped map of string attachments (what Java, Node and wheelbeat consumers send for such
// methods) is read in place; any other is decoded into a Request first, and the view reads that.
// Either way the handler sees the same call.
//
// Lifetime and threads: a CallView and its views, and the Answer, are valid only during the
// handler's call, on the loop thread of the call's channel; copy what outlives it. One thread uses
// them at a time (request() decodes on first use).
#pragma once

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/hessian/value.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace wheelbeat::dubbo {

namespace detail {
struct ScannedCall;
struct ReplyState;
struct CallViewAccess;
}  // namespace detail

class CallView {
public:
  std::string_view dubboVersion() const { return dubboVersion_; }
  /// The service path (usually the interface name).
  std::string_view path() const { return path_; }
  /// The service version as the body carries it; nullopt when it is Hessian null.
  std::optional<std::string_view> version() const { return version_; }
  std::string_view method() const { return method_; }
  /// The JVM parameter descriptor, e.g. "Ljava/lang/String;I".
  std::string_view descriptor() const { return descriptor_; }
  std::size_t argCount() const;
  /// Argument `i` when it is a string (a view: valid during the call), else nullopt. Throws
  /// std::out_of_range naming i and argCount() when i >= argCount().
  std::optional<std::string_view> stringArg(std::size_t i) const;
  /// Argument `i` as a Value (a copy). Throws std::out_of_range as stringArg().
  hessian::Value arg(std::size_t i) const;
  /// The attachment `key` when it is a string, else `fallback` (absent, null or another type).
  std::string_view attachment(std::string_view key, std::string_view fallback = {}) const;
  /// The whole call as a Handler gets it, decoded on the first use (the same Request
  /// decodeRequest() returns for the body).
  const Request& request() const;

private:
  friend struct detail::CallViewAccess;
  CallView() = default;

  std::string_view dubboVersion_, path_, method_, descriptor_;
  std::optional<std::string_view> version_;
  const detail::ScannedCall* scanned_ = nullptr;  // read in place, or
  const Request* request_ = nullptr;              // decoded
  std::string_view body_;
  const BodyLimits* limits_ = nullptr;
  mutable std::unique_ptr<Request> decoded_;  // request() of a call read in place
};

/// The answer to one in-place call: the first of its calls sends it; later ones return false.
/// A handler that returns without answering (and without throwing) answers status 70 (service
/// error) "the provider's handler returned without an answer". Each returns false when nothing
/// was sent (answered before, a one-way call, or the channel is gone).
class Answer {
public:
  /// A returned java.lang.String.
  bool string(std::string_view s);
  /// A returned value (null: Java's null return).
  bool value(const hessian::Value& value);
  /// An application exception of class `className` (kRuntimeException when empty).
  bool exception(std::string_view className, std::string_view message);
  /// A response with another status than 20 (status::...), carrying `message`.
  bool error(std::uint8_t status, std::string_view message);
  /// Whether an answer was given (or none is due: a one-way call).
  bool answered() const;

  Answer(const Answer&) = delete;
  Answer& operator=(const Answer&) = delete;

private:
  friend struct detail::CallViewAccess;
  explicit Answer(detail::ReplyState& state) : state_(state) {}
  detail::ReplyState& state_;
};

/// Serves one in-place call: answers through `answer` before returning, or throws
/// ApplicationException (any other exception becomes a java.lang.RuntimeException with its
/// what()), as a Handler. Runs on the loop thread: must not block.
using InPlaceHandler = std::function<void(const CallView& call, Answer& answer)>;

}  // namespace wheelbeat::dubbo
