// The non-template value codecs of the key tables (codecs.h).
#include "codecs.h"

#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

namespace wheelbeat::config::detail {
namespace {

constexpr std::string_view kSpace = " \t\r\n\v\f";
constexpr std::string_view kAnyEndpointExpected =
    R"("host:port" (IPv6: "[::1]:20880") with a port in 0..65535)";

Json durationRef() { return Json{{"$ref", "#/$defs/duration"}}; }

}  // namespace

bool DurationCodec::read(Errors& e, const Json& v, const std::string& p, nanoseconds& out,
                         const Context& /*c*/) const {
  return positive ? readPositiveDuration(e, v, p, out) : readDuration(e, v, p, out, min);
}

void DurationCodec::describe(KeyNode& node, nanoseconds defaults) const {
  node.schema = durationRef();
  node.type = "duration";
  node.rule = positive                ? std::string("a duration > 0")
              : min == nanoseconds(0) ? std::string("a duration")
                                      : fmt::format("a duration >= {}", formatDuration(min));
  node.defaultValue = durationJson(defaults);
}

bool MillisCodec::read(Errors& e, const Json& v, const std::string& p,
                       std::chrono::milliseconds& out, const Context& /*c*/) const {
  nanoseconds d{0};
  if (!readDuration(e, v, p, d)) return false;
  if (d % std::chrono::milliseconds(1) != nanoseconds(0)) {
    e.add(p, v, std::string(wholeExpected));
    return false;
  }
  out = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  return true;
}

void MillisCodec::describe(KeyNode& node, std::chrono::milliseconds defaults) const {
  node.schema = durationRef();
  node.type = "duration";
  node.rule = wholeExpected;
  node.defaultValue = durationJson(defaults);
}

bool NumberCodec::read(Errors& e, const Json& v, const std::string& p, double& out,
                       const Context& /*c*/) const {
  // JSON has no NaN or infinity, and a literal too large for a double is a parse error.
  return readNumber(e, v, p, out, positive ? std::numeric_limits<double>::denorm_min() : lo, hi,
                    expected);
}

void NumberCodec::describe(KeyNode& node, double defaults) const {
  node.schema = {{"type", "number"}};
  if (positive) {
    node.schema["exclusiveMinimum"] = 0;
  } else if (lo > std::numeric_limits<double>::lowest()) {
    node.schema["minimum"] = lo;
  }
  if (hi < std::numeric_limits<double>::max()) node.schema["maximum"] = hi;
  node.type = "number";
  node.rule = expected;
  node.defaultValue = Json(defaults);
}

bool BoolCodec::read(Errors& e, const Json& v, const std::string& p, bool& out,
                     const Context& /*c*/) const {
  return readBool(e, v, p, out);
}

void BoolCodec::describe(KeyNode& node, bool defaults) const {
  node.schema = {{"type", "boolean"}};
  node.type = "boolean";
  node.rule = "true or false";
  node.defaultValue = Json(defaults);
}

bool EndpointCodec::read(Errors& e, const Json& v, const std::string& p, net::Endpoint& out,
                         const Context& /*c*/) const {
  std::optional<net::Endpoint> parsed;
  if (v.is_string()) parsed = net::parseEndpoint(v.get_ref<const std::string&>());
  if (!parsed) {
    e.add(p, v, std::string(kAnyEndpointExpected));
    return false;
  }
  out = std::move(*parsed);
  return true;
}

void EndpointCodec::describe(KeyNode& node, const net::Endpoint& defaults) const {
  node.schema = {{"$ref", "#/$defs/endpoint"}};
  node.type = "endpoint";
  node.rule = kAnyEndpointExpected;
  node.defaultValue = write(defaults);
}

bool EndpointTextCodec::read(Errors& e, const Json& v, const std::string& p, std::string& out,
                             const Context& /*c*/) const {
  net::Endpoint where;
  if (!readEndpoint(e, v, p, where, minPort)) return false;
  out = formatEndpoint(where);
  return true;
}

void EndpointTextCodec::describe(KeyNode& node, const std::string& defaults) const {
  node.schema = {{"$ref", "#/$defs/endpoint"}};
  node.type = "endpoint";
  node.rule = endpointExpected(minPort);
  node.defaultValue = Json(defaults);
}

bool StringCodec::read(Errors& e, const Json& v, const std::string& p, std::string& out,
                       const Context& /*c*/) const {
  if (!v.is_string()) {
    e.add(p, v, "a string");
    return false;
  }
  out = v.get<std::string>();
  return true;
}

void StringCodec::describe(KeyNode& node, const std::string& defaults) const {
  node.schema = {{"type", "string"}};
  node.type = "string";
  node.rule = "a string";
  node.defaultValue = Json(defaults);
}

bool NameCodec::fits(const Json& v) const {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return (emptyOk || !s.empty()) && s.find_first_of(kSpace) == std::string::npos &&
         s.find_first_of(forbidden) == std::string::npos;
}

bool NameCodec::read(Errors& e, const Json& v, const std::string& p, std::string& out,
                     const Context& /*c*/) const {
  if (!fits(v)) {
    e.add(p, v, std::string(expected));
    return false;
  }
  out = v.get<std::string>();
  return true;
}

void NameCodec::describe(KeyNode& node, const std::string& defaults) const {
  // Whitespace and the forbidden characters, as a JSON Schema (ECMA-262) character class.
  std::string cls = "\\s";
  for (char c : forbidden)
    cls += (c == '/' || c == '?') ? std::string(1, c) : fmt::format("\\{}", c);
  node.schema = {{"type", "string"},
                 {"pattern", fmt::format("^[^{}]{}$", cls, emptyOk ? "*" : "+")}};
  node.type = "string";
  node.rule = expected;
  node.defaultValue = Json(defaults);
}

bool NameListCodec::read(Errors& e, const Json& v, const std::string& p,
                         std::vector<std::string>& out, const Context& c) const {
  if (!v.is_array()) {
    e.add(p, v, std::string(arrayExpected));
    return false;
  }
  std::vector<std::string> names(v.size());
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    ok = item.read(e, v[i], childPointer(p, i), names[i], c) && ok;
  }
  if (ok) out = std::move(names);
  return ok;
}

void NameListCodec::describe(KeyNode& node, const std::vector<std::string>& defaults) const {
  KeyNode items;
  item.describe(items, {});
  node.schema = {{"type", "array"}, {"items", items.schema}};
  node.type = "array of strings";
  node.rule = fmt::format("{}, each {}", arrayExpected, item.expected);
  node.defaultValue = Json(defaults);
}

namespace {

// The shared vocabulary (tasks/error_names.h): a name outside it would never match anything.
std::string knownErrorNamesText() {
  std::vector<std::string> quoted;
  quoted.reserve(tasks::errors::kAll.size());
  for (std::string_view name : tasks::errors::kAll) quoted.push_back(dumped(Json(name)));
  return fmt::format("an error name: one of {}", fmt::join(quoted, ", "));
}

}  // namespace

bool ErrorNamesCodec::read(Errors& e, const Json& v, const std::string& p,
                           std::vector<std::string>& out, const Context& /*c*/) const {
  if (!v.is_array()) {
    e.add(p, v, "an array of error names");
    return false;
  }
  std::vector<std::string> names;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Json& item = v[i];
    if (!item.is_string() || !tasks::errors::isKnown(item.get_ref<const std::string&>())) {
      e.add(childPointer(p, i), item, knownErrorNamesText());
      ok = false;
    } else {
      names.push_back(item.get<std::string>());
    }
  }
  if (ok) out = std::move(names);
  return ok;
}

void ErrorNamesCodec::describe(KeyNode& node, const std::vector<std::string>& defaults) const {
  node.schema = {{"type", "array"}, {"items", {{"$ref", "#/$defs/errorName"}}}};
  node.type = "array of error names";
  node.rule = fmt::format("an array, each {}", knownErrorNamesText());
  node.defaultValue = Json(defaults);
}

}  // namespace wheelbeat::config::detail
