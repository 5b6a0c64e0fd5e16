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
// Urls and service names follow the shared rules of service_url.h. Private to the registry
// layer (the embedded engine and RegistryServer).
//
// Pure functions, no I/O. Thread: any.
#pragma once

#include "../service_url.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::registry {

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

// The body text of `message`. Throws RegistryProtocolError if a subject or provider is invalid
// (see decodeRegistryMessage()).
[[nodiscard]] std::string encodeRegistryMessage(const RegistryMessage& message);

// Parses a body. Throws RegistryProtocolError: unknown command, missing subject, an invalid url
// (register / unregister / notify providers, see serviceOfUrl()), an invalid service name
// (checkServiceName()), a notify provider of another service, or providers
// on a command other than notify.
[[nodiscard]] RegistryMessage decodeRegistryMessage(std::string_view body);

}  // namespace wheelbeat::registry
