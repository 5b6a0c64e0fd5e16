// The whole document: the top-level keys, then the layers' validate() as a backstop.
#include "sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace wheelbeat::config::detail {
namespace {

// "retry": the named policies, read up front by readPolicies() (other sections refer to its
// names); their errors are reported here, where the document has them.
struct RetryMapCodec {
  bool read(Errors& e, const Json& /*v*/, const std::string& /*p*/, RetryPolicies& out,
            const Context& c) const {
    e.append(c.policies->errors);
    out = c.policies->byName;
    return c.policies->errors.empty();
  }
  [[nodiscard]] Json write(const RetryPolicies& v) const {
    Json out = Json::object();
    for (const auto& [name, policy] : v) out[name] = kPolicySection.write(policy);
    return out;
  }
  [[nodiscard]] bool same(const RetryPolicies& a, const RetryPolicies& b) const {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
      if (i->first != j->first || !kPolicySection.same(i->second, j->second)) return false;
    }
    return true;
  }
  void describe(KeyNode& node, const RetryPolicies& defaults) const {
    KeyNode entry;
    entry.name = "*";
    entry.description =
        "A named retry policy (tasks::RetryOptions). Defaults: gRPC's connection "
        "backoff.";
    kPolicySection.describe(entry, tasks::RetryOptions{});
    entry.defaultValue.reset();
    node.kind = KeyNode::Kind::Map;
    node.type = "object";
    node.rule = "an object of named retry policies, each name non-empty";
    node.children.push_back(std::move(entry));
    node.defaultValue = write(defaults);
  }
};

// A section that is there only when the document has it: "metrics" (nullopt without it); and
// "service", whose defaults name no service (interface "") and are not written.
template <typename T>
struct OptionalSectionCodec {
  const Section<T>& section;
  bool read(Errors& e, const Json& v, const std::string& p, std::optional<T>& out,
            const Context& c) const {
    T options{};
    if (!section.read(e, v, p, options, c)) return false;
    out = std::move(options);
    return true;
  }
  [[nodiscard]] Json write(const std::optional<T>& v) const {
    return v ? section.write(*v) : Json(nullptr);
  }
  [[nodiscard]] bool same(const std::optional<T>& a, const std::optional<T>& b) const {
    if (!a || !b) return a.has_value() == b.has_value();
    return section.same(*a, *b);
  }
  void describe(KeyNode& node, const std::optional<T>& /*defaults*/) const {
    section.describe(node, T{});
    node.defaultValue.reset();
  }
};

#if WHEELBEAT_CONFIG_DISCOVERY
struct ServiceCodec {
  bool read(Errors& e, const Json& v, const std::string& p, registry::ServiceOptions& out,
            const Context& c) const {
    return kServiceSection.read(e, v, p, out, c);
  }
  [[nodiscard]] Json write(const registry::ServiceOptions& v) const {
    return v == registry::ServiceOptions{} ? Json(nullptr) : kServiceSection.write(v);
  }
  [[nodiscard]] bool same(const registry::ServiceOptions& a,
                          const registry::ServiceOptions& b) const {
    return a == b;
  }
  void describe(KeyNode& node, const registry::ServiceOptions& defaults) const {
    kServiceSection.describe(node, defaults);
    node.defaultValue.reset();
  }
};

constexpr ServiceCodec kService{};
#endif

constexpr RetryMapCodec kRetryMap{};
constexpr OptionalSectionCodec<net::MetricsEndpointOptions> kMetrics{kMetricsSection};

constexpr Field<Config> kDocumentFields[] = {
    field<Config, &Config::logLevel, kLogLevel>(
        "log_level", "logLevel",
        "Messages below this level are dropped (wheelbeat::core::setLogLevel)."),
    field<Config, &Config::wheel, kWheelSection>(
        "wheel", "wheel", "The shared hashed wheel timer (core::WheelOptions)."),
    field<Config, &Config::heartbeat, kHeartbeatSection>(
        "heartbeat", "heartbeat",
        "Heartbeat, idle and reconnect tasks (tasks::HeartbeatOptions); copied into server and "
        "client."),
    field<Config, &Config::retry, kRetryMap>(
        "retry", "retry",
        "Named retry policies, referred to by name from heartbeat.reconnect, "
        "failback.registry_retry and failback.invocation_retry. Names are non-empty."),
    field<Config, &Config::retryBudget, kRetryBudgetSection>(
        "retry_budget", "retryBudget",
        "Token bucket bounding retries to a ratio of traffic (tasks::RetryBudgetOptions)."),
    field<Config, &Config::failback, kFailbackSection>(
        "failback", "failback",
        "Failback registry and invocation retries (tasks::FailbackOptions). Defaults are "
        "Dubbo's."),
    field<Config, &Config::loop, kLoopSection>(
        "loop", "loop",
        "Limits of every event loop and the size of a loop group (net::LoopOptions, passed to "
        "net::EventLoop's and net::EventLoopGroup's constructors)."),
#if WHEELBEAT_CONFIG_DISCOVERY
    field<Config, &Config::registry, kRegistrySection>(
        "registry", "registry", "Service registry client (registry::RegistryOptions)."),
#endif
    field<Config, &Config::server, kServerSection>(
        "server", "server", "The provider's listening side (net::ServerOptions)."),
    field<Config, &Config::client, kClientSection>(
        "client", "client", "The consumer's connection (net::ClientOptions)."),
#if WHEELBEAT_CONFIG_DISCOVERY
    field<Config, &Config::service, kService>(
        "service", "service",
        "The service a provider advertises in the registry, or a consumer asks for, in Dubbo's "
        "terms (registry::ServiceOptions, for registry::providerUrl / consumerUrl / matches). "
        "Without this section there is no service (interface \"\"); with it, interface is "
        "required."),
#endif
    field<Config, &Config::metrics, kMetrics>(
        "metrics", "metrics",
        "The Prometheus scrape endpoint, GET /metrics over HTTP/1.1 "
        "(net::MetricsEndpointOptions, for net::MetricsEndpoint::start). Without this section "
        "there is no endpoint; with it, listen is required."),
#if WHEELBEAT_CONFIG_DISCOVERY
    field<Config, &Config::cluster, kClusterSection>(
        "cluster", "cluster",
        "Calls over every provider of a service (cluster::ClusterOptions, for "
        "cluster::ServiceClient): Dubbo's cluster modes, the balancer, outlier ejection, hedging "
        "and one retry budget. Its directory's provider clients are configured by \"client\"."),
#endif
};

#if !WHEELBEAT_CONFIG_DISCOVERY
// The top-level sections of the layers this build left out (WHEELBEAT_WITH_REGISTRY=OFF).
constexpr std::string_view kLeftOutSections[] = {"registry", "service", "cluster"};
#endif

// The tick the timer of these options runs: below 1ms it runs 1ms (HashedWheelTimer).
nanoseconds usedTick(const core::WheelOptions& wheel) {
  return std::max(wheel.tickDuration, nanoseconds(std::chrono::milliseconds(1)));
}

// /section/key as the document wrote it, or `fallback` (its value) when the key is missing.
Json writtenOr(const Json& document, const std::string& section, const std::string& key,
               Json fallback) {
  const auto s = document.find(section);
  if (s == document.end() || !s->is_object()) return fallback;
  const auto k = s->find(key);
  return k == s->end() ? fallback : *k;
}

// The periods of the heartbeat tasks against the wheel that runs them, a rule across sections
// (tasks::validate(options, tick)): each at least 2 ticks, idle_timeout and close_timeout when
// not 0 (their defaults follow interval). Reported at the heartbeat key, naming the tick's.
void tickRules(Errors& errors, const Json& document, const Config& c) {
  const nanoseconds tick = usedTick(c.wheel);
  const nanoseconds least = tick > nanoseconds::max() / 2 ? nanoseconds::max() : tick * 2;
  const std::string tickText =
      dumped(writtenOr(document, "wheel", "tick", durationJson(c.wheel.tickDuration)));
  const std::pair<std::string, nanoseconds> periods[] = {
      {"interval", c.heartbeat.interval},
      {"idle_timeout", c.heartbeat.idleTimeout},
      {"close_timeout", c.heartbeat.closeTimeout}};
  for (const auto& [key, value] : periods) {
    if (value >= least || (value == nanoseconds(0) && key != "interval")) continue;
    errors.add("/heartbeat/" + key, writtenOr(document, "heartbeat", key, durationJson(value)),
               fmt::format("at least 2 wheel ticks = {}; /wheel/tick is {}", formatDuration(least),
                           tickText));
  }
}

std::atomic<std::uint64_t> gBackstopHits{0};

template <typename Check>
void backstop(std::vector<ConfigError>& out, Check check) {
  try {
    check();
  } catch (const std::invalid_argument& e) {
    out.push_back({"", dumped(Json(e.what())),
                   "options the layers accept (the loader missed this rule: a wheelbeat bug)"});
  }
}

}  // namespace

std::vector<ConfigError> backstopErrors(const Config& c) {
  std::vector<ConfigError> out;
  backstop(out, [&] { core::validate(c.wheel); });
  backstop(out, [&] { tasks::validate(c.heartbeat); });
  for (const auto& [name, policy] : c.retry) {
    const auto& checked = policy;  // a named local: clang 14 cannot capture a structured binding
    backstop(out, [&] { tasks::validate(checked); });
  }
  backstop(out, [&] { tasks::validate(c.retryBudget); });
  backstop(out, [&] { tasks::validate(c.failback); });
#if WHEELBEAT_CONFIG_DISCOVERY
  backstop(out, [&] { registry::validate(c.registry); });
#endif
  // With the wheel's tick: the checks TcpServer and TcpClient make.
  backstop(out, [&] { net::validate(c.server, usedTick(c.wheel)); });
  backstop(out, [&] { net::validate(c.client, usedTick(c.wheel)); });
  if (c.metrics) backstop(out, [&] { net::validate(*c.metrics); });
#if WHEELBEAT_CONFIG_DISCOVERY
  // Defaults (interface ""): no service to check. A consumer's rules: methods may be empty.
  if (c.service != registry::ServiceOptions{}) {
    backstop(out, [&] { registry::validate(c.service, false); });
  }
  backstop(out, [&] { cluster::validate(c.cluster); });
#endif
  if (!out.empty()) gBackstopHits.fetch_add(1, std::memory_order_relaxed);
  return out;
}

std::uint64_t backstopHits() noexcept { return gBackstopHits.load(std::memory_order_relaxed); }

LoadResult readDocument(const Json& document) {
  Errors errors;
  if (!document.is_object()) {
    errors.add("", document, "an object at the top level");
    return LoadResult(errors.take());
  }
  const auto retry = document.find("retry");
  const Policies policies = retry == document.end() ? Policies{} : readPolicies(*retry, "/retry");
  Config config;
  Seen seen;
  readObject<Config>(errors, document, "", kDocumentFields, config, Context{&policies}, seen);
  if (errors.size() != 0) return LoadResult(errors.take());
  // One heartbeat section serves both ends (the server's close task, the client's tasks).
  config.server.heartbeat = config.heartbeat;
  config.client.heartbeat = config.heartbeat;
#if WHEELBEAT_CONFIG_DISCOVERY
  // The cluster's provider clients are the consumer's clients: "client" (server is replaced by
  // each provider's address).
  config.cluster.directory.client = config.client;
  // Its failback mode retries failed calls as "failback" says (invocation_retry,
  // max_pending_retries): one description of invocation retries per process, as Dubbo's.
  config.cluster.failback = config.failback;
#endif
  tickRules(errors, document, config);
  if (errors.size() != 0) return LoadResult(errors.take());
  std::vector<ConfigError> missed = backstopErrors(config);
  if (!missed.empty()) return LoadResult(std::move(missed));
  return LoadResult(std::move(config));
}

constexpr Section<Config> kDocumentSection{kDocumentFields};

std::optional<std::string> leftOutSection([[maybe_unused]] std::string_view key) {
#if !WHEELBEAT_CONFIG_DISCOVERY
  if (std::ranges::find(kLeftOutSections, key) != std::end(kLeftOutSections)) {
    return "this wheelbeat was built without the registry (WHEELBEAT_WITH_REGISTRY=OFF)";
  }
#endif
  return std::nullopt;
}

std::string unknownKeyExpected(std::string_view pointer, std::string_view key,
                               std::span<const std::string_view> names) {
  if (pointer.empty()) {
    if (auto why = leftOutSection(key)) return fmt::format("no \"{}\" section: {}", key, *why);
  }
  return knownKeysText(names);
}

std::vector<KeyNode> documentKeys() { return describeFields<Config>(kDocumentFields, Config{}); }

}  // namespace wheelbeat::config::detail
