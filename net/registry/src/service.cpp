// ServiceOptions (contract in service.h): the public face of Dubbo's provider and consumer urls,
// built and matched by dubbo_url.
#include "dubbo_url.h"

#include <wheelbeat/core/option_error.h>
#include <wheelbeat/registry/service.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace wheelbeat::registry {
namespace {

[[noreturn]] void reject(std::string field, std::string_view value, std::string expected) {
  throw core::OptionError("ServiceOptions", std::move(field), fmt::format("\"{}\"", value),
                          std::move(expected));
}

bool hasAny(std::string_view s, std::string_view chars) {
  return s.find_first_of(chars) != std::string_view::npos;
}

constexpr std::string_view kSpace = " \t\r\n\v\f";

std::int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void validate(const ServiceOptions& o, bool provider) {
  if (o.interface.empty() || hasAny(o.interface, kSpace) || hasAny(o.interface, "/?")) {
    reject("interface", o.interface, "a non-empty name without whitespace, '/' or '?'");
  }
  if (o.application.empty() || hasAny(o.application, kSpace)) {
    reject("application", o.application, "a non-empty name without whitespace");
  }
  if (hasAny(o.version, kSpace)) reject("version", o.version, "no whitespace");
  if (hasAny(o.group, kSpace)) reject("group", o.group, "no whitespace");
  if (provider && o.methods.empty()) {
    reject("methods", "", "at least one method name (Dubbo consumers refuse a provider without)");
  }
  for (const auto& m : o.methods) {
    if (m.empty() || hasAny(m, kSpace) || hasAny(m, ",")) {
      reject("methods", m, "names without whitespace or ','");
    }
  }
  if (o.timeout <= std::chrono::milliseconds(0)) {
    reject("timeout", fmt::format("{}ms", o.timeout.count()), "> 0");
  }
  if (o.protocol.empty() || hasAny(o.protocol, ":/?")) {
    reject("protocol", o.protocol, "a non-empty scheme");
  }
}

std::string providerUrl(const ServiceOptions& o, const net::Endpoint& advertised,
                        std::chrono::nanoseconds heartbeat) {
  validate(o, true);
  dubbo::ProviderOptions p;
  p.protocol = o.protocol;
  p.host = advertised.host;
  p.port = advertised.port;
  p.interface = o.interface;
  p.application = o.application;
  p.version = o.version;
  p.group = o.group;
  p.methods = o.methods;
  p.pid = ::getpid();
  p.timestampMs = nowMs();
  p.timeoutMs = o.timeout.count();
  p.heartbeatMs = std::chrono::duration_cast<std::chrono::milliseconds>(heartbeat).count();
  return dubbo::providerUrl(p).toFullString();
}

std::string consumerUrl(const ServiceOptions& o, std::string_view host) {
  validate(o, false);
  dubbo::ConsumerOptions c;
  c.host = std::string(host);
  c.interface = o.interface;
  c.application = o.application;
  c.version = o.version;
  c.group = o.group;
  c.methods = o.methods;
  c.pid = ::getpid();
  c.timestampMs = nowMs();
  return dubbo::consumerUrl(c).toFullString();
}

bool matches(const ServiceOptions& consumer, std::string_view url) {
  const dubbo::ParsedUrl provider = dubbo::parseUrl(url);
  if (!provider.ok || provider.url.param("category", "providers") != "providers") return false;
  dubbo::ConsumerOptions c;
  c.interface = consumer.interface;
  c.version = consumer.version;
  c.group = consumer.group;
  return dubbo::isMatch(dubbo::consumerUrl(c), provider.url);
}

}  // namespace wheelbeat::registry
