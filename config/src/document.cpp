// The whole document: the top-level keys, then the layers' validate() as a backstop.
#include "sections.h"
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <bit>
#include <limits>
#include <stdexcept>

namespace wheelbeat::config::detail {
namespace {

using Top = In<Config>;

constexpr std::array<Field<Top>, 12> kDocumentFields{{
    {"log_level", [](Errors& e, const Json& v, const std::string& p,
                     Top& t) { return readLogLevel(e, v, p, t.out.logLevel); }},
    {"wheel",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readWheel(e, v, p, t.out.wheel);
     },
     &wheelKeys},
    {"heartbeat",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readHeartbeat(e, v, p, {t.out.heartbeat, t.policies});
     },
     &heartbeatKeys},
    // Read up front by readPolicies() (other sections refer to its names); its errors are
    // reported here, where the document has them.
    {"retry",
     [](Errors& e, const Json& /*v*/, const std::string& /*p*/, Top& t) {
       e.append(t.policies.errors);
       t.out.retry = t.policies.byName;
       return t.policies.errors.empty();
     },
     &retryMapKeys},
    {"retry_budget",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readRetryBudget(e, v, p, t.out.retryBudget);
     },
     &retryBudgetKeys},
    {"failback",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readFailback(e, v, p, {t.out.failback, t.policies});
     },
     &failbackKeys},
    {"loop",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readLoop(e, v, p, t.out.loop);
     },
     &loopKeys},
    {"registry",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readRegistry(e, v, p, t.out.registry);
     },
     &registryKeys},
    {"server",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readServer(e, v, p, t.out.server);
     },
     &serverKeys},
    {"client",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readClient(e, v, p, t.out.client);
     },
     &clientKeys},
    {"service",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readService(e, v, p, t.out.service);
     },
     &serviceKeys},
    {"metrics",
     [](Errors& e, const Json& v, const std::string& p, Top& t) {
       return readMetrics(e, v, p, t.out.metrics);
     },
     &metricsKeys},
}};

std::atomic<std::uint64_t> gBackstopHits{0};

// HashedWheelTimer's constructor rules (core/src/hashed_wheel_timer.cpp; core exports no
// validate() for WheelOptions), with its messages, without building a timer (whose slots
// would cost up to 16 GiB).
void validateWheel(const core::WheelOptions& o) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (o.tickDuration.count() <= 0) {
    throw std::invalid_argument(fmt::format("HashedWheelTimer: tickDuration = {}ns (expected: > 0)",
                                            o.tickDuration.count()));
  }
  if (o.ticksPerWheel <= 0 || o.ticksPerWheel > (std::int64_t{1} << 30)) {
    throw std::invalid_argument(fmt::format(
        "HashedWheelTimer: ticksPerWheel = {} (expected: 1..1073741824)", o.ticksPerWheel));
  }
  const auto slots =
      static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(o.ticksPerWheel)));
  const std::int64_t tickNs = std::max<std::int64_t>(o.tickDuration.count(), 1'000'000);
  if (tickNs >= kMax / slots) {
    throw std::invalid_argument(fmt::format(
        "HashedWheelTimer: tickDuration * ticksPerWheel = {}ns * {} overflows", tickNs, slots));
  }
}

// MetricsEndpoint::start()'s rules (net/src/metrics_endpoint.cpp; net exports no validate() for
// MetricsEndpointOptions), with its messages, without starting an endpoint.
void validateMetrics(const net::MetricsEndpointOptions& o) {
  auto fail = [](std::string_view path, const std::string& value, std::string_view expected) {
    throw std::invalid_argument(
        fmt::format("MetricsEndpointOptions.{} = {} (expected: {})", path, value, expected));
  };
  if (!net::parseEndpoint(o.listen)) {
    fail("listen", fmt::format("\"{}\"", o.listen),
         R"("host:port", IPv6 as "[::1]:9464", port 0..65535 (0 = any free port))");
  }
  if (o.maxHeaderBytes < 256) fail("maxHeaderBytes", std::to_string(o.maxHeaderBytes), ">= 256");
  if (o.requestTimeout.count() <= 0) {
    fail("requestTimeout", fmt::format("{}ms", o.requestTimeout.count()), "> 0ms");
  }
  if (o.maxConnections == 0) fail("maxConnections", "0", ">= 1");
}

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
  backstop(out, [&] { validateWheel(c.wheel); });
  backstop(out, [&] { tasks::validate(c.heartbeat); });
  for (const auto& [name, policy] : c.retry) {
    const auto& checked = policy;  // a named local: clang 14 cannot capture a structured binding
    backstop(out, [&] { tasks::validate(checked); });
  }
  backstop(out, [&] { tasks::validate(c.retryBudget); });
  backstop(out, [&] { tasks::validate(c.failback); });
  backstop(out, [&] { registry::validate(c.registry); });
  backstop(out, [&] { net::validate(c.server); });
  backstop(out, [&] { net::validate(c.client); });
  // Defaults (interface ""): no service to check. A consumer's rules: methods may be empty.
  if (c.service != registry::ServiceOptions{}) {
    backstop(out, [&] { registry::validate(c.service, false); });
  }
  if (c.metrics) backstop(out, [&] { validateMetrics(*c.metrics); });
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
  Top top{config, policies};
  Seen seen;
  readObject<Top>(errors, document, "", kDocumentFields, top, seen);
  if (errors.size() != 0) return LoadResult(errors.take());
  // One heartbeat section serves both ends (the server's close task, the client's tasks).
  config.server.heartbeat = config.heartbeat;
  config.client.heartbeat = config.heartbeat;
  std::vector<ConfigError> missed = backstopErrors(config);
  if (!missed.empty()) return LoadResult(std::move(missed));
  return LoadResult(std::move(config));
}

std::vector<KeyInfo> documentKeys() { return keyInfos<Top>(kDocumentFields); }

}  // namespace wheelbeat::config::detail
