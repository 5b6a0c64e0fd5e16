// docs/configuration.md: every key of the document with its type, default, accepted values and
// description, from the key tables (documentKeys()), as the schema is (reference.cpp).
#include "sections.h"

#include <fmt/format.h>

namespace wheelbeat::config::detail {
namespace {

constexpr std::string_view kPreamble = R"(# Configuration reference

<!-- Generated from the key tables of config/src by `wheelbeat-config-reference markdown`
     (`cmake --build build --target config_reference` rewrites it and the JSON Schema);
     tests/config fails when this file and the tables differ. Edit the tables, not this file. -->

A wheelbeat process reads its configuration from one JSON document (`wheelbeat::config::load`;
`wheelbeat-config validate FILE` checks a file and prints the effective configuration). The same
format as a JSON Schema: `config/wheelbeat.schema.json` (installed to `share/wheelbeat/`). The
same tables from the command line: `wheelbeat-config defaults` (every default, as JSON),
`wheelbeat-config schema` and `wheelbeat-config explain heartbeat.interval` (one key).

- Every key is optional and takes the default shown, except `service.interface` and
  `metrics.listen`, required when their section is present. Without `service` there is no service;
  without `metrics`, no metrics endpoint.
- `registry`, `service` and `cluster`, the sections of the discovery layers (net/registry,
  net/cluster), are there only when wheelbeat is built with the registry
  (`WHEELBEAT_WITH_REGISTRY`, on by default); a build without it rejects a document that has one
  of them, naming it. Every other section is always there.
- Unknown keys, keys written twice in one object, wrong types and values outside what is accepted
  are errors. Every error is reported, each as the JSON pointer, the value as written and what is
  expected: `/retry/payments/max_delay: "500ms" (expected: >= initial_delay = 1s)`.
- Durations are `"60s"`, `"500ms"`, `"2m"`, `"1h"`, `"250us"`, `"5ns"`, decimals (`"1.5s"`) and
  compounds with the units in that order (`"1m30s"`), a whole number of nanoseconds: always a
  string with a unit. A bare number is an error (`/heartbeat/interval: 30 (expected: a duration
  with a unit, e.g. "30s")`).
- "Accepted" is what the loader reads as a value of the key; the key's rules (ranges, and rules
  between keys) are its layer's `validate()` (core, tasks, net, registry), which the loader calls:
  the descriptions say them.
- Endpoints are `"host:port"`, an IPv6 literal in brackets: `"[::1]:20880"`.
- A retry policy (`heartbeat.reconnect`, `failback.registry_retry`, `failback.invocation_retry`) is
  an object with the keys of a `retry` entry, on top of that key's default, or the name of an
  entry of `retry`.
)";

std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string defaultCell(const KeyNode& n, bool required) {
  if (required) return "required";
  if (!n.defaultValue) return "none";
  if (n.kind == KeyNode::Kind::Object || n.kind == KeyNode::Kind::Map) return "";
  return cell(fmt::format("`{}`", dumped(*n.defaultValue)));
}

// One row per key of `nodes` and of the objects inside them (not inside policies: their keys
// are those of a "retry" entry, listed once there).
void rows(const std::vector<KeyNode>& nodes, const KeyNode* parent, const std::string& prefix,
          std::string& out, std::vector<std::string>& rules) {
  for (const KeyNode& n : nodes) {
    const std::string path = prefix.empty() ? n.name : prefix + "." + n.name;
    const bool required =
        parent != nullptr && std::ranges::find(parent->required, n.name) != parent->required.end();
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", path, n.type, defaultCell(n, required),
                       cell(n.rule), cell(n.description));
    if (n.kind == KeyNode::Kind::Policy) continue;
    if (!n.rules.empty()) rules.push_back(fmt::format("`{}`: {}", path, n.rules));
    rows(n.children, &n, path, out, rules);
  }
}

void section(const KeyNode& top, std::string& out) {
  out += fmt::format("\n## `{}`\n\n{}\n\n", top.name, top.description);
  if (top.defaultValue && top.kind == KeyNode::Kind::Leaf) {
    out += fmt::format("Default `{}`.\n\n", dumped(*top.defaultValue));
  }
  const std::vector<KeyNode> self{top};
  const std::vector<KeyNode>& list = top.kind == KeyNode::Kind::Leaf ? self : top.children;
  const std::string prefix = top.kind == KeyNode::Kind::Leaf ? "" : top.name;
  out += "| Key | Type | Default | Accepted | Description |\n|---|---|---|---|---|\n";
  std::vector<std::string> rules;
  if (!top.rules.empty()) rules.push_back(fmt::format("`{}`: {}", top.name, top.rules));
  rows(list, &top, prefix, out, rules);
  for (const auto& r : rules) out += fmt::format("\nAcross keys, {}.\n", r);
}

}  // namespace

std::string referenceMarkdown() {
  std::string out(kPreamble);
  for (const KeyNode& top : documentKeys()) section(top, out);
  return out;
}

}  // namespace wheelbeat::config::detail
