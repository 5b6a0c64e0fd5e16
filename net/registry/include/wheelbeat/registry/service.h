// ServiceOptions: what a provider advertises about its service in the registry, and what a consumer
// asks for — in Dubbo's terms, so that Dubbo consumers accept wheelbeat providers and wheelbeat
// consumers accept Dubbo providers (docs/guide/registry.md, "Joining a Dubbo fleet on ZooKeeper").
//
//   registry::ServiceOptions service{.interface = "org.example.Greeter", .application = "shop",
//                                    .version = "1.0.0", .methods = {"sayHello"}};
//   registry->registerUrl(registry::providerUrl(service, {"10.0.0.5", port}, heartbeat));
//   directory options: .accept = [service](std::string_view url) {
//                        return registry::matches(service, url); }
//
// Pure functions; thread: any.
#pragma once

#include <wheelbeat/net/options.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::registry {

struct ServiceOptions {
  // The service's name: Dubbo's interface (a Java consumer looks providers up by it). Required:
  // non-empty, no whitespace, '/' or '?'.
  std::string interface;
  // Dubbo's application.name (Dubbo requires one). Required: non-empty, no whitespace.
  std::string application = "wheelbeat";
  // "" = unversioned: Dubbo consumers compare versions exactly, and one without a version
  // matches only providers without one (so an unset version is left out of the url, never
  // written as "0.0.0"). A consumer may ask "*" for any.
  std::string version;
  // "" = none. A consumer may ask "*" for any, or "a,b" for either.
  std::string group;
  // The methods a provider serves (Dubbo's `methods`): Dubbo consumers refuse a provider url
  // without them, so a provider needs at least one. Names without whitespace or ','.
  std::vector<std::string> methods;
  // Dubbo's default.timeout (some consumers read only this one). > 0. Dubbo: 1000 ms.
  std::chrono::milliseconds timeout{1000};
  // The url's scheme for providers. Dubbo consumers speak "dubbo". Non-empty.
  std::string protocol = "dubbo";

  friend bool operator==(const ServiceOptions&, const ServiceOptions&) = default;
};

// Throws std::invalid_argument naming the first bad field, its value and the expectation, e.g.
// `ServiceOptions.interface = "" (expected: a non-empty name without whitespace, '/' or '?')`.
// `provider`: the rules for a provider (methods required); a consumer's may have none.
void validate(const ServiceOptions& options, bool provider);

// The provider url Dubbo's consumers accept: protocol://HOST:PORT/INTERFACE?anyhost=true&
// application=…&category=providers&default.timeout=…&dubbo=2.0.2&[group=…&]heartbeat=…&
// interface=…&methods=m1,m2&pid=…&side=provider&timestamp=…[&version=…] (parameters sorted by
// key, as Dubbo writes them). `heartbeat`: the provider's interval (ms in the url; Dubbo consumers
// adopt it). pid and timestamp are this process's and now. Throws what validate() throws.
[[nodiscard]] std::string providerUrl(const ServiceOptions& options,
                                      const net::Endpoint& advertised,
                                      std::chrono::nanoseconds heartbeat);
// The consumer url (category=consumers, check=false, side=consumer) registered by a consumer so
// that operators see it under /dubbo/INTERFACE/consumers.
[[nodiscard]] std::string consumerUrl(const ServiceOptions& options, std::string_view host);
// Whether a consumer with these options may call the provider at `url`, as Dubbo matches them:
// interface equal (or "*"), version equal (or "*"; none = none), group equal, "*" or one of a
// list, the provider not disabled. A url that does not parse, or is not a provider's (category
// other than providers), does not match.
[[nodiscard]] bool matches(const ServiceOptions& consumer, std::string_view url);

}  // namespace wheelbeat::registry
