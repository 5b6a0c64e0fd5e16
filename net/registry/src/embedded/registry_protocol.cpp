#include <wheelbeat/net/registry_protocol.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace wheelbeat::net {
namespace {

constexpr std::array<std::pair<RegistryCommand, std::string_view>, 5> kCommands{{
    {RegistryCommand::Register, "register"},
    {RegistryCommand::Unregister, "unregister"},
    {RegistryCommand::Subscribe, "subscribe"},
    {RegistryCommand::Unsubscribe, "unsubscribe"},
    {RegistryCommand::Notify, "notify"},
}};

[[noreturn]] void fail(std::string_view what, std::string_view text, std::string_view expected) {
  throw RegistryProtocolError(
      fmt::format("registry: {} \"{}\" (expected: {})", what, text, expected));
}

bool hasSpace(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

void checkProvider(std::string_view service, std::string_view url) {
  if (serviceOfUrl(url) != service) {
    fail("provider", url, fmt::format("a url of service {}", service));
  }
}

bool takesUrl(RegistryCommand c) {
  return c == RegistryCommand::Register || c == RegistryCommand::Unregister;
}

void checkSubject(RegistryCommand command, std::string_view subject) {
  if (takesUrl(command)) {
    (void)serviceOfUrl(subject);
  } else {
    checkServiceName(subject);
  }
}

RegistryCommand commandOf(std::string_view word) {
  for (const auto& [command, name] : kCommands) {
    if (name == word) return command;
  }
  fail("command", word, "register, unregister, subscribe, unsubscribe or notify");
}

}  // namespace

std::string_view registryCommandName(RegistryCommand command) noexcept {
  for (const auto& [c, name] : kCommands) {
    if (c == command) return name;
  }
  return "unknown";
}

void checkServiceName(std::string_view service) {
  if (service.empty() || hasSpace(service) ||
      service.find_first_of("/?") != std::string_view::npos) {
    fail("service", service, "a non-empty name without whitespace, '/' or '?'");
  }
}

std::string serviceOfUrl(std::string_view url) {
  constexpr std::string_view kExpected = "scheme://host:port/service[?query], no whitespace";
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos || scheme == 0 || hasSpace(url)) fail("url", url, kExpected);
  const auto slash = url.find('/', scheme + 3);
  if (slash == std::string_view::npos || slash == scheme + 3) fail("url", url, kExpected);
  const std::string_view service = url.substr(slash + 1, url.find('?', slash) - slash - 1);
  if (service.empty() || service.find('/') != std::string_view::npos) fail("url", url, kExpected);
  return std::string(service);
}

std::string encodeRegistryMessage(const RegistryMessage& m) {
  checkSubject(m.command, m.subject);
  if (m.command != RegistryCommand::Notify && !m.providers.empty()) {
    fail("providers on", registryCommandName(m.command), "providers only on notify");
  }
  std::string body = fmt::format("{} {}", registryCommandName(m.command), m.subject);
  for (const auto& p : m.providers) {
    checkProvider(m.subject, p);
    body += '\n';
    body += p;
  }
  return body;
}

RegistryMessage decodeRegistryMessage(std::string_view body) {
  const auto eol = body.find('\n');
  const std::string_view first = body.substr(0, eol);
  const auto space = first.find(' ');
  if (space == std::string_view::npos) fail("message", first, "\"<command> <subject>\"");
  RegistryMessage m;
  m.command = commandOf(first.substr(0, space));
  m.subject = std::string(first.substr(space + 1));
  checkSubject(m.command, m.subject);
  if (eol == std::string_view::npos) return m;
  if (m.command != RegistryCommand::Notify) fail("providers on", first, "providers only on notify");
  std::string_view rest = body.substr(eol + 1);
  while (!rest.empty()) {
    const auto next = rest.find('\n');
    const std::string_view url = rest.substr(0, next);
    checkProvider(m.subject, url);
    m.providers.emplace_back(url);
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
  }
  return m;
}

}  // namespace wheelbeat::net
