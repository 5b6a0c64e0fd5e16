// Application exceptions as Java writes them in a Dubbo 2 response (flag 0 or 3): the Throwable
// object, serialized field by field as Hessian's JavaSerializer orders them —
//   detailMessage          string or null
//   cause                  a ref to the exception itself when there is none (Throwable's rule)
//   stackTrace             an array of java.lang.StackTraceElement (empty here)
//   suppressedExceptions   a list (empty here)
// under the class name of the thrower ("java.lang.RuntimeException" unless told). Java peers
// rebuild the exception of that class when they have it.
//
// Threads: plain data and pure functions; any thread.
#pragma once

#include <wheelbeat/hessian/value.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::dubbo {

inline constexpr std::string_view kRuntimeException = "java.lang.RuntimeException";

/// An exception of the application: a Java class name and a message. A provider's handler
/// throws it to answer with that exception; a consumer's call reports one this way.
class ApplicationException : public std::runtime_error {
public:
  /// An empty `className` means kRuntimeException.
  ApplicationException(std::string className, std::string message);
  const std::string& className() const noexcept { return className_; }
  const std::string& message() const noexcept { return message_; }

private:
  std::string className_;
  std::string message_;
};

/// The Throwable object Java writes for `className` and `message` (see the file comment; the
/// cause is a BackRef to the object itself, which the returned Value owns).
hessian::Value makeThrowable(std::string_view className, std::string_view message);

/// The class name and message of a decoded exception: an Object's class and its detailMessage
/// (a string, or "" when null or absent); a typed Map (what some readers make of an unknown
/// class) its type and "detailMessage" entry; anything else gives the value's type name and ""
/// — never throws.
ApplicationException describeThrowable(const hessian::Value& throwable);

}  // namespace wheelbeat::dubbo
