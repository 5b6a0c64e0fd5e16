#include "service_url.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace wheelbeat::registry {

namespace detail {

void failProtocol(std::string_view what, std::string_view text, std::string_view expected) {
  throw RegistryProtocolError(
      fmt::format("registry: {} \"{}\" (expected: {})", what, text, expected));
}

bool hasSpace(std::string_view s) noexcept {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace detail

void checkServiceName(std::string_view service) {
  if (service.empty() || detail::hasSpace(service) ||
      service.find_first_of("/?") != std::string_view::npos) {
    detail::failProtocol("service", service, "a non-empty name without whitespace, '/' or '?'");
  }
}

std::string serviceOfUrl(std::string_view url) {
  using detail::failProtocol;
  constexpr std::string_view kExpected = "scheme://host:port/service[?query], no whitespace";
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos || scheme == 0 || detail::hasSpace(url)) {
    failProtocol("url", url, kExpected);
  }
  const auto slash = url.find('/', scheme + 3);
  if (slash == std::string_view::npos || slash == scheme + 3) failProtocol("url", url, kExpected);
  const std::string_view service = url.substr(slash + 1, url.find('?', slash) - slash - 1);
  if (service.empty() || service.find('/') != std::string_view::npos) {
    failProtocol("url", url, kExpected);
  }
  return std::string(service);
}

}  // namespace wheelbeat::registry
