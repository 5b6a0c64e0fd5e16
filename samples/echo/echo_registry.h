// The registry flags the echo tools share:
//
//   --registry URL        embedded://h:p, redis://h:p or zookeeper://h:p (parseRegistryUrl); the
//                         scheme is checked case-sensitively, a wrong one named with the allowed
//   --service INTERFACE   the Dubbo interface, e.g. org.example.Echo (required with --registry)
//   --application NAME    the application parameter (default: the tool's name)
//   --service-version V   the service version ("" = unversioned, as Dubbo: matches only "")
//   --group G             the service group ("" = none); a consumer may give "a,b" or "*"
//
// Every value is checked here, and a bad one throws std::invalid_argument naming its flag, the
// value and what was expected: a typo never registers a url nobody can match.
#pragma once

#include "command_line.h"
#include "common/say.h"

#include <wheelbeat/config/config.h>
#include <wheelbeat/registry/options.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/service.h>

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace samples::echo {

struct RegistryFlags {
  std::string url;  // as given: "zookeeper://127.0.0.1:2181"
  wheelbeat::registry::RegistryOptions registry;
  std::string service;
  std::string application;
  std::string version;
  std::string group;
};

// The service these flags describe (methods: what the echo tools serve).
inline wheelbeat::registry::ServiceOptions serviceOf(const RegistryFlags& f) {
  wheelbeat::registry::ServiceOptions s;
  s.interface = f.service;
  s.application = f.application;
  s.version = f.version;
  s.group = f.group;
  s.methods = {"echo"};
  return s;
}

// The registry flags as given (nullopt: not given), before registryFlags() checks them.
struct RegistryArgs {
  std::optional<std::string> registry;
  std::optional<std::string> service;
  std::optional<std::string> application;
  std::optional<std::string> version;
  std::optional<std::string> group;
};

inline constexpr const char* kRegistrySchemes[] = {"embedded", "redis", "zookeeper"};

// --registry's scheme, exactly (case-sensitive), before parseRegistryUrl checks the rest.
inline std::string checkRegistryUrl(const std::string& url) {
  const auto sep = url.find("://");
  const std::string scheme = url.substr(0, sep == std::string::npos ? 0 : sep);
  for (const char* known : kRegistrySchemes) {
    if (sep != std::string::npos && scheme == known) return {};
  }
  return fmt::format(
      "\"{}\" (expected: embedded://HOST:PORT, redis://HOST:PORT or "
      "zookeeper://HOST:PORT)",
      url);
}

// Declares the registry flags on `app`, storing into `args`.
inline void addRegistryOptions(wheelbeat::cli::App& app, RegistryArgs& args,
                               const std::string& defaultApplication) {
  app.add_option("--registry", args.registry,
                 "register / follow providers through this registry; schemes: embedded, redis, "
                 "zookeeper (default: none, no registry)")
      ->option_text("URL")
      ->check(wheelbeat::cli::Validator(checkRegistryUrl, ""));
  app.add_option("--service", args.service,
                 "the Dubbo interface, e.g. org.example.Echo (required with --registry)")
      ->option_text("INTERFACE");
  app.add_option("--application", args.application, "the application parameter")
      ->type_name("NAME")
      ->default_str(defaultApplication);
  app.add_option("--service-version", args.version, "the service version")
      ->type_name("V")
      ->default_str("\"\", unversioned");
  app.add_option("--group", args.group, "the service group; a consumer may give \"a,b\" or \"*\"")
      ->type_name("G")
      ->default_str("\"\", none");
}

// A value that goes into a url's path or query as it is: no whitespace, none of / ? & = # %.
inline void checkToken(const std::string& flag, const std::string& value, bool allowEmpty,
                       std::string_view extra = {}) {
  if (value.empty() && !allowEmpty) {
    throw std::invalid_argument(fmt::format("{} \"\" (expected: a non-empty value)", flag));
  }
  for (const char c : value) {
    const bool bad =
        c <= ' ' || c == 0x7F || std::string_view("/?&=#%").find(c) != std::string_view::npos;
    if (bad && extra.find(c) == std::string_view::npos) {
      throw std::invalid_argument(
          fmt::format("{} \"{}\" (expected: no whitespace and none of / ? & = # %)", flag, value));
    }
  }
}

// nullopt without --registry; then none of the other registry flags may be given either.
inline std::optional<RegistryFlags> registryFlags(const RegistryArgs& args,
                                                  const std::string& defaultApplication) {
  if (!args.registry) {
    const std::pair<const char*, const std::optional<std::string>*> others[] = {
        {"--service", &args.service},
        {"--application", &args.application},
        {"--service-version", &args.version},
        {"--group", &args.group}};
    for (const auto& [flag, value] : others) {
      if (value->has_value()) throw std::invalid_argument(fmt::format("{} needs --registry", flag));
    }
    return std::nullopt;
  }
  RegistryFlags r;
  r.url = *args.registry;
  try {
    r.registry = wheelbeat::registry::parseRegistryUrl(r.url);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--registry: {}", e.what()));
  }
  if (!args.service) {
    throw std::invalid_argument("--service INTERFACE is required with --registry");
  }
  r.service = *args.service;
  checkToken("--service", r.service, false);
  r.application = args.application.value_or(defaultApplication);
  checkToken("--application", r.application, false);
  r.version = args.version.value_or("");
  checkToken("--service-version", r.version, true);
  r.group = args.group.value_or("");
  checkToken("--group", r.group, true);
  return r;
}

// The registry connection: the configuration's client, failback and session, with the kind and
// address of --registry, failback.check off. A call waits at most two heartbeats (past that the
// link is suspect).
// Prints each registry call that succeeded on a retry ("echo_server: registered URL (after 1
// retry)"): the call's own completion heard only its first failure.
class RetryPrinter final : public wheelbeat::tasks::FailbackListener {
public:
  explicit RetryPrinter(std::string tool) : tool_(std::move(tool)) {}
  void onRecovered(wheelbeat::tasks::FailbackOp op, const std::string& key,
                   std::int64_t attempts) override {
    const std::string_view verb = op == wheelbeat::tasks::FailbackOp::Register    ? "registered"
                                  : op == wheelbeat::tasks::FailbackOp::Subscribe ? "subscribed to"
                                                                                  : "done:";
    samples::info("{}: {} {} (after {} retr{})", tool_, verb, key, attempts,
                  attempts == 1 ? "y" : "ies");
    std::fflush(stdout);
  }

private:
  std::string tool_;
};

inline wheelbeat::registry::RegistrySetup registrySetup(const wheelbeat::config::Config& cfg,
                                                        const RegistryFlags& flags,
                                                        const std::string& tool) {
  wheelbeat::registry::RegistrySetup setup;
  setup.registry = cfg.registry;
  setup.registry.kind = flags.registry.kind;
  setup.registry.address = flags.registry.address;
  setup.client = cfg.client;
  setup.failback = cfg.failback;
  // Registered and subscribed in the background whatever the configuration's `check` says: a
  // registry that is down now is retried until it is up (the tools print when it succeeds).
  setup.failback.check = false;
  setup.requestTimeout = 2 * cfg.client.heartbeat.interval;
  setup.listener = std::make_shared<RetryPrinter>(tool);
  return setup;
}

}  // namespace samples::echo
