// The provider url and service name rules every engine shares: a provider url looks like
// "wheelbeat://10.0.0.7:20880/greeter?weight=100" — scheme, "://", host:port, "/", the service
// name, optional "?query" — and its service is the path. Private to the registry layer (Registry
// checks every url and service with these before any engine sees it).
//
// Pure functions, no I/O. Thread: any.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::registry {

// A malformed url, service name or (embedded protocol) message body; what() names the offending
// text and what was expected: `registry: url "greeter" (expected: ...)`.
class RegistryProtocolError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The service of a provider url ("wheelbeat://h:1/greeter?x=1" → "greeter"). Throws
// RegistryProtocolError naming the url when it is not scheme://authority/service[?query] or
// contains whitespace.
[[nodiscard]] std::string serviceOfUrl(std::string_view url);

// Throws RegistryProtocolError unless `service` is a valid service name: non-empty, no
// whitespace, no '/', no '?'.
void checkServiceName(std::string_view service);

namespace detail {
// Throws RegistryProtocolError(`registry: <what> "<text>" (expected: <expected>)`).
[[noreturn]] void failProtocol(std::string_view what, std::string_view text,
                               std::string_view expected);
[[nodiscard]] bool hasSpace(std::string_view s) noexcept;
}  // namespace detail

}  // namespace wheelbeat::registry
