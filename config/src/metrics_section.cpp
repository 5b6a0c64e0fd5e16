// The "metrics" section: net::MetricsEndpointOptions for the Prometheus scrape endpoint
// (net/metrics_endpoint.h). Present means "serve it", so listen is required there.
#include "sections.h"
#include "values.h"

#include <array>
#include <limits>
#include <optional>

namespace wheelbeat::config::detail {
namespace {

using net::MetricsEndpointOptions;

constexpr std::uint64_t kMaxSize = std::numeric_limits<std::size_t>::max();
// MetricsEndpoint::start()'s floor: a request line and a few headers must fit.
constexpr std::uint64_t kMinHeaderBytes = 256;

// MetricsEndpointOptions keeps listen as text; it is checked as an endpoint (port 0 = any free
// port) and stored in the canonical form toJson() writes.
bool readListen(Errors& errors, const Json& value, const std::string& pointer,
                MetricsEndpointOptions& o) {
  net::Endpoint where;
  if (!readEndpoint(errors, value, pointer, where, 0)) return false;
  o.listen = formatEndpoint(where);
  return true;
}

// > 0, in whole milliseconds (requestTimeout is std::chrono::milliseconds).
bool readRequestTimeout(Errors& errors, const Json& value, const std::string& pointer,
                        MetricsEndpointOptions& o) {
  nanoseconds d{0};
  if (!readPositiveDuration(errors, value, pointer, d)) return false;
  if (d % std::chrono::milliseconds(1) != nanoseconds(0)) {
    errors.add(pointer, value, "a whole number of milliseconds");
    return false;
  }
  o.requestTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  return true;
}

using MetricsField = Field<MetricsEndpointOptions>;
constexpr std::array<MetricsField, 4> kMetricsFields{{
    {"listen", &readListen},
    {"max_header_bytes",
     [](Errors& e, const Json& v, const std::string& p, MetricsEndpointOptions& o) {
       return readSize(e, v, p, o.maxHeaderBytes, kMinHeaderBytes, kMaxSize,
                       "an integer >= 256 (bytes)");
     }},
    {"request_timeout", &readRequestTimeout},
    {"max_connections",
     [](Errors& e, const Json& v, const std::string& p, MetricsEndpointOptions& o) {
       return readSize(e, v, p, o.maxConnections, 1, kMaxSize, "an integer >= 1");
     }},
}};

}  // namespace

bool readMetrics(Errors& errors, const Json& value, const std::string& pointer,
                 std::optional<net::MetricsEndpointOptions>& out) {
  const std::size_t before = errors.size();
  MetricsEndpointOptions options;
  Seen seen;
  if (!readObject<MetricsEndpointOptions>(errors, value, pointer, kMetricsFields, options, seen)) {
    return false;
  }
  // The default listen ("127.0.0.1:0", any port) cannot be scraped by a Prometheus that must be
  // told the port: a section without listen names no endpoint anyone can find.
  if (seen.usable("listen") && seen.written("listen") == nullptr) {
    errors.add(childPointer(pointer, "listen"), Json(nullptr),
               "\"host:port\" (IPv6: \"[::1]:20880\") with a port in 0..65535, 0 = any free port "
               "(required)");
  }
  if (errors.size() != before) return false;
  out = std::move(options);
  return true;
}

std::vector<KeyInfo> metricsKeys() { return keyInfos<MetricsEndpointOptions>(kMetricsFields); }

}  // namespace wheelbeat::config::detail
