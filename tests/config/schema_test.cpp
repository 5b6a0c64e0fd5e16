// The JSON Schema (config/wheelbeat.schema.json) against the loader, and the sample configs.
#include "helpers.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

using nlohmann::json;

namespace {

json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);
}

const json& resolve(const json& root, const json& node) {
  const auto ref = node.at("$ref").get<std::string>();  // "#/$defs/x"
  return root.at(json::json_pointer(ref.substr(1)));
}

// Calls visit(path, schemaNode) for every key the schema allows, recursively: properties by
// name, additionalProperties (map entries) as "*", through $ref and oneOf / anyOf / allOf.
template <typename Visit>
void walkSchema(const json& root, const json& node, const std::string& at, Visit&& visit) {
  if (node.contains("$ref")) walkSchema(root, resolve(root, node), at, visit);
  for (const char* combinator : {"oneOf", "anyOf", "allOf"}) {
    if (!node.contains(combinator)) continue;
    for (const auto& alternative : node[combinator]) walkSchema(root, alternative, at, visit);
  }
  if (node.contains("properties")) {
    for (const auto& [key, child] : node["properties"].items()) {
      visit(at + "/" + key, child);
      walkSchema(root, child, at + "/" + key, visit);
    }
  }
  if (node.contains("additionalProperties") && node["additionalProperties"].is_object()) {
    visit(at + "/*", node["additionalProperties"]);
    walkSchema(root, node["additionalProperties"], at + "/*", visit);
  }
}

std::set<std::string> schemaKeys() {
  const json schema = readJson(wbtest::schemaPath());
  std::set<std::string> keys;
  walkSchema(schema, schema, "", [&](const std::string& path, const json&) { keys.insert(path); });
  return keys;
}

void documentKeys(const json& j, const std::string& at, std::set<std::string>& out) {
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    const std::string path = at + "/" + (at == "/retry" ? "*" : key);
    out.insert(path);
    documentKeys(value, path, out);
  }
}

std::set<std::string> loaderKeys() {
  const auto known = wheelbeat::config::knownKeyPaths();
  return {known.begin(), known.end()};
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("schema: the schema and the loader agree on the set of keys") {
  const auto keys = schemaKeys();
  CHECK(keys.size() > 60);
  CHECK(keys == loaderKeys());
}

TEST_CASE("schema: draft 2020-12 and additionalProperties false on every fixed object") {
  const json schema = readJson(wbtest::schemaPath());
  CHECK(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  CHECK(schema["additionalProperties"] == false);
  int objects = 0;
  walkSchema(schema, schema, "", [&](const std::string& path, const json& node) {
    const json& target = node.contains("$ref") ? resolve(schema, node) : node;
    if (!target.contains("properties")) return;
    CAPTURE(path);
    CHECK(target["additionalProperties"] == false);
    ++objects;
  });
  // wheel heartbeat heartbeat/phi retry/* retry_budget failback loop registry server client service
  // metrics cluster cluster/outlier cluster/hedging cluster/budget cluster/directory
  CHECK(objects == 17);
}

TEST_CASE("schema: every default is the loader's default") {
  const json schema = readJson(wbtest::schemaPath());
  int checked = 0;
  walkSchema(schema, schema, "", [&](const std::string& path, const json& node) {
    // Map entries have no default; failback's inline policies start from their own defaults
    // (the schema's policy defaults are RetryOptions{}'s), checked as whole objects instead.
    if (!node.contains("default") || path.find('*') != std::string::npos ||
        path.find("_retry/") != std::string::npos) {
      return;
    }
    json document = json::object();
    wheelbeat::config::Config expected;
    if (path.starts_with("/service/")) {  // the section requires its interface (no default)
      document["service"]["interface"] = "org.example.Greeter";
      expected.service.interface = "org.example.Greeter";
    }
    if (path.starts_with("/metrics/")) {  // the section requires its listen (no default)
      document["metrics"]["listen"] = "127.0.0.1:9464";
      expected.metrics = wheelbeat::net::MetricsEndpointOptions{.listen = "127.0.0.1:9464"};
    }
    document[json::json_pointer(path)] = node["default"];
    CAPTURE(path);
    CAPTURE(document.dump());
    CHECK(wheelbeat::config::loadString(document.dump()) == expected);
    ++checked;
  });
  // Every default is checked (a floor, not the number of keys: a new key needs no edit here).
  CHECK(checked >= 67);
}

TEST_CASE("schema: service requires interface and has no default of its own") {
  const json service = readJson(wbtest::schemaPath())["properties"]["service"];
  CHECK(service["required"] == json{"interface"});
  CHECK_FALSE(service.contains("default"));
  CHECK_FALSE(service["properties"]["interface"].contains("default"));
}

TEST_CASE("schema: metrics requires listen and has no default of its own") {
  const json metrics = readJson(wbtest::schemaPath())["properties"]["metrics"];
  CHECK(metrics["required"] == json{"listen"});
  CHECK_FALSE(metrics.contains("default"));
  CHECK_FALSE(metrics["properties"]["listen"].contains("default"));
}

TEST_CASE("samples: every sample config loads without error") {
  int samples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(wbtest::samplesDir())) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    CHECK(wheelbeat::config::tryLoad(entry.path()).errors().empty());
    ++samples;
  }
  CHECK(samples >= 4);
}

TEST_CASE("samples: full.json writes every section and only keys the loader knows") {
  // The complete list of keys is docs/configuration.md, generated from the loader's tables
  // (generated_test.cpp); the sample shows every section with realistic values.
  std::set<std::string> keys;
  documentKeys(readJson(wbtest::samplesDir() / "full.json"), "", keys);
  const auto known = loaderKeys();
  CHECK(std::includes(known.begin(), known.end(), keys.begin(), keys.end()));
  int sections = 0;
  for (const auto& path : known) {
    if (path.find('/', 1) != std::string::npos) continue;
    CAPTURE(path);
    CHECK(keys.contains(path));
    ++sections;
  }
  CHECK(sections == 13);
  CHECK(keys.size() > 60);
}

}  // TEST_SUITE("config")
