// "host:port" endpoints, read by net::parseEndpoint (IPv6 literals bracketed, as in URLs).
#include "values.h"

#include <fmt/format.h>

#include <utility>

namespace wheelbeat::config::detail {

bool readEndpoint(Errors& errors, const Json& value, const std::string& pointer, net::Endpoint& out,
                  std::uint16_t minPort) {
  std::optional<net::Endpoint> parsed;
  if (value.is_string()) parsed = net::parseEndpoint(value.get_ref<const std::string&>());
  if (!parsed || parsed->port < minPort) {
    errors.add(pointer, value, endpointExpected(minPort));
    return false;
  }
  out = std::move(*parsed);
  return true;
}

std::string endpointExpected(std::uint16_t minPort) {
  return fmt::format(R"("host:port" (IPv6: "[::1]:20880") with a port in {}..65535{})", minPort,
                     minPort == 0 ? ", 0 = any free port" : "");
}

std::string formatEndpoint(const net::Endpoint& e) {
  if (e.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", e.host, e.port);
  return fmt::format("{}:{}", e.host, e.port);
}

}  // namespace wheelbeat::config::detail
