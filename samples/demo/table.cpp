#include "table.h"

#include <fmt/format.h>

namespace demo {

namespace {

// What the driver did to a node wins over what the node last said about itself.
std::string stateOf(const Node& n) {
  switch (n.life) {
    case Life::Killed: return "KILLED";
    case Life::Frozen: return "FROZEN";
    case Life::Stopping:
      return n.pid > 0 ? std::string("STOPPING") : fmt::format("stopped({})", n.exitStatus);
    case Life::Exited: return fmt::format("exited({})", n.exitStatus);
    case Life::Running: break;
  }
  if (!n.hasStatus) return "running";
  const std::string s = n.status.text("state");
  return s.empty() ? "starting" : s;
}

std::string rttOf(const Node& n) {
  const std::uint64_t us = n.status.number("rtt");
  if (us == 0) return "-";
  return us >= 1000 ? fmt::format("{:.1f}ms", static_cast<double>(us) / 1000)
                    : fmt::format("{}us", us);
}

// Registry: "providers 40001,40002 (6 sessions)"; consumer: "links 40001+ 40002x  available
// 1/2  half-open 1  ejected 0".
std::string detailOf(const Node& n) {
  if (n.role == "registry") {
    return fmt::format("providers {} ({} sessions)", n.status.text("known"),
                       n.status.number("sessions"));
  }
  if (n.role == "provider") return fmt::format("port {}", n.status.text("port"));
  if (n.role != "consumer") return "";
  std::string out;
  for (const LinkView& l : linksOf(n.status)) {
    out += fmt::format("{}{}{}", out.empty() ? "" : " ", l.port, l.usable ? "+" : "x");
  }
  return fmt::format("{}  available {}/{}  half-open {}  ejected {}",
                     out.empty() ? "no provider" : "links " + out, n.status.number("avail"),
                     n.status.number("listed"), n.status.number("halfopens"),
                     n.status.number("ejections"));
}

// A consumer's cluster client: attempts first / retries / hedges ("152/3/4").
std::string triesOf(const Node& n) {
  if (n.role != "consumer") return "-";
  return fmt::format("{}/{}/{}", n.status.number("first"), n.status.number("retries"),
                     n.status.number("hedges"));
}

std::string countOf(const Node& n, const char* key) {
  if (n.role == "registry" || !n.hasStatus) return "-";
  return std::to_string(n.status.number(key));
}

}  // namespace

std::string renderTable(const std::deque<Node>& nodes) {
  std::string out = fmt::format("{:<11} {:<9} {:<12} {:>8} {:>5} {:>6} {:>7} {:>13} {:>14}  {}\n",
                                "node", "role", "state", "last RTT", "hb", "reconn", "pending",
                                "calls ok/fail", "tries 1st/r/h", "sees");
  for (const Node& n : nodes) {
    const std::string calls =
        n.role == "consumer" ? fmt::format("{}/{}", n.status.number("ok"), n.status.number("fail"))
        : n.role == "provider" ? fmt::format("{} served", n.status.number("ok"))
                               : "-";
    out += fmt::format("{:<11} {:<9} {:<12} {:>8} {:>5} {:>6} {:>7} {:>13} {:>14}  {}\n", n.name,
                       n.role, stateOf(n), rttOf(n), countOf(n, "hb"), countOf(n, "rc"),
                       countOf(n, "pend"), calls, triesOf(n), detailOf(n));
  }
  out +=
      "(consumer links: <port>+ answered a call within the last second, <port>x did not; "
      "available: providers its cluster client may call now, of those listed; tries: the "
      "cluster client's first attempts / retries / hedges)\n";
  return out;
}

}  // namespace demo
