// The section readers of the loader (private to config/). Each reads one JSON value at `pointer`
// into the options it is given, reports every error it finds (field errors in document order,
// then the section's cross-field rules) and leaves missing keys at the options' current values.
#pragma once

#include "reader.h"

#include <wheelbeat/config/config.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wheelbeat::config::detail {

// The named policies of the document ("retry"), read before the sections that refer to them.
struct Policies {
  RetryPolicies byName;             // every entry, also those with errors
  std::vector<ConfigError> errors;  // reported where "retry" is in the document
};

// A section's options together with the named policies its policy fields may refer to.
template <typename T>
struct In {
  T& out;
  const Policies& policies;
};

// Key tables, for knownKeyPaths(): a key and, for an object value, the keys inside it.
struct KeyInfo {
  std::string_view name;
  std::vector<KeyInfo> (*children)() = nullptr;
};

template <typename S>
std::vector<KeyInfo> keyInfos(std::span<const Field<S>> fields) {
  std::vector<KeyInfo> keys;
  for (const auto& f : fields) keys.push_back({f.name, f.children});
  return keys;
}

// Policies: "retry" entries, inline policies, and references by name.
[[nodiscard]] Policies readPolicies(const Json& section, const std::string& pointer);
// An inline policy object, on top of `out` (the field's default policy), or the name of an entry
// of "retry" (which replaces `out` whole).
bool readPolicyValue(Errors& errors, const Json& value, const std::string& pointer,
                     const Policies& policies, tasks::RetryOptions& out);
[[nodiscard]] std::vector<KeyInfo> policyKeys();
// "the name of an entry of /retry: \"a\", \"b\"" (or "... (there is none)").
[[nodiscard]] std::string knownNamesText(const RetryPolicies& policies);
[[nodiscard]] std::vector<KeyInfo> retryMapKeys();  // "*" → policyKeys()

bool readWheel(Errors& errors, const Json& value, const std::string& pointer,
               core::WheelOptions& out);
bool readLogLevel(Errors& errors, const Json& value, const std::string& pointer,
                  core::LogLevel& out);
bool readRetryBudget(Errors& errors, const Json& value, const std::string& pointer,
                     tasks::RetryBudgetOptions& out);
[[nodiscard]] std::vector<KeyInfo> wheelKeys();
[[nodiscard]] std::vector<KeyInfo> retryBudgetKeys();

bool readHeartbeat(Errors& errors, const Json& value, const std::string& pointer,
                   In<tasks::HeartbeatOptions> in);
bool readFailback(Errors& errors, const Json& value, const std::string& pointer,
                  In<tasks::FailbackOptions> in);
[[nodiscard]] std::vector<KeyInfo> heartbeatKeys();
[[nodiscard]] std::vector<KeyInfo> failbackKeys();

bool readLoop(Errors& errors, const Json& value, const std::string& pointer, net::LoopOptions& out);
bool readRegistry(Errors& errors, const Json& value, const std::string& pointer,
                  registry::RegistryOptions& out);
bool readServer(Errors& errors, const Json& value, const std::string& pointer,
                net::ServerOptions& out);
bool readClient(Errors& errors, const Json& value, const std::string& pointer,
                net::ClientOptions& out);
[[nodiscard]] std::vector<KeyInfo> loopKeys();
[[nodiscard]] std::vector<KeyInfo> registryKeys();
[[nodiscard]] std::vector<KeyInfo> serverKeys();
[[nodiscard]] std::vector<KeyInfo> clientKeys();

// "service": present means a service, so interface is required there.
bool readService(Errors& errors, const Json& value, const std::string& pointer,
                 registry::ServiceOptions& out);
[[nodiscard]] std::vector<KeyInfo> serviceKeys();

// "metrics": present means an endpoint to serve, so listen is required there. `out` is set only
// when the section has no error.
bool readMetrics(Errors& errors, const Json& value, const std::string& pointer,
                 std::optional<net::MetricsEndpointOptions>& out);
[[nodiscard]] std::vector<KeyInfo> metricsKeys();

// The whole document: the Config, or every error. Top-level keys are read in document order.
[[nodiscard]] LoadResult readDocument(const Json& document);
[[nodiscard]] std::vector<KeyInfo> documentKeys();

// The last line of defence: the layers' own validate() on a Config the loader accepted. Returns
// one error (pointer "") per rule the loader's checks missed — a loader bug, never expected.
[[nodiscard]] std::vector<ConfigError> backstopErrors(const Config& config);
// How many times backstopErrors() found something in this process (tests assert it stays 0).
[[nodiscard]] std::uint64_t backstopHits() noexcept;

}  // namespace wheelbeat::config::detail
