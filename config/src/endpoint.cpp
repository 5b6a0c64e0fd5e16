// "host:port" endpoints. IPv6 literals are bracketed ("[::1]:20880"), as in URLs, so the last
// colon is always the port's.
#include "values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace wheelbeat::config::detail {
namespace {

bool validHost(std::string_view host) {
  return !host.empty() && std::none_of(host.begin(), host.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '[' || c == ']' || c == '/';
  });
}

// 1..5 decimal digits, nothing else.
std::optional<std::uint32_t> parsePort(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  std::uint32_t port = 0;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
    port = port * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return port;
}

// Splits "host:port" / "[v6]:port" into host (brackets removed) and port text.
std::optional<std::pair<std::string_view, std::string_view>> split(std::string_view s) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = s.substr(0, colon);
  if (host.starts_with('[')) {
    if (!host.ends_with(']') || host.size() < 3) return std::nullopt;
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string_view::npos) return std::nullopt;  // brackets: IPv6 only
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an unbracketed IPv6 literal: its port would be ambiguous
  }
  return std::pair{host, s.substr(colon + 1)};
}

}  // namespace

bool readEndpoint(Errors& errors, const Json& value, const std::string& pointer, net::Endpoint& out,
                  std::uint16_t minPort) {
  std::optional<std::pair<std::string_view, std::string_view>> parts;
  std::optional<std::uint32_t> port;
  if (value.is_string()) parts = split(value.get_ref<const std::string&>());
  if (parts && validHost(parts->first)) port = parsePort(parts->second);
  if (!port || *port < minPort || *port > 65535) {
    errors.add(pointer, value,
               fmt::format("\"host:port\" (IPv6: \"[::1]:20880\") with a port in {}..65535{}",
                           minPort, minPort == 0 ? ", 0 = any free port" : ""));
    return false;
  }
  out.host = std::string(parts->first);
  out.port = static_cast<std::uint16_t>(*port);
  return true;
}

std::string formatEndpoint(const net::Endpoint& e) {
  if (e.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", e.host, e.port);
  return fmt::format("{}:{}", e.host, e.port);
}

}  // namespace wheelbeat::config::detail
