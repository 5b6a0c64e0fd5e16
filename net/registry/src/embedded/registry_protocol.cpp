#include "registry_protocol.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace wheelbeat::registry {
namespace {

using detail::failProtocol;

constexpr std::array<std::pair<RegistryCommand, std::string_view>, 5> kCommands{{
    {RegistryCommand::Register, "register"},
    {RegistryCommand::Unregister, "unregister"},
    {RegistryCommand::Subscribe, "subscribe"},
    {RegistryCommand::Unsubscribe, "unsubscribe"},
    {RegistryCommand::Notify, "notify"},
}};

void checkProvider(std::string_view service, std::string_view url) {
  if (serviceOfUrl(url) != service) {
    failProtocol("provider", url, fmt::format("a url of service {}", service));
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
  failProtocol("command", word, "register, unregister, subscribe, unsubscribe or notify");
}

}  // namespace

std::string_view registryCommandName(RegistryCommand command) noexcept {
  for (const auto& [c, name] : kCommands) {
    if (c == command) return name;
  }
  return "unknown";
}

std::string encodeRegistryMessage(const RegistryMessage& m) {
  checkSubject(m.command, m.subject);
  if (m.command != RegistryCommand::Notify && !m.providers.empty()) {
    failProtocol("providers on", registryCommandName(m.command), "providers only on notify");
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
  if (space == std::string_view::npos) failProtocol("message", first, "\"<command> <subject>\"");
  RegistryMessage m;
  m.command = commandOf(first.substr(0, space));
  m.subject = std::string(first.substr(space + 1));
  checkSubject(m.command, m.subject);
  if (eol == std::string_view::npos) return m;
  if (m.command != RegistryCommand::Notify)
    failProtocol("providers on", first, "providers only on notify");
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

}  // namespace wheelbeat::registry
