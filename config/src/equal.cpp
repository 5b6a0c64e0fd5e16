// Config equality, key by key from the key tables: the option structs of the other layers have no
// operator== (registry::ServiceOptions excepted). Only what the loader reads is compared: the
// observers set by code (ServerOptions/ClientOptions::metrics, taskListener, taskMetrics) are not.
#include "sections.h"

namespace wheelbeat::config {

bool operator==(const Config& a, const Config& b) {
  // server.heartbeat and client.heartbeat are copies of "heartbeat", cluster.directory.client of
  // "client", cluster.failback of "failback", after loading, but code may set them apart.
  const bool same = detail::kDocumentSection.same(a, b) &&
                    detail::kHeartbeatSection.same(a.server.heartbeat, b.server.heartbeat) &&
                    detail::kHeartbeatSection.same(a.client.heartbeat, b.client.heartbeat);
#if WHEELBEAT_CONFIG_DISCOVERY
  const auto& da = a.cluster.directory.client;
  const auto& db = b.cluster.directory.client;
  return same && detail::kClientSection.same(da, db) &&
         detail::kHeartbeatSection.same(da.heartbeat, db.heartbeat) &&
         detail::kFailbackSection.same(a.cluster.failback, b.cluster.failback);
#else
  return same;
#endif
}

}  // namespace wheelbeat::config
