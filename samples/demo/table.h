// The demo's status table: one row per node, from its last status line.
#pragma once

#include "cluster.h"

#include <deque>
#include <string>

namespace demo {

// node, role, state, last RTT, heartbeats, reconnects, pending retries, calls ok / failed, and
// what the node sees (registry: its providers; consumer: its provider links).
[[nodiscard]] std::string renderTable(const std::deque<Node>& nodes);

}  // namespace demo
