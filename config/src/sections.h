// The key tables of the document (private to config/), one Section per object, each in the file
// of the layer that owns its options. A section's table has one line per key (fields.h).
#pragma once

#include "codecs.h"

#include <wheelbeat/config/config.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::config::detail {

// The named policies of the document ("retry"), read before the sections that refer to them.
struct Policies {
  RetryPolicies byName;             // every entry, also those with errors
  std::vector<ConfigError> errors;  // reported where "retry" is in the document
};

// core_sections.cpp
extern const Section<core::WheelOptions> kWheelSection;
extern const Section<tasks::RetryBudgetOptions> kRetryBudgetSection;
extern const EnumCodec<core::LogLevel, 5> kLogLevel;
// task_sections.cpp
extern const Section<tasks::HeartbeatOptions> kHeartbeatSection;
extern const Section<tasks::FailbackOptions> kFailbackSection;
// policies.cpp
extern const Section<tasks::RetryOptions> kPolicySection;
// net_sections.cpp, metrics_section.cpp
extern const Section<net::LoopOptions> kLoopSection;
extern const Section<net::ServerOptions> kServerSection;
extern const Section<net::ClientOptions> kClientSection;
extern const Section<net::MetricsEndpointOptions> kMetricsSection;
#if WHEELBEAT_CONFIG_DISCOVERY
// The discovery part, compiled only with the registry: service_sections.cpp (net/registry/'s
// "registry" and "service"), cluster_section.cpp.
extern const Section<registry::RegistryOptions> kRegistrySection;
extern const Section<registry::ServiceOptions> kServiceSection;
extern const Section<cluster::ClusterOptions> kClusterSection;
#endif
// document.cpp
extern const Section<Config> kDocumentSection;

// Policies: "retry" entries, inline policies, and references by name.
[[nodiscard]] Policies readPolicies(const Json& section, const std::string& pointer);
// "the name of an entry of /retry: \"a\", \"b\"" (or "... (there is none)").
[[nodiscard]] std::string knownNamesText(const RetryPolicies& policies);

// For a top-level section this build left out ("registry", "service", "cluster" without the
// registry): why it is not there ("this wheelbeat was built without the registry
// (WHEELBEAT_WITH_REGISTRY=OFF)"). nullopt for any other key, and for every key in a build with
// the discovery sections.
[[nodiscard]] std::optional<std::string> leftOutSection(std::string_view key);

// The whole document: the Config, or every error. Top-level keys are read in document order.
[[nodiscard]] LoadResult readDocument(const Json& document);
// Every key of the document, described with the defaults (Config{}).
[[nodiscard]] std::vector<KeyNode> documentKeys();

// The last line of defence: the layers' own validate() on a Config the loader accepted. Returns
// one error (pointer "") per rule the loader's checks missed — a loader bug, never expected.
[[nodiscard]] std::vector<ConfigError> backstopErrors(const Config& config);
// How many times backstopErrors() found something in this process (tests assert it stays 0).
[[nodiscard]] std::uint64_t backstopHits() noexcept;

// The generated files: the JSON Schema of the format and the configuration reference
// (reference.cpp). tests/config checks the checked-in copies against them.
[[nodiscard]] std::string schemaText();
[[nodiscard]] std::string referenceMarkdown();

}  // namespace wheelbeat::config::detail
