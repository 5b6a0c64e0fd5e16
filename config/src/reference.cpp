// The generated descriptions of the format, both from the key tables (documentKeys()): the JSON
// Schema (config/wheelbeat.schema.json) and the configuration reference (docs/configuration.md).
#include "sections.h"

#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

namespace wheelbeat::config::detail {
namespace {

constexpr std::string_view kDurationText =
    "A non-negative number (decimals allowed) with a unit h, m, s, ms, us or ns, or several such "
    "terms with their units in that order, each unit once (\"60s\", \"1.5s\", \"1m30s\", "
    "\"250us\", \"0.1s\"), always a string: a bare number (30) is an error, its unit unknown. "
    "A whole number of nanoseconds, at most 9223372036854775807ns.";
constexpr std::string_view kEndpointText =
    "\"host:port\"; an IPv6 literal in brackets: \"[::1]:20880\".";
constexpr std::string_view kErrorNamesText =
    "One of the shared error names (tasks/include/wheelbeat/tasks/error_names.h): timeout (no "
    "answer in time), disconnected (no connection, or it closed first), read-idle (silent beyond "
    "the idle timeout), overloaded (no room now: send queue full, server pool exhausted), "
    "rejected (the service answered with an error), bad-request (the request is wrong and will "
    "fail again), no-endpoint (nothing to call), exception (the operation threw), "
    "failback-rejected (too many failed invocations held).";

Json schemaOf(const KeyNode& node);

Json objectSchema(const KeyNode& node) {
  Json s{{"type", "object"}, {"additionalProperties", false}};
  if (!node.required.empty()) s["required"] = node.required;
  Json properties = Json::object();
  for (const KeyNode& child : node.children) properties[child.name] = schemaOf(child);
  s["properties"] = std::move(properties);
  return s;
}

Json schemaOf(const KeyNode& node) {
  Json s;
  switch (node.kind) {
    case KeyNode::Kind::Leaf: s = node.schema; break;
    case KeyNode::Kind::Object: s = objectSchema(node); break;
    case KeyNode::Kind::Policy:
      s["oneOf"] = Json::array(
          {objectSchema(node), Json{{"type", "string"},
                                    {"minLength", 1},
                                    {"description", "The name of an entry of \"retry\"."}}});
      break;
    case KeyNode::Kind::Map:
      s = Json{{"type", "object"}, {"propertyNames", {{"minLength", 1}}}};
      s["additionalProperties"] = objectSchema(node.children.at(0));
      s["additionalProperties"]["description"] = node.children.at(0).description;
      break;
  }
  s["description"] = node.description;
  if (node.defaultValue) s["default"] = *node.defaultValue;
  return s;
}

// Every rule across keys, as "key: rule" lines, for the schema's description.
void collectRules(const std::vector<KeyNode>& nodes, const std::string& prefix,
                  std::vector<std::string>& out) {
  for (const KeyNode& n : nodes) {
    const std::string path = prefix.empty() ? n.name : prefix + "." + n.name;
    if (!n.rules.empty() && n.kind != KeyNode::Kind::Policy) {
      out.push_back(fmt::format("{}: {}", path, n.rules));
    }
    if (n.kind != KeyNode::Kind::Policy) collectRules(n.children, path, out);
  }
}

Json definitions() {
  Json defs = Json::object();
  defs["duration"] =
      Json{{"description", kDurationText},
           {"type", "string"},
           {"pattern",
            "^(?=.)([0-9]+(\\.[0-9]+)?h)?([0-9]+(\\.[0-9]+)?m)?([0-9]+(\\.[0-9]+)?s)?([0-9]+("
            "\\.[0-9]+)?ms)?([0-9]+(\\.[0-9]+)?us)?([0-9]+(\\.[0-9]+)?ns)?$"}};
  defs["errorName"] = Json{{"description", kErrorNamesText}, {"enum", tasks::errors::kAll}};
  defs["endpoint"] =
      Json{{"description", kEndpointText},
           {"type", "string"},
           {"pattern", "^(\\[[^\\[\\]\\s/]*:[^\\[\\]\\s/]*\\]|[^:\\[\\]\\s/]+):[0-9]{1,5}$"}};
  return defs;
}

}  // namespace

std::string schemaText() {
  const std::vector<KeyNode> keys = documentKeys();
  std::vector<std::string> rules;
  collectRules(keys, "", rules);
  Json root{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
            {"$id", "https://github.com/wheelbeat/wheelbeat/config/wheelbeat.schema.json"},
            {"title", "wheelbeat configuration"}};
  root["description"] = fmt::format(
      "Configuration of a wheelbeat process (wheelbeat::config::load). Generated from the "
      "loader's key tables (config/src/*sections*.cpp): docs/configuration.md says the same. "
      "Every key is optional but service.interface and metrics.listen (required when their "
      "section is present); a missing key takes the default shown. Unknown keys are errors. "
      "registry, service and cluster are accepted only by a build with the registry "
      "(WHEELBEAT_WITH_REGISTRY). "
      "Rules the schema cannot express are checked by the loader: {}",
      fmt::join(rules, "; "));
  KeyNode document;
  document.children = keys;
  Json top = objectSchema(document);
  for (auto& [key, value] : top.items()) root[key] = value;
  root["$defs"] = definitions();
  return root.dump(2) + "\n";
}

}  // namespace wheelbeat::config::detail
