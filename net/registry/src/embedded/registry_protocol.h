// The embedded registry's wire protocol: application frames of the exchange codec (codec.h)
// whose serialization id is kRegistrySerialization and whose body is one line of UTF-8 text.
//
//   client → registry  request, two-way   "register <url>" | "unregister <url>" |
//                                         "subscribe <service>" | "unsubscribe <service>"
//   registry → client  response, same id  status 20 (OK), empty body; or status 40 (BAD_REQUEST)
//                                         with the reason as body
//   registry → client  request, one-way   "notify <service>\n<url>\n<url>…" — the full provider
//                                         list of a subscribed service, after each change and
//                                         once right after each successful subscribe
// A provider url looks like "wheelbeat://10.0.0.7:20880/greeter?weight=100": scheme, "://",
// host:port, "/", the service name, optional "?query". Its service is the path.
//
// Pure functions, no I/O. Thread: any.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::net {

inline constexpr std::uint8_t kRegistrySerialization = 30;  // unused by Dubbo (2..21)
inline constexpr std::uint8_t kStatusBadRequest = 40;       // Dubbo's BAD_REQUEST

enum class RegistryCommand { Register, Unregister, Subscribe, Unsubscribe, Notify };

// "register", "unregister", "subscribe", "unsubscribe", "notify".
[[nodiscard]] std::string_view registryCommandName(RegistryCommand command) noexcept;

struct RegistryMessage {
  RegistryCommand command = RegistryCommand::Register;
  std::string subject;                 // the url (register / unregister) or the service
  std::vector<std::string> providers;  // notify only

  friend bool operator==(const RegistryMessage&, const RegistryMessage&) = default;
};

// A malformed body or url; what() names the offending text and what was expected.
class RegistryProtocolError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The body text of `message`. Throws RegistryProtocolError if a subject or provider is invalid
// (see decodeRegistryMessage()).
[[nodiscard]] std::string encodeRegistryMessage(const RegistryMessage& message);

// Parses a body. Throws RegistryProtocolError: unknown command, missing subject, an invalid url
// (register / unregister / notify providers, see serviceOfUrl()), an invalid service name
// (non-empty, no whitespace, no '/', '?'), a notify provider of another service, or providers
// on a command other than notify.
[[nodiscard]] RegistryMessage decodeRegistryMessage(std::string_view body);

// The service of a provider url ("wheelbeat://h:1/greeter?x=1" → "greeter"). Throws
// RegistryProtocolError naming the url when it is not scheme://authority/service[?query] or
// contains whitespace.
[[nodiscard]] std::string serviceOfUrl(std::string_view url);

// Throws RegistryProtocolError unless `service` is a valid service name.
void checkServiceName(std::string_view service);

}  // namespace wheelbeat::net
