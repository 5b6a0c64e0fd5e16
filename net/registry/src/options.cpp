#include <wheelbeat/core/option_error.h>
#include <wheelbeat/registry/options.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <utility>

namespace wheelbeat::registry {
namespace {

constexpr std::array<std::pair<RegistryKind, std::string_view>, 3> kKinds{{
    {RegistryKind::Embedded, "embedded"},
    {RegistryKind::Redis, "redis"},
    {RegistryKind::ZooKeeper, "zookeeper"},
}};
constexpr std::string_view kKindList = "embedded, redis or zookeeper";

// `path`: "RegistryOptions.address.port" — the struct, then the member.
[[noreturn]] void fail(std::string_view path, std::string value, std::string expected) {
  const std::size_t dot = path.find('.');
  throw core::OptionError(std::string(path.substr(0, dot)), std::string(path.substr(dot + 1)),
                          std::move(value), std::move(expected));
}

// Re-throws a nested validator's error under `member` ("ClientOptions.x" →
// "RegistrySetup.client.x").
template <typename Validate>
void nested(Validate validate, std::string_view member) {
  try {
    validate();
  } catch (const core::OptionError& e) {
    throw e.within("RegistrySetup", member);
  }
}

// The client options of the registry connection: setup.client aimed at the registry.
net::ClientOptions clientOf(const RegistrySetup& s) {
  net::ClientOptions client = s.client;
  client.server = s.registry.address;
  return client;
}

bool hasSpace(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

[[noreturn]] void badUrl(std::string_view url, std::string_view what, std::string_view expected) {
  throw std::invalid_argument(
      fmt::format("registry url \"{}\": {} (expected: {})", url, what, expected));
}

// "host:port" or "[v6]:port" → the endpoint (brackets removed), read by net::parseEndpoint (the
// one host:port parser; config reads addresses through it too, with this expectation); a registry
// needs a port. `url` is for the error only.
net::Endpoint endpointOf(std::string_view url, std::string_view authority) {
  std::optional<net::Endpoint> endpoint = net::parseEndpoint(authority);
  if (!endpoint || endpoint->port == 0) {
    badUrl(url, fmt::format("address \"{}\"", authority),
           R"("host:port" (IPv6: "[::1]:20880") with a port in 1..65535)");
  }
  return std::move(*endpoint);
}

}  // namespace

void validate(const RegistryOptions& o) {
  if (std::none_of(kKinds.begin(), kKinds.end(),
                   [&](const auto& k) { return k.first == o.kind; })) {
    fail("RegistryOptions.kind", std::to_string(static_cast<int>(o.kind)), std::string(kKindList));
  }
  if (o.address.host.empty()) fail("RegistryOptions.address.host", "\"\"", "a non-empty host");
  if (o.address.port == 0) fail("RegistryOptions.address.port", "0", "1 .. 65535");
  if (o.group.empty() || hasSpace(o.group)) {
    fail("RegistryOptions.group", fmt::format("\"{}\"", o.group), "non-empty, no whitespace");
  }
  if (o.session < std::chrono::seconds(1)) {
    fail("RegistryOptions.session", fmt::format("{}", o.session), ">= 1s");
  }
}

void validate(const RegistrySetup& s) {
  validate(s.registry);
  nested([&] { net::validate(clientOf(s)); }, "client");
  nested([&] { tasks::validate(s.failback); }, "failback");
  if (s.requestTimeout <= std::chrono::nanoseconds(0)) {
    fail("RegistrySetup.requestTimeout", fmt::format("{}", s.requestTimeout), "> 0");
  }
}

void validate(const RegistrySetup& s, std::chrono::nanoseconds tick) {
  validate(s);
  nested([&] { net::validate(clientOf(s), tick); }, "client");
}

std::string_view registryKindName(RegistryKind kind) noexcept {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

RegistryOptions parseRegistryUrl(std::string_view url) {
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) badUrl(url, "no \"://\"", "kind://host:port");
  const std::string_view scheme = url.substr(0, sep);
  const auto* const kind =
      std::find_if(kKinds.begin(), kKinds.end(), [&](const auto& k) { return k.second == scheme; });
  if (kind == kKinds.end()) badUrl(url, fmt::format("scheme \"{}\"", scheme), kKindList);
  const std::string_view authority = url.substr(sep + 3);
  if (const auto extra = authority.find_first_of("/?#@"); extra != std::string_view::npos) {
    badUrl(url, fmt::format("\"{}\"", authority.substr(extra)),
           "kind://host:port, no user, path or query");
  }
  if (hasSpace(authority)) badUrl(url, "whitespace", "kind://host:port");
  RegistryOptions options;
  options.kind = kind->first;
  options.address = endpointOf(url, authority);
  return options;
}

std::string registryUrl(const RegistryOptions& o) {
  if (o.address.host.find(':') != std::string::npos) {
    return fmt::format("{}://[{}]:{}", registryKindName(o.kind), o.address.host, o.address.port);
  }
  return fmt::format("{}://{}:{}", registryKindName(o.kind), o.address.host, o.address.port);
}

}  // namespace wheelbeat::registry
