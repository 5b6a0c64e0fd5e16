#include "explain.h"

#include "command_line.h"
#include "sections.h"

#include <wheelbeat/config/config.h>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace wheelbeat::config::cli {
namespace {

using detail::KeyNode;

constexpr std::string_view kDurationUnit =
    "a string with a unit: h, m, s, ms, us or ns, or several in that order (\"30s\", "
    "\"1m30s\", \"250us\"); a bare number is an error";

// KEY's segments: "/a/b" (RFC 6901 escapes ~0 ~1) or "a.b". Empty when KEY is no key path.
std::vector<std::string> segments(std::string_view key) {
  std::vector<std::string> out;
  const bool pointer = key.starts_with('/');
  if (pointer) key.remove_prefix(1);
  const char separator = pointer ? '/' : '.';
  while (true) {
    const std::size_t end = key.find(separator);
    std::string part(key.substr(0, end));
    if (pointer) {
      for (std::size_t i = part.find('~'); i != std::string::npos; i = part.find('~', i + 1)) {
        if (i + 1 < part.size() && (part[i + 1] == '0' || part[i + 1] == '1')) {
          part.replace(i, 2, part[i + 1] == '0' ? "~" : "/");
        }
      }
    }
    if (part.empty()) return {};
    out.push_back(std::move(part));
    if (end == std::string_view::npos) return out;
    key.remove_prefix(end + 1);
  }
}

// The node at `path` and the object it is in (null at the top), or a null node.
struct Found {
  const KeyNode* node = nullptr;
  const KeyNode* parent = nullptr;
  std::string dotted;        // "retry.*.backoff"
  std::string parentDotted;  // "retry.*"
};

Found find(const std::vector<KeyNode>& top, const std::vector<std::string>& path) {
  Found found;
  const std::vector<KeyNode>* level = &top;
  for (const std::string& name : path) {
    const auto it = std::ranges::find_if(
        *level, [&name](const KeyNode& n) { return n.name == name || n.name == "*"; });
    if (it == level->end()) return {};
    found.parent = found.node;
    found.parentDotted = found.dotted;
    found.node = &*it;
    found.dotted += (found.dotted.empty() ? "" : ".") + it->name;
    level = &it->children;
  }
  return found;
}

std::string defaultOf(const Found& f) {
  if (f.parent != nullptr &&
      std::ranges::find(f.parent->required, f.node->name) != f.parent->required.end()) {
    return "none: required";
  }
  if (!f.node->defaultValue) return "none (the section is absent unless written)";
  return f.node->defaultValue->dump();
}

std::string describe(const Found& f) {
  const KeyNode& n = *f.node;
  std::string pointer;
  for (std::size_t i = 0, start = 0; i <= f.dotted.size(); ++i) {
    if (i == f.dotted.size() || f.dotted[i] == '.') {
      pointer += '/';
      pointer.append(f.dotted, start, i - start);
      start = i + 1;
    }
  }
  std::string out = fmt::format("key:         {} ({})\n", f.dotted, pointer);
  out += fmt::format("type:        {}\n", n.type);
  if (n.type == "duration") out += fmt::format("unit:        {}\n", kDurationUnit);
  out += fmt::format("default:     {}\n", defaultOf(f));
  if (!n.rule.empty()) out += fmt::format("accepted:    {}\n", n.rule);
  out += fmt::format("description: {}\n", n.description);
  if (!n.children.empty()) {
    std::vector<std::string> names;
    for (const KeyNode& c : n.children) names.push_back(c.name);
    out += fmt::format("keys:        {}\n", fmt::join(names, ", "));
  }
  if (!n.rules.empty()) out += fmt::format("rules:       {}\n", n.rules);
  if (f.parent != nullptr && !f.parent->rules.empty()) {
    out += fmt::format("rules of {}: {}\n", f.parentDotted, f.parent->rules);
  }
  return out;
}

}  // namespace

std::optional<std::string> explainText(std::string_view key) {
  const std::vector<std::string> path = segments(key);
  if (path.empty()) return std::nullopt;
  const std::vector<KeyNode> top = detail::documentKeys();
  const Found found = find(top, path);
  if (found.node == nullptr) return std::nullopt;
  return describe(found);
}

std::string nearestKey(std::string_view key) {
  const bool pointer = key.starts_with('/');
  std::string best;
  std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
  for (std::string known : knownKeyPaths()) {
    if (!pointer) {
      known.erase(0, 1);
      std::ranges::replace(known, '/', '.');
    }
    const std::size_t d = ::wheelbeat::cli::CommandLine::editDistance(key, known);
    if (d < bestDistance) {
      bestDistance = d;
      best = std::move(known);
    }
  }
  return best;
}

std::string missingKeyHint(std::string_view key) {
  const std::vector<std::string> path = segments(key);
  if (!path.empty()) {
    if (auto why = detail::leftOutSection(path.front())) return std::move(*why);
  }
  return "did you mean " + nearestKey(key) + "?";
}

std::string schemaText() { return detail::schemaText(); }

}  // namespace wheelbeat::config::cli
