// The "metrics" section: net::MetricsEndpointOptions for the Prometheus scrape endpoint
// (net/metrics_endpoint.h). Present means "serve it", so listen is required there.
#include "sections.h"

#include <array>

namespace wheelbeat::config::detail {
namespace {

using M = net::MetricsEndpointOptions;

// listen is kept as text; it is checked as an endpoint (port 0 = any free port) and stored in
// the canonical form toJson() writes.
constexpr EndpointTextCodec kListen{0};
constexpr MillisCodec kRequestTimeout{"a whole number of milliseconds"};

constexpr Field<M> kMetricsFields[] = {
    field<M, &M::listen, kListen>(
        "listen", "listen",
        "Address to serve on, e.g. \"127.0.0.1:9464\" (Prometheus' customary exporter port) or "
        "\"[::1]:9464\"; port 0..65535, 0 = any free port. Required."),
    field<M, &M::maxHeaderBytes, kSize>("max_header_bytes", "maxHeaderBytes",
                                        "Request line + headers of one request, in bytes, >= 256; "
                                        "more closes the connection (431)."),
    field<M, &M::requestTimeout, kRequestTimeout>(
        "request_timeout", "requestTimeout",
        "A request not complete within this time of the connection's accept or of the previous "
        "response closes the connection (slowloris, idle keep-alive); > 0, a whole number of "
        "milliseconds."),
    field<M, &M::maxConnections, kSize>(
        "max_connections", "maxConnections",
        "Connections open at once, >= 1; one beyond it is accepted and closed at once."),
};

}  // namespace

// The default listen ("127.0.0.1:0", any port) cannot be scraped by a Prometheus that must be
// told the port: a section without listen names no endpoint anyone can find.
constexpr Section<M> kMetricsSection{
    kMetricsFields,
    [](const M& o) { net::validate(o); },
    {},
    "listen",
    "\"host:port\" (IPv6: \"[::1]:20880\") with a port in 0..65535, 0 = any free port"};

}  // namespace wheelbeat::config::detail
